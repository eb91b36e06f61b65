"""What a call in flight reports: a running tick every second and, once it is a long call, its output as it comes.

A fast call says nothing while it runs, so its output is shown once, with its answer.
A call still running after the first tick becomes a long call: the complete lines the
handler wrote so far are reported, then each new line as it arrives (up to the log
capture's head, so a flood cannot swamp the screen; the rest comes with the answer).
"""
from __future__ import annotations

import asyncio
import codecs
import time
from typing import Callable, List

from cfnrun.events.operation import InvocationOutput, InvocationRunning, OperationEvent
from cfnrun.runtime.logs import HEAD_LIMIT, OUTPUT_TAP

RUNNING_TICK_S = 1.0


class RunningCall:
    def __init__(self, number: int, budget_s: float, emit: Callable[[OperationEvent], None]) -> None:
        self.number, self.budget_s, self.emit = number, budget_s, emit
        self.started = time.monotonic()
        self._loop = asyncio.get_running_loop()
        self._handle = self._loop.call_later(RUNNING_TICK_S, self._tick)
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
        self._handle = self._loop.call_later(RUNNING_TICK_S, self._tick)

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
        self._handle.cancel()
        OUTPUT_TAP.reset(self._token)
