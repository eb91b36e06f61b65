"""MemorySize, enforced on the worker's real memory, as Lambda does.

While a call is in flight the parent reads the worker's peak resident set size
(``VmHWM`` in ``/proc/<pid>/status``) on one timer shared by every busy worker of the
event loop. A worker over its function's MemorySize is reported and killed by its owner.
A call younger than half a step is not read yet (most calls end before their first read;
``VmHWM`` is the worker's lifetime peak, so a spike is still seen by a later, longer read).
Lambda counts the runtime too, so the interpreter and the imported libraries count.
Without ``/proc`` (macOS) nothing is measured.

A worker joins the watch once, for its life (``add``); a call only marks it busy (``Watched.busy_since``)
and makes sure the timer runs (``wake``), so the watch costs a call two attribute stores and a test.
"""
from __future__ import annotations

import asyncio
import os
import weakref
from typing import Optional, Protocol

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


class Watched(Protocol):
    """A worker as the watch sees it."""

    @property
    def pid(self) -> int: ...

    @property
    def memory_limit_kib(self) -> int: ...

    # The loop time its call in flight started at; None between calls.
    busy_since: Optional[float]

    def memory_exceeded(self, peak_kib: int) -> None:
        """Its call is over the limit (``peak_kib`` measured); told once, after which it is no longer watched."""


class MemoryWatch:
    INTERVAL_S = 0.02

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._watched: "weakref.WeakSet[Watched]" = weakref.WeakSet()  # a worker dropped unseen leaves by itself
        self.timer: Optional[asyncio.TimerHandle] = None  # None: asleep until a call wakes it

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> "MemoryWatch":
        watch = _WATCHES.get(loop)
        if watch is None:
            watch = _WATCHES[loop] = cls(loop)
        return watch

    def add(self, worker: Watched) -> None:
        """Watch ``worker``'s calls from now on (each one it marks busy)."""
        self._watched.add(worker)

    def remove(self, worker: Watched) -> None:
        self._watched.discard(worker)

    def wake(self) -> None:
        """A call started (its worker marked busy): read the busy workers every step until none is."""
        if self.timer is None:
            self.timer = self._loop.call_later(self.INTERVAL_S, self._tick)

    def _tick(self) -> None:
        self.timer = None
        young = self._loop.time() - self.INTERVAL_S / 2
        busy = False
        for worker in list(self._watched):
            since = worker.busy_since
            if since is None:
                continue
            busy = True
            if since > young:
                continue
            peak = peak_kib(worker.pid)
            if peak is not None and peak > worker.memory_limit_kib:
                self._watched.discard(worker)
                worker.memory_exceeded(peak)
        if busy:
            self.timer = self._loop.call_later(self.INTERVAL_S, self._tick)
