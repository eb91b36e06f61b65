"""The worker's log pipe, cut into one bounded record per invocation."""
from __future__ import annotations

import asyncio
import contextvars
import os
from typing import Callable, List, Optional

from cfnrun.runtime.fd_reads import read_ready

OutputTap = Callable[[bytes], None]
# Set by whoever awaits an invocation and wants the handler's output as it is written
# (cfnrun invoke's live view); the worker's log pipe feeds it for that call only.
OUTPUT_TAP: contextvars.ContextVar[Optional[OutputTap]] = contextvars.ContextVar("cfnrun_output_tap", default=None)
HEAD_LIMIT = 64 * 1024


class LogCapture:
    """A bounded record of one invocation's output: its head and its tail.

    A handler that floods stdout must neither exhaust memory nor hide the
    last lines before a crash, so the middle is dropped and counted.
    """

    def __init__(self, head_limit: int = HEAD_LIMIT, tail_limit: int = 192 * 1024) -> None:
        self.head = bytearray()  # empty: nothing captured (the tail fills only once the head is full)
        self._tail: List[bytes] = []
        self._tail_size = 0
        self._head_limit = head_limit
        self._tail_limit = tail_limit
        self.dropped = 0

    def write(self, data: bytes) -> None:
        room = self._head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self._tail.append(data)
        self._tail_size += len(data)
        while self._tail_size - len(self._tail[0]) >= self._tail_limit:
            self.dropped += len(self._tail[0])
            self._tail_size -= len(self._tail[0])
            self._tail.pop(0)

    def text(self) -> str:
        tail = b"".join(self._tail)
        excess = self._tail_size - self._tail_limit
        if excess > 0:
            tail = tail[excess:]
            dropped = self.dropped + excess
        else:
            dropped = self.dropped
        head = self.head.decode("utf-8", "replace")
        if not dropped:
            return head + tail.decode("utf-8", "replace")
        return (
            head
            + f"\n[cfnrun: {dropped} bytes of output omitted]\n"
            + tail.decode("utf-8", "replace")
        )


class LogPipe:
    """The parent's end of a worker's log pipe (the worker's fds 1 and 2).

    The event loop reads it as output arrives, so a chatty handler never blocks on a
    full pipe; ``take`` first drains whatever is already in the pipe. Since a worker
    flushes its output before it replies, taking the logs right after a reply returns
    exactly that invocation's output, with no extra round trip. A reply that says the
    pipe held nothing unread when it left (``unread``: 0) spares that read: what the call
    wrote is already here. However a worker ends, ``drain_and_close`` reads every byte left.
    """

    CHUNK = 65536
    CHUNKS_PER_WAKEUP = 16  # a flood must not starve the event loop (and its deadline timers)

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd: Optional[int] = fd
        self._chunk = memoryview(bytearray(self.CHUNK))  # reused: no big allocation per read
        self._capture = LogCapture()
        self.tap: Optional[OutputTap] = None  # sees every chunk as it arrives, besides the capture
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(fd, self._read, self.CHUNKS_PER_WAKEUP)

    def _read(self, limit: Optional[int] = None) -> None:
        fd = self._fd
        if fd is not None and not read_ready(lambda buffer: os.readv(fd, [buffer]), self._chunk, self._keep, limit):
            self.close()

    def _keep(self, chunk: memoryview) -> None:
        data = bytes(chunk)
        self._capture.write(data)
        if self.tap is not None:
            self.tap(data)

    def take(self, read: bool = True) -> str:
        """Everything written since the last ``take``; ``read``: False when the pipe is known to hold none of it."""
        if read:
            self._read(limit=self.CHUNKS_PER_WAKEUP * 4)
        if not self._capture.head:  # nothing captured: a plain test, no property call (a no-op call's usual case)
            return ""
        capture, self._capture = self._capture, LogCapture()
        return capture.text()

    def drain_and_close(self) -> None:
        """Keep what the pipe holds now and close it, without waiting for its writers to let go."""
        self._read(limit=self.CHUNKS_PER_WAKEUP * 4)  # bounded: an escaped writer may still be flooding
        self.close()

    def close(self) -> None:
        if self._fd is not None:
            self._loop.remove_reader(self._fd)
            os.close(self._fd)
            self._fd = None
