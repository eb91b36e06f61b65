"""The fds a worker starts with, as the parent set them: the channel on fd 0, the log pipe on fds 1 and 2.

The channel moves to a private fd at once, so the handler's own reads of stdin see nothing;
``sys.stdout`` and ``sys.stderr`` both write straight to the log pipe, so the parent sees
print(), logging, C-level writes and crash dumps in the order they happened. A handler that
closes or replaces either retires its worker (``Channel.usable``, ``LogFds.broken``).
With each reply the worker tells how much output the parent has still to read (``LogFds.unread``),
so after a call that printed nothing the parent does not read the pipe at all.
"""
from __future__ import annotations

import io
import os
import socket
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

from .protocol import FRAME_HEADER, decode_frame


class ChannelDisabled(Exception):
    """This process is a fork of the worker: only the worker itself may use the channel."""


def fd_identity(fd: int) -> Optional[Tuple[int, int]]:
    """What an fd refers to: its (device, inode), which tells one pipe, socket or file from every other; None when it is closed.

    An fstat, not a readlink of /proc/self/fd: the readlink resolves a path through /proc and cost 3.5 µs on the
    development VM against 1.3 µs for the fstat and the tuple (measured 2026-11-27), twice after every call."""
    try:
        status = os.fstat(fd)
    except OSError:
        return None
    return (status.st_dev, status.st_ino)


# Linux's SO_COOKIE (asm-generic numbering, recent kernels): a number the kernel gives each socket, never reused while the system
# runs. Reading it costs about half an fstat; ``_cookie`` checks the option means that here.
_SO_COOKIE = 57


def _cookie(sock: socket.socket) -> Optional[bytes]:
    """``sock``'s SO_COOKIE where the kernel tells one socket from another by it; None where it does not."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        own = sock.getsockopt(socket.SOL_SOCKET, _SO_COOKIE, 8)
        left, right = socket.socketpair()
        try:
            others = {left.getsockopt(socket.SOL_SOCKET, _SO_COOKIE, 8), right.getsockopt(socket.SOL_SOCKET, _SO_COOKIE, 8)}
        finally:
            left.close()
            right.close()
    except OSError:
        return None
    if len(others) < 2 or own in others or sock.getsockopt(socket.SOL_SOCKET, _SO_COOKIE, 8) != own:
        return None
    return own


class Channel:
    """The worker's end of the request/reply socket (blocking).

    Only the worker process itself talks on it. A handler that forks leaves a child
    holding a copy of the socket; in that child the channel is disabled at once (its fd
    closed), so the child can neither take the next request nor send a reply frame.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._requests: io.BufferedReader = sock.makefile("rb")  # buffered: a read returns all it asked for
        self.owner = os.getpid()
        self._fd = sock.fileno()  # its number never changes while the worker owns it
        self.identity = fd_identity(self._fd)
        self._cookie = _cookie(sock)  # None: told by ``identity``
        os.register_at_fork(after_in_child=self._disable)

    @property
    def fileno(self) -> int:
        return self._sock.fileno()

    def _disable(self) -> None:
        if os.getpid() == self.owner:
            return
        fd = self._sock.fileno()
        self._sock.detach()  # the fd's number may be reused later in the child; close it exactly once
        try:
            os.close(fd)
        except OSError:
            pass

    def usable(self) -> bool:
        """Still the worker's own socket: not forked away, not closed or replaced by the handler."""
        if os.getpid() != self.owner:
            return False
        if self._cookie is None:
            return fd_identity(self._fd) == self.identity
        try:  # whatever now holds the fd's number: another socket has another cookie, anything else has none
            return self._sock.getsockopt(socket.SOL_SOCKET, _SO_COOKIE, 8) == self._cookie
        except OSError:
            return False

    def read_frame(self) -> Dict[str, Any]:
        """The next request; EOFError when the parent has closed its end."""
        if os.getpid() != self.owner:
            raise ChannelDisabled
        return self.next_frame()

    def next_frame(self) -> Dict[str, Any]:
        """``read_frame`` without asking which process this is: for a caller that has just made sure (``usable``),
        with no handler code run since. A call then asks the kernel for its process id once, not three times."""
        header = self._requests.read(FRAME_HEADER.size)
        if len(header) < FRAME_HEADER.size:
            raise EOFError
        (size,) = FRAME_HEADER.unpack(header)
        body = self._requests.read(size)
        if len(body) < size:
            raise EOFError
        return decode_frame(body)

    def waiting(self) -> bool:
        """Whether a request (or the start of one) has arrived and is not read yet; never blocks."""
        self._sock.setblocking(False)
        try:
            return bool(self._requests.peek(1))  # b"" when nothing came (or at EOF)
        except OSError:
            return False
        finally:
            self._sock.setblocking(True)

    def write_frame(self, frame: bytes) -> None:
        if os.getpid() != self.owner:
            raise ChannelDisabled
        self.send(frame)

    def send(self, frame: bytes) -> None:
        """``write_frame`` for a caller that has just made sure this is the worker's own process (``usable``)."""
        self._sock.sendall(frame)


def take_over_fds() -> Channel:
    """Keep the protocol on a private fd; leave fd 0 reading nothing."""
    channel = Channel(socket.socket(fileno=os.dup(0)))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(os.devnull)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0), write_through=True)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", buffering=0), write_through=True)
    _UNBUFFERED[:] = [sys.stdout, sys.stderr]
    return channel


# The worker's own sys.stdout and sys.stderr (``take_over_fds``): each write goes straight to the pipe.
_UNBUFFERED: List[io.TextIOWrapper] = []
_NOTHING = bytes(4)


def _pipe_count() -> Optional[Callable[[int], int]]:
    """``count(fd)``: the bytes a pipe holds that its reader has not read yet (Linux's FIONREAD, asked of either
    end; OSError where it cannot be); None where that cannot be asked."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import fcntl
        import termios
    except ImportError:
        return None
    request, ioctl, order = termios.FIONREAD, fcntl.ioctl, sys.byteorder
    return lambda fd: int.from_bytes(ioctl(fd, request, _NOTHING), order)


class LogFds:
    """The worker's fds 1 and 2 as they were at start: the parent's log pipe."""

    def __init__(self) -> None:
        self.identity = (fd_identity(1), fd_identity(2))
        self._count = _pipe_count()
        self._own: List[Optional[io.TextIOWrapper]] = list(_UNBUFFERED) or [None, None]

    def flush(self) -> None:
        """Put what the handler wrote to ``sys.stdout``/``sys.stderr`` into the pipe. The worker's own streams
        hold nothing back (unless the handler reconfigured them); others (the handler's own) are flushed."""
        own_stdout, own_stderr = self._own
        if sys.stdout is not own_stdout or not own_stdout.write_through:
            sys.stdout.flush()
        if sys.stderr is not own_stderr or not own_stderr.write_through:
            sys.stderr.flush()

    def unread(self) -> Optional[int]:
        """The bytes of output in the log pipe that the parent has not read yet; None when this cannot be told.

        Asked after ``flush`` and once ``broken`` found fd 1 still the pipe: 0 means all this call wrote is read.
        """
        if self._count is None:
            return None
        try:
            return self._count(1)
        except OSError:
            return None

    def broken(self) -> List[str]:
        """The names of the log fds the handler closed or pointed elsewhere (checked after every call)."""
        now = (fd_identity(1), fd_identity(2))
        if now == self.identity:  # the usual case: nothing more to build
            return []
        names = ("stdout (fd 1)", "stderr (fd 2)")
        return [name for name, was, is_ in zip(names, self.identity, now) if was != is_]
