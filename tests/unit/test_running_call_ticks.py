"""Calls in flight share one running timer: each still gets its ticks, a stopped call gets none."""
from __future__ import annotations

import asyncio
from typing import Any, List

import pytest

from cfnrun.events.operation import InvocationRunning, OperationEvent
from cfnrun.invoker import running_call
from cfnrun.invoker.running_call import RunningCall


def test_a_hundred_calls_in_flight_share_one_timer_and_each_is_ticked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(running_call, "RUNNING_TICK_S", 0.05)

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        scheduled: List[Any] = []
        real_call_later = loop.call_later

        def counting(delay: float, callback: Any, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
            scheduled.append(callback)
            return real_call_later(delay, callback, *args, **kwargs)

        monkeypatch.setattr(loop, "call_later", counting)
        ticked: List[int] = []
        all_ticked = asyncio.Event()

        def emit(event: OperationEvent) -> None:
            assert isinstance(event, InvocationRunning)
            ticked.append(event.number)
            if len(set(ticked)) == 99:
                all_ticked.set()

        calls = [RunningCall(number, 60.0, emit) for number in range(100)]
        calls[0].stop()  # a fast call: done before any tick
        assert len(scheduled) == 1  # one timer for all of them, not one each
        await all_ticked.wait()
        ticks_so_far = len(scheduled)
        for call in calls[1:]:
            call.stop()
        assert 0 not in ticked
        assert ticks_so_far < 100
        assert all(event_number in ticked for event_number in range(1, 100))

    asyncio.run(scenario())
