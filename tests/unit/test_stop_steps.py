"""serve's stop goes on past a step that does not finish, says which one, and what it waited in."""
from __future__ import annotations

import asyncio
import io

import pytest

from cfnrun.app import stop_steps
from cfnrun.app.stop_steps import StopSteps


async def _waits_for_a_fork_that_never_ends(never: "asyncio.Future[None]") -> None:
    await never


def test_a_step_past_its_bound_is_named_with_what_it_waits_in_and_left(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stop_steps, "STEP_SLACK_S", 0.05)
    report = io.StringIO()

    async def main() -> None:
        steps = StopSteps(report)
        never: "asyncio.Future[None]" = asyncio.get_running_loop().create_future()
        stuck = _waits_for_a_fork_that_never_ends(never)
        await steps.run("stopping the workers", stuck, 0.0)
        await steps.run("closing the connections", asyncio.sleep(0), 0.0)  # the next step still runs
        assert steps.left_behind == ["stopping the workers"]
        assert never.cancelled()  # the step was cancelled, not left running

    asyncio.run(main())
    text = report.getvalue()
    assert "serve's stop: stopping the workers has not finished after 0.05 s" in text
    assert "_waits_for_a_fork_that_never_ends" in text  # the stack it waited in, for the bug report


def test_steps_that_finish_leave_nothing_behind_and_raise_what_they_raise() -> None:
    async def fails() -> None:
        raise RuntimeError("the port would not close")

    async def main() -> None:
        steps = StopSteps(io.StringIO())
        await steps.run("closing the connections", asyncio.sleep(0), 1.0)
        assert steps.left_behind == []
        with pytest.raises(RuntimeError, match="the port would not close"):
            await steps.run("closing the port", fails(), 1.0)

    asyncio.run(main())
