"""Time as the invoker sees it: real, or virtual (waits are skipped but still counted)."""
from __future__ import annotations

import asyncio
import time


class RealClock:
    virtual = False

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class VirtualClock(RealClock):
    """Skips CallbackDelaySeconds waits yet accounts them against the deadline.

    Handler run time is real and counted as it passes; only the waits between
    invocations are virtual, so a two-hour stabilization replays in seconds.
    """

    virtual = True

    def __init__(self) -> None:
        self._skipped = 0.0

    def now(self) -> float:
        return time.monotonic() + self._skipped

    async def sleep(self, seconds: float) -> None:
        self._skipped += max(0.0, seconds)
        await asyncio.sleep(0)
