"""An operation's clock that can be told to stop: its waits between invocations end early, and the operation
invokes its handler no more (the invocation in flight, if any, finishes first).

Cloud Control's CancelResourceRequest cancels one request's clock; serve stopping cancels every clock
``Stopping`` handed out (Cloud Control's requests and the stacks' resource operations of every kind: a type's handlers,
a custom resource waiting for its function's answer, an AWS::* resource or a nested stack polled until it settles), and
any it hands out afterwards is cancelled from its start. ``wait_for`` is the wait of an answer that is not a sleep (a
custom resource's response): it ends the moment the clock is cancelled.
"""
from __future__ import annotations

import asyncio
from typing import Awaitable, Optional, TypeVar
from weakref import WeakSet

from cfnrun.invoker.clock import RealClock


T = TypeVar("T")


class CancelRequested(Exception):
    """The operation was cancelled (CancelResourceRequest, serve stopping): it is not invoked again."""


class CancellableClock(RealClock):
    """The operation's clock, whose waits between invocations end early on cancel."""

    def __init__(self, base: RealClock) -> None:
        self.base = base
        self.virtual = base.virtual
        self.cancelled = asyncio.Event()
        self.why = ""  # what cancelled it, for the operation's record

    def cancel(self, why: str) -> None:
        self.why = why
        self.cancelled.set()

    def now(self) -> float:
        return self.base.now()

    async def sleep(self, seconds: float) -> None:
        if not self.cancelled.is_set():
            if self.virtual:
                await self.base.sleep(seconds)
            else:
                try:
                    await asyncio.wait_for(self.cancelled.wait(), timeout=max(0.0, seconds))
                except asyncio.TimeoutError:
                    pass
        if self.cancelled.is_set():
            raise CancelRequested(self.why)

    async def wait_for(self, answer: "Awaitable[T]", timeout: Optional[float]) -> T:
        """``answer``'s result; CancelRequested the moment the clock is cancelled, asyncio.TimeoutError after ``timeout`` s
        (``answer`` is cancelled then: shield it to keep it)."""
        if self.cancelled.is_set():
            raise CancelRequested(self.why)
        task = asyncio.ensure_future(answer)
        cancel = asyncio.ensure_future(self.cancelled.wait())
        try:
            done, _ = await asyncio.wait({task, cancel}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancel.cancel()
            if not task.done():
                task.cancel()
        if task in done:
            return task.result()
        if self.cancelled.is_set():
            raise CancelRequested(self.why)
        raise asyncio.TimeoutError


class Stopping:
    """The clocks of a serve's operations, all cancelled the moment serve is told to stop."""

    def __init__(self) -> None:
        self.why: Optional[str] = None  # set once serve stops
        self._clocks: "WeakSet[CancellableClock]" = WeakSet()

    def clock(self, base: RealClock) -> CancellableClock:
        clock = CancellableClock(base)
        if self.why is not None:
            clock.cancel(self.why)
        self._clocks.add(clock)
        return clock

    def stop(self, why: str) -> None:
        self.why = why
        for clock in list(self._clocks):
            clock.cancel(why)
