"""What a call in flight reports: a running tick every second and, once it is a long call, its output as it comes.

A fast call says nothing while it runs, so its output is shown once, with its answer.
A call still running after the first tick becomes a long call: the complete lines the
handler wrote so far are reported, then each new line as it arrives (up to the log
capture's head, so a flood cannot swamp the screen; the rest comes with the answer).

One timer per event loop ticks every call in flight, rather than a timer per call: a
fast call schedules and cancels nothing, and a thousand calls queued for a worker wake
the loop once a second, not a thousand times. A call's first tick comes when it is
between one and two ticks old, then one every tick.
"""
from __future__ import annotations

import asyncio
import codecs
import time
import weakref
from typing import Callable, Dict, List, Optional

from cfnrun.events.operation import InvocationOutput, InvocationRunning, OperationEvent
from cfnrun.runtime.logs import HEAD_LIMIT, OUTPUT_TAP

RUNNING_TICK_S = 1.0


class _Ticker:
    """The calls in flight on one event loop, and the one timer that ticks them."""

    def __init__(self) -> None:
        self._calls: Dict["RunningCall", None] = {}  # in the order they started
        self._timer: Optional[asyncio.TimerHandle] = None

    def add(self, call: "RunningCall") -> None:
        if not self._calls and self._timer is not None:  # alone: ticked on its own second, as the call before it was
            self._timer.cancel()
            self._timer = None
        self._calls[call] = None
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(RUNNING_TICK_S, self._tick)

    def remove(self, call: "RunningCall") -> None:
        self._calls.pop(call, None)  # the timer stops at its next tick if nothing is left

    def _tick(self) -> None:
        self._timer = None
        due = time.monotonic() - RUNNING_TICK_S * 0.9  # a call started as the timer was set is due on time
        for call in list(self._calls):
            if call.started <= due and call in self._calls:  # an earlier call's observers may stop it
                call._tick()
        if self._calls:
            self._timer = asyncio.get_running_loop().call_later(RUNNING_TICK_S, self._tick)


_TICKERS: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Ticker]" = weakref.WeakKeyDictionary()


def _ticker() -> _Ticker:
    loop = asyncio.get_running_loop()
    ticker = _TICKERS.get(loop)
    if ticker is None:
        ticker = _TICKERS[loop] = _Ticker()
    return ticker


class RunningCall:
    def __init__(self, number: int, budget_s: float, emit: Callable[[OperationEvent], None]) -> None:
        self.number, self.budget_s, self.emit = number, budget_s, emit
        self.started = time.monotonic()
        self._ticker = _ticker()
        self._ticker.add(self)
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending: List[str] = []  # text since the last complete line
        self._streamed = 0  # bytes of output reported so far
        self._long = False
        self._token = OUTPUT_TAP.set(self._output)

    def _tick(self) -> None:
        if not self._long:
            self._long = True
            self._flush_lines()
        self.emit(InvocationRunning(self.number, time.monotonic() - self.started, self.budget_s))

    def _output(self, data: bytes) -> None:
        if self._streamed >= HEAD_LIMIT:
            return
        self._streamed += len(data)
        self._pending.append(self._decoder.decode(data))
        if self._long:
            self._flush_lines()

    def _flush_lines(self) -> None:
        text = "".join(self._pending)
        cut = text.rfind("\n") + 1
        if self._streamed >= HEAD_LIMIT:
            cut = 0  # past the head the capture keeps: the answer shows what follows, with its omission mark
        self._pending = [text[cut:]] if text[cut:] else []
        if cut:
            self.emit(InvocationOutput(self.number, text[:cut]))

    def stop(self) -> None:
        self._ticker.remove(self)
        OUTPUT_TAP.reset(self._token)
