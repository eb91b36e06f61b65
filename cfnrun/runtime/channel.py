"""The parent's end of a worker's request/reply socket.

Requests and replies are length-prefixed JSON frames (see ``worker.encode_frame``) on one
Unix socket pair. The event loop reads the socket directly and hands each complete reply
to whoever awaits it, with no stream layer in between. ``receive`` first looks whether the
reply is there already (a fast handler sometimes has answered by the time ``send`` returns);
then a warm call costs one write and one read and no trip through the event loop. A socket pair
rather than two pipes: one fd for both directions, and on the development VM a cheaper
wakeup of the worker (docs/performance.md, "Where the time goes").
"""
from __future__ import annotations

import asyncio
import select
import socket
from collections import deque
from typing import Any, Deque, Dict, Optional, Union

from cfnrun.runtime.fd_reads import read_ready
from cfnrun.runtime.worker.protocol import FRAME_HEADER, decode_frame

Frame = Dict[str, Any]


class ChannelClosed(ConnectionError):
    """The worker's end is gone: it exited, crashed or was killed."""


class FrameChannel:
    CHUNK = 256 * 1024
    CHUNKS_PER_WAKEUP = 16  # a huge reply must not starve the loop's other work

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self._sock: Optional[socket.socket] = sock
        self._fd = sock.fileno()
        self._loop = asyncio.get_running_loop()
        self._chunk = memoryview(bytearray(self.CHUNK))  # reused: no big allocation per read
        self._inbox = bytearray()
        self._outbox = bytearray()  # what the socket has not taken yet
        self._frames: Deque[Frame] = deque()
        self._waiter: Optional["asyncio.Future[Frame]"] = None
        self._loop.add_reader(self._fd, self._on_readable)
        self._poll = select.poll() if hasattr(select, "poll") else None  # None: read and see
        if self._poll is not None:
            self._poll.register(self._fd, select.POLLIN)

    @property
    def closed(self) -> bool:
        return self._sock is None

    def send(self, frame: Union[bytes, bytearray]) -> None:
        """Queue an encoded frame; the loop writes what the socket does not take at once."""
        if self._sock is None:
            return  # the next receive reports the closed channel
        if not self._outbox:
            try:
                sent = self._sock.send(frame)
            except BlockingIOError:
                sent = 0
            except OSError:
                self.close()
                return
            if sent == len(frame):
                return
            self._loop.add_writer(self._fd, self._on_writable)
            self._outbox += memoryview(frame)[sent:]
            return
        self._outbox += frame

    async def receive(self) -> Frame:
        """The next reply frame; raises ChannelClosed when the worker's end is gone."""
        if not self._frames and self._sock is not None and (self._poll is None or self._poll.poll(0)):
            # A fast handler may have answered already: the kernel sometimes runs the woken worker
            # on this CPU right away. Reading now saves a trip through the loop; asking first (a
            # poll, no read) keeps the usual case, no answer yet, free of a failed read's exception.
            self._on_readable()
        if self._frames:
            return self._frames.popleft()
        if self._sock is None:
            raise ChannelClosed("the worker closed its channel")
        waiter = self._waiter = self._loop.create_future()
        try:
            return await waiter
        finally:
            self._waiter = None

    def close(self) -> None:
        if self._sock is None:
            return
        self._loop.remove_reader(self._fd)
        if self._outbox:
            self._loop.remove_writer(self._fd)
            self._outbox.clear()
        self._sock.close()
        self._sock = None
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(ChannelClosed("the worker closed its channel"))

    # -- loop callbacks ------------------------------------------------------------

    def _on_readable(self) -> None:
        sock = self._sock
        if sock is None:
            return
        # The first read here (a reply is one short read), the rest, if the chunk filled, by ``read_ready``.
        chunk = self._chunk
        try:
            size = sock.recv_into(chunk)
        except BlockingIOError:
            return
        except OSError:
            size = 0
        open_ = size > 0
        if open_:
            self._inbox += chunk[:size]
            if size == len(chunk):
                open_ = read_ready(sock.recv_into, chunk, self._inbox.extend, self.CHUNKS_PER_WAKEUP - 1)
        self._take_frames()
        if not open_:
            self.close()

    def _take_frames(self) -> None:
        inbox = self._inbox
        header = FRAME_HEADER.size
        while len(inbox) >= header:
            (size,) = FRAME_HEADER.unpack_from(inbox)
            end = header + size
            if len(inbox) < end:
                return
            frame = decode_frame(inbox[header:end])
            del inbox[:end]
            waiter = self._waiter
            if waiter is not None and not waiter.done():
                waiter.set_result(frame)
            else:
                self._frames.append(frame)

    def _on_writable(self) -> None:
        if self._sock is None:
            return
        try:
            sent = self._sock.send(self._outbox)
        except BlockingIOError:
            return
        except OSError:
            self.close()
            return
        del self._outbox[:sent]
        if not self._outbox:
            self._loop.remove_writer(self._fd)
