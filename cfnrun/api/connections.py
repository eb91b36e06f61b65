"""Connection admission for the endpoint: every caller gets an answer, and slow ones cannot crowd out the rest.

- **A header deadline.** aiohttp waits forever for a request's headers, so a client that
  sends a byte now and then (slow-loris) would hold its connection for good. Each connection
  has ``header_timeout_s`` from its first byte to the end of a request's headers.
- **At most ``max_connections`` are served at once.** One more is still accepted, never closed
  unanswered: it waits, its bytes unread, until a place is free (``_Phase.WAITING``).
- **Under pressure, slow-loris makes room.** While callers wait, a connection that began
  its headers and is still sending them ``header_grace_s`` later (a real client sends them
  in one packet; slow-loris sends a byte a second) is closed, oldest first. It has no request
  in progress, so nothing is lost: one whose socket holds bytes the server has not read yet
  (a request that arrived while a busy loop had not got to it) is not closed. A connection
  that has sent nothing yet is never closed to make room: in a burst on a loaded machine a
  caller connects and is descheduled before it writes its request (its client may be busy
  opening a thousand more), and a request lost that way cannot be told from one never sent;
  the header deadline bounds it.
- **A kept-alive connection is never closed to make room.** Its client may be sending its
  next request at that very moment (on a loaded machine it checked the connection and was
  then descheduled), and a request lost that way cannot be told from a request never sent:
  botocore without retries raises ConnectionClosedError. A connection idle between two
  requests holds no place, so one kept alive never keeps a caller waiting (it is closed
  after ``idle_timeout_s`` as ever); its next request takes a place if one is free and no
  one waits, else it waits for one in turn with the new callers (``_Phase.QUEUED``: its
  bytes held, the rest unread, aiohttp's idle close disarmed, since a request waits). So the
  connection stays open, and its client need not open a new one for each call (while callers
  waited, every answer used to say ``Connection: close``: past the cap, each call cost a new
  connection on both sides).
- **A caller that waited ``queue_wait_s``** (every place busy with calls running) is let in
  anyway and its request answered 429 TooManyRequestsException, as Lambda answers a throttled
  call; boto3 retries those.

A call's own run time is not limited here: once its headers are in, it may take as long as
its function allows.
"""
from __future__ import annotations

import asyncio
import collections
import enum
import fcntl
import struct
import termios
import time
from typing import Deque, Dict, Optional

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from cfnrun.api.limits import ConnectionLimits as ConnectionLimits  # its home is light, for the command line


RECHECK_S = 0.01  # the soonest a waiting caller's place is looked for again
QUEUE_TIMER_SLACK_S = 0.001  # a caller this close to its queue_wait_s when the queue's timer fires is let in with those due
# Connections the kernel completes before the loop accepts them (it caps this at net.core.somaxconn). aiohttp's 128
# overflows when a thousand callers connect at once while the loop is busy: the kernel then drops their handshakes,
# and each dropped one waits a second or more to try again.
LISTEN_BACKLOG = 1024


class _Phase(enum.Enum):
    WAITING = "waiting"  # accepted, not yet admitted: nothing is read from it
    HEADERS = "headers"  # admitted, its next request's headers not complete
    CALL = "call"  # a request in progress (its headers are in, even if its handler has not started yet)
    IDLE = "idle"  # kept alive between two requests
    QUEUED = "queued"  # kept alive, its next request in while every place was taken: waits for one, the rest unread


def _holds_place(phase: _Phase) -> bool:
    """Whether a connection in ``phase`` holds one of the ``max_connections`` places (compared by identity: an enum
    member's hash is a Python call, and ``_enter`` asks twice per request)."""
    return phase is _Phase.HEADERS or phase is _Phase.CALL


class _GuardedConnection(asyncio.Protocol):
    """Passes everything to aiohttp's protocol once admitted; closes the connection at a missed header deadline."""

    def __init__(self, guard: "ConnectionGuard", inner: RequestHandler) -> None:
        self.guard = guard
        self.inner = inner
        self.transport: Optional[asyncio.Transport] = None
        self.phase = _Phase.WAITING
        self.since = time.monotonic()  # when the current phase began
        self.throttled = False  # let in past the cap after waiting too long: answered 429, and closed
        self._held = b""  # while QUEUED: what arrived of its next request
        self.admitted = False  # handed to aiohttp
        self.placed = False  # among the guard's ``open`` ones: its phase is counted there
        self._tail = b""  # the last bytes of the headers so far, to see their end across reads
        self.heard = False  # some bytes of the current phase's request arrived (a silent connection is never evicted)
        self._deadline: Optional[asyncio.TimerHandle] = None
        self.waiting_since = 0.0  # the loop's time it last began to wait for a place (WAITING, QUEUED)

    # -- asyncio's side --------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.guard.arrived(self)

    def data_received(self, data: bytes) -> None:
        if self.phase is _Phase.IDLE:
            guard = self.guard
            if guard.waiting or guard.serving >= guard.limits.max_connections:
                guard.queue(self, data)  # every place taken, or callers wait: its turn comes after theirs
                return
            if b"\r\n\r\n" in data:  # the usual case: the next request's headers whole in one read, no deadline to arm
                self._enter(_Phase.CALL)
                self.inner.data_received(data)
                return
            self._enter(_Phase.HEADERS)  # the first bytes of the next request on a kept-alive connection
            self._arm()
        first_bytes = self.phase is _Phase.HEADERS and not self.heard
        if self.phase is _Phase.HEADERS:
            # Its headers are in once their blank line is: from then on it is a call, never made to
            # room for others, even while a busy loop has not yet started its handler.
            if b"\r\n\r\n" in data or b"\r\n\r\n" in self._tail + data[:3]:
                self._enter(_Phase.CALL)
                self._disarm()  # the header deadline is met
            else:
                self._tail = (self._tail + data)[-3:]
                if not self.heard:
                    self.heard = True  # from now on it may be closed to make room, once past the grace
                    if self.placed:
                        self.guard.evictable[self] = None
        self.inner.data_received(data)
        if first_bytes and self.phase is _Phase.HEADERS and self.guard.waiting:
            self.guard.room_changed()  # a connection that began its headers may make room once past the grace: look then

    def eof_received(self) -> None:
        if self.admitted:
            self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self._disarm()
        self.guard.left(self)
        if self.admitted:
            self.inner.connection_lost(exc)

    # -- the guard's side --------------------------------------------------------

    def admit(self, throttled: bool = False) -> None:
        """Hand the connection to aiohttp and start reading it."""
        assert self.transport is not None
        self.throttled = throttled
        self.admitted = True
        self._enter(_Phase.HEADERS)
        self._arm()
        self.inner.connection_made(self.transport)
        self.transport.resume_reading()

    def hold(self, data: bytes) -> None:
        """Its next request waits for a place: the bytes that came kept, the rest unread, until ``resume``."""
        assert self.transport is not None
        self._held = data
        self._enter(_Phase.QUEUED)
        self.transport.pause_reading()
        self.inner.keep_alive(True)  # aiohttp's close of an idle connection disarmed: a request waits here (re-armed after it)

    def resume(self, throttled: bool) -> None:
        """Its held request goes on, in a place (or past the cap, ``throttled``, to be answered 429)."""
        assert self.transport is not None
        self.throttled = throttled
        data, self._held = self._held, b""
        if b"\r\n\r\n" in data:
            self._enter(_Phase.CALL)
        else:  # its headers begun, not ended: timed as any, and it may make room once past the grace
            self._enter(_Phase.HEADERS)
            self._arm()
            self._tail = data[-3:]
            self.heard = True
            self.guard.evictable[self] = None
        self.inner.data_received(data)
        self.transport.resume_reading()

    def wait(self) -> None:
        """Hold the connection unread until ``admit``."""
        assert self.transport is not None
        self.transport.pause_reading()

    def evict(self) -> None:
        """Close a connection with no request in progress, to make room for a waiting caller."""
        if self.transport is not None:
            self.transport.abort()

    def request_started(self) -> None:
        self._enter(_Phase.CALL)
        self._disarm()

    def request_finished(self) -> None:
        self._enter(_Phase.IDLE)
        if self.guard.waiting:  # a caller waits: its place is free for them
            self.guard.room_changed()

    def evictable_at(self, grace_s: float) -> Optional[float]:
        """When this connection may be closed for a waiting caller (None: it is busy, idle or waiting itself)."""
        if self.phase is _Phase.HEADERS and self.heard:
            return self.since + grace_s
        return None  # silent ones too (their client may be about to send); idle ones too: its client may be sending its next request as it would be closed

    def has_unread_bytes(self) -> bool:
        """Bytes wait in its socket that the loop has not handed to ``data_received`` yet: on a busy machine, a request
        that arrived on a kept-alive (or just admitted) connection. Closing it then would lose that request."""
        sock = self.transport.get_extra_info("socket") if self.transport is not None else None
        if sock is None:
            return False
        try:
            unread: int = struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]
        except OSError:
            return False
        return unread > 0

    def _enter(self, phase: _Phase) -> None:
        was, self.phase = self.phase, phase
        if phase is not _Phase.CALL:  # only a connection that serves no one is timed, to make room
            self.since = time.monotonic()
        self._tail = b""
        if self.placed:  # the guard's counts follow, so it never looks through every connection
            guard = self.guard
            guard.serving += (phase is _Phase.HEADERS or phase is _Phase.CALL) - (was is _Phase.HEADERS or was is _Phase.CALL)  # _holds_place, inline
            if self.heard:
                guard.evictable.pop(self, None)
        self.heard = False

    def _arm(self) -> None:
        self._disarm()
        self._deadline = asyncio.get_running_loop().call_later(self.guard.limits.header_timeout_s, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        self.guard.timed_out += 1
        if self.transport is not None:
            self.transport.abort()


class ConnectionGuard:
    """Admits connections up to the limits. Each of its steps costs the same however many connections are open: it
    counts the ones that hold a place (``serving``) and keeps those that may be closed to make room (``evictable``:
    still sending headers they began), rather than looking through every open connection on each arrival, answer or
    departure while callers wait (which, with every place taken and callers waiting, made each call's cost grow with
    ``max_connections``)."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.open: Dict[RequestHandler, _GuardedConnection] = {}  # admitted: aiohttp reads them
        self.serving = 0  # the open ones that hold a place (``_holds_place``): not those idle or queued between two requests
        self.evictable: Dict[_GuardedConnection, None] = {}  # the open ones still sending headers they began (``heard``)
        self.waiting: Deque[_GuardedConnection] = collections.deque()
        self.throttled = 0
        self.timed_out = 0
        self._recheck: Optional[asyncio.TimerHandle] = None
        # One timer for the whole queue, due when its first caller has waited ``queue_wait_s`` (all wait as long, first
        # come first served), rather than one made and cancelled per waiting caller.
        self._queue_timer: Optional[asyncio.TimerHandle] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None

    def protocol_factory(self, server: web.Server) -> "asyncio.Protocol":
        return _GuardedConnection(self, server())

    # -- what the connections report -------------------------------------------

    def arrived(self, connection: _GuardedConnection) -> None:
        if self.serving < self.limits.max_connections and not self.waiting:
            self._admit(connection)
            return
        connection.wait()
        self._enqueue(connection)
        self.room_changed()

    def left(self, connection: _GuardedConnection) -> None:
        if connection.placed:
            self._unplace(connection)
        if connection.phase is _Phase.WAITING or connection.phase is _Phase.QUEUED:
            try:
                self.waiting.remove(connection)
            except ValueError:
                pass
        self.room_changed()

    def queue(self, connection: _GuardedConnection, data: bytes) -> None:
        """A kept-alive connection's next request came while every place was taken or callers waited: it waits for one."""
        connection.hold(data)
        self._enqueue(connection)
        self.room_changed()

    def room_changed(self) -> None:
        """Let waiting callers in: into free places, then into places of connections that serve no one."""
        if self._recheck is not None:
            self._recheck.cancel()
            self._recheck = None
        while self.waiting:
            if self.serving >= self.limits.max_connections and not self._evict_one():
                break
            self._admit(self.waiting.popleft())
        if self.waiting:
            self._recheck_when_evictable()

    # -- what the HTTP layer reports ---------------------------------------------

    def request_started(self, request: web.BaseRequest) -> bool:
        """A request's headers are in; whether to answer it 429 (its connection was let in past the cap)."""
        connection = self.open.get(request.protocol)
        if connection is None:
            return False
        connection.request_started()
        return connection.throttled

    def request_finished(self, request: web.BaseRequest) -> None:
        """A request's handler is done: its place goes to the first caller waiting, if one does."""
        connection = self.open.get(request.protocol)
        if connection is not None:
            connection.request_finished()

    # -- pieces ----------------------------------------------------------------------

    def _enqueue(self, connection: _GuardedConnection) -> None:
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        connection.waiting_since = loop.time()
        self.waiting.append(connection)
        if self._queue_timer is None:
            self._queue_timer = loop.call_at(connection.waiting_since + self.limits.queue_wait_s, self._waited_too_long)

    def _waited_too_long(self) -> None:
        """Every place stayed busy with calls: those that waited ``queue_wait_s`` are let in, to be answered 429 as
        Lambda throttles. The timer was set for the queue's first caller then; if that one got a place meanwhile, it
        is set again for the first now."""
        self._queue_timer = None
        loop = self._loop
        assert loop is not None
        due = loop.time() - self.limits.queue_wait_s + QUEUE_TIMER_SLACK_S
        while self.waiting and self.waiting[0].waiting_since <= due:
            self.throttled += 1
            self._admit(self.waiting.popleft(), throttled=True)
        if self.waiting:
            self._queue_timer = loop.call_at(self.waiting[0].waiting_since + self.limits.queue_wait_s, self._waited_too_long)

    def _admit(self, connection: _GuardedConnection, throttled: bool = False) -> None:
        if connection.phase is _Phase.QUEUED:  # a kept-alive connection's next request
            connection.resume(throttled)
            return
        self.open[connection.inner] = connection
        connection.placed = True  # from WAITING: it holds a place once admit() has it sending headers
        connection.admit(throttled)

    def _unplace(self, connection: _GuardedConnection) -> None:
        del self.open[connection.inner]
        connection.placed = False
        if _holds_place(connection.phase):
            self.serving -= 1
        self.evictable.pop(connection, None)

    def _evict_one(self) -> bool:
        """Close the connection that has been sending its headers longest, past the grace; False if none may go."""
        now = time.monotonic()
        grace = self.limits.header_grace_s
        candidates = [
            (at, connection)
            for connection in self.evictable
            for at in [connection.evictable_at(grace)]
            if at is not None and at <= now and not connection.has_unread_bytes()
        ]
        if not candidates:
            return False
        _, chosen = min(candidates, key=lambda candidate: candidate[0])
        self._unplace(chosen)
        chosen.evict()
        return True

    def _recheck_when_evictable(self) -> None:
        times = [at for at in (c.evictable_at(self.limits.header_grace_s) for c in self.evictable) if at is not None]
        if times:
            # Not at once when the due one was spared for its unread bytes: the loop reads them first.
            delay = max(RECHECK_S, min(times) - time.monotonic())
            self._recheck = asyncio.get_running_loop().call_later(delay, self.room_changed)


class GuardedTCPSite(web.BaseSite):
    """aiohttp's TCP site, with every connection under a ``ConnectionGuard``."""

    __slots__ = ("_host", "_port", "_guard")

    def __init__(self, runner: web.BaseRunner, host: str, port: int, guard: ConnectionGuard) -> None:
        super().__init__(runner)
        self._host = host
        self._port = port
        self._guard = guard

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None
        self._server = await asyncio.get_running_loop().create_server(
            lambda: self._guard.protocol_factory(server), self._host, self._port, backlog=max(self._backlog, LISTEN_BACKLOG)
        )
