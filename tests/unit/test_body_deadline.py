"""The Invoke API's wait for a request body (``lambda_api._within``): in time, too late, or cancelled by serve's stop."""
from __future__ import annotations

import asyncio
import sys
from typing import Any, Tuple

import pytest

from cfnrun.api.lambda_api import _within


def test_a_body_in_time_is_read_and_its_timer_is_gone() -> None:
    async def scenario() -> Tuple[bytes, bool]:
        loop = asyncio.get_running_loop()
        body: "asyncio.Future[bytes]" = loop.create_future()
        loop.call_soon(body.set_result, b"{}")
        task = asyncio.current_task()
        assert task is not None
        read = await _within(body, 60.0, task)
        return read, all(timer.cancelled() for timer in loop._scheduled)  # type: ignore[attr-defined]

    assert asyncio.run(scenario()) == (b"{}", True)


def _cancel_requests(task: "asyncio.Task[Any]") -> int:
    """The cancel requests ``task`` still has (Python 3.11's ``Task.cancelling``; before it, a task keeps no count)."""
    return task.cancelling() if sys.version_info >= (3, 11) else 0


def test_a_body_that_never_comes_times_out_and_leaves_no_cancel_request_behind() -> None:
    async def scenario() -> Tuple[str, int]:
        never: "asyncio.Future[bytes]" = asyncio.get_running_loop().create_future()
        task = asyncio.current_task()
        assert task is not None
        try:
            await _within(never, 0.01, task)
        except asyncio.TimeoutError:
            return "timed out", _cancel_requests(task)
        return "read", _cancel_requests(task)

    assert asyncio.run(scenario()) == ("timed out", 0)


def test_a_cancel_from_elsewhere_while_the_body_is_read_stays_a_cancel() -> None:
    async def reading(never: "asyncio.Future[bytes]") -> Any:
        task = asyncio.current_task()
        assert task is not None
        return await _within(never, 60.0, task)

    async def scenario() -> None:
        never: "asyncio.Future[bytes]" = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(reading(never))
        await asyncio.sleep(0)
        task.cancel()  # serve stops
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(scenario())
