"""The worker's log pipe, cut into one bounded record per invocation."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional


class LogCapture:
    """A bounded record of one invocation's output: its head and its tail.

    A handler that floods stdout must neither exhaust memory nor hide the
    last lines before a crash, so the middle is dropped and counted.
    """

    def __init__(self, head_limit: int = 64 * 1024, tail_limit: int = 192 * 1024) -> None:
        self._head = bytearray()
        self._tail: List[bytes] = []
        self._tail_size = 0
        self._head_limit = head_limit
        self._tail_limit = tail_limit
        self.dropped = 0

    def write(self, data: bytes) -> None:
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
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
        head = self._head.decode("utf-8", "replace")
        if not dropped:
            return head + tail.decode("utf-8", "replace")
        return (
            head
            + f"\n[cfnrun: {dropped} bytes of output omitted]\n"
            + tail.decode("utf-8", "replace")
        )


@dataclass
class LogSplitter:
    """Splits the worker's log pipe at end-of-invocation markers."""

    marker_prefix: bytes
    pending: bytearray = field(default_factory=bytearray)

    def feed(self, data: bytes) -> "List[tuple[bytes, Optional[str]]]":
        """Return (output, marker) pairs; marker is None for output still in progress."""
        self.pending += data
        pieces: "List[tuple[bytes, Optional[str]]]" = []
        while True:
            at = self.pending.find(self.marker_prefix)
            if at < 0:
                keep = len(self.marker_prefix) - 1
                cut = max(0, len(self.pending) - keep)
                # keep a possible marker start, unless it cannot be one
                if cut and self.pending[cut:].find(self.marker_prefix[:1]) < 0:
                    cut = len(self.pending)
                if cut:
                    pieces.append((bytes(self.pending[:cut]), None))
                    del self.pending[:cut]
                return pieces
            end = self.pending.find(b"\n", at)
            if end < 0:
                if at:
                    pieces.append((bytes(self.pending[:at]), None))
                    del self.pending[:at]
                return pieces
            marker = self.pending[at + len(self.marker_prefix) : end].decode("ascii", "replace")
            pieces.append((bytes(self.pending[:at]), marker))
            del self.pending[: end + 1]

    def flush(self) -> bytes:
        rest = bytes(self.pending)
        self.pending.clear()
        return rest
