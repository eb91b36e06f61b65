"""MemorySize, enforced on the worker's real memory, as Lambda does.

While a call is in flight the parent reads the worker's peak resident set size
(``VmHWM`` in ``/proc/<pid>/status``) on one timer shared by every busy worker of the
event loop. A worker over its function's MemorySize is reported and killed by its owner.
A call younger than half a step is not read yet (most calls end before their first read;
``VmHWM`` is the worker's lifetime peak, so a spike is still seen by a later, longer read).
Lambda counts the runtime too, so the interpreter and the imported libraries count.
Without ``/proc`` (macOS) nothing is measured.
"""
from __future__ import annotations

import asyncio
import os
import weakref
from typing import Callable, Dict, Optional, Tuple

Exceeded = Callable[[int], None]  # called once with the measured peak, in KiB

_WATCHES: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, MemoryWatch]" = weakref.WeakKeyDictionary()


def peak_kib(pid: int) -> Optional[int]:
    """The process's peak resident set size so far, in KiB; None if it cannot be read."""
    try:  # one read() of the whole file: half the CPU of a buffered, line-by-line read
        fd = os.open(f"/proc/{pid}/status", os.O_RDONLY)
        try:
            status = os.read(fd, 16384)
        finally:
            os.close(fd)
        start = status.index(b"VmHWM:") + 6
        return int(status[start : status.index(b"kB", start)])
    except (OSError, ValueError):
        return None


class MemoryWatch:
    INTERVAL_S = 0.02

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._watched: Dict[int, Tuple[int, Exceeded, float]] = {}  # pid -> (limit KiB, exceeded, since)
        self._timer: Optional[asyncio.TimerHandle] = None

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> "MemoryWatch":
        watch = _WATCHES.get(loop)
        if watch is None:
            watch = _WATCHES[loop] = cls(loop)
        return watch

    def watch(self, pid: int, limit_mb: int, exceeded: Exceeded) -> None:
        self._watched[pid] = (limit_mb * 1024, exceeded, self._loop.time())
        if self._timer is None:
            self._timer = self._loop.call_later(self.INTERVAL_S, self._tick)

    def unwatch(self, pid: int) -> None:
        self._watched.pop(pid, None)

    def _tick(self) -> None:
        self._timer = None
        young = self._loop.time() - self.INTERVAL_S / 2
        for pid, (limit_kib, exceeded, since) in list(self._watched.items()):
            if since > young:
                continue
            peak = peak_kib(pid)
            if peak is not None and peak > limit_kib:
                del self._watched[pid]
                exceeded(peak)
        if self._watched:
            self._timer = self._loop.call_later(self.INTERVAL_S, self._tick)
