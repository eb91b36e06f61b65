"""The template lint waits for a pause in serve's handler calls (``app/stacks/lint_in_pauses.py``)."""
from __future__ import annotations

import asyncio
from typing import List, Tuple

from cfnrun.app.stacks.lint_in_pauses import pause_in_calls


def test_it_waits_while_calls_run_and_goes_once_none_has_run_for_the_quiet_time() -> None:
    async def scenario() -> None:
        running = [3]
        looks: List[int] = []

        def calls() -> int:
            looks.append(running[0])
            return running[0]

        waiting = asyncio.ensure_future(pause_in_calls(calls, quiet_s=0.05, look_every_s=0.001, wait_most_s=60))
        while len(looks) < 20:  # twenty looks, every one of them at calls running
            await asyncio.sleep(0.001)
        assert not waiting.done()
        running[0] = 0
        quiet_from = asyncio.get_running_loop().time()
        assert await waiting is True
        assert asyncio.get_running_loop().time() - quiet_from >= 0.05
        assert looks[-1] == 0

    asyncio.run(scenario())


def test_a_call_in_the_quiet_time_starts_it_over() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        # quiet, then a call, then quiet for good: the call comes at the second look, which comes before the quiet time can
        # have passed however late the loop wakes (a call at a third look came after it when a busy machine woke the loop late)
        seen = iter([0, 1])
        looks: List[Tuple[float, int]] = []

        def calls() -> int:
            looks.append((loop.time(), next(seen, 0)))
            return looks[-1][1]

        assert await pause_in_calls(calls, quiet_s=0.01, look_every_s=0.001, wait_most_s=60) is True
        busy_at = [at for at, running in looks if running]
        assert busy_at, "the call was seen"
        assert loop.time() - busy_at[-1] >= 0.01  # the quiet time counted from after it

    asyncio.run(scenario())


def test_a_serve_kept_busy_still_gets_its_lint_after_the_longest_wait() -> None:
    async def scenario() -> None:
        assert await pause_in_calls(lambda: 1, quiet_s=0.01, look_every_s=0.001, wait_most_s=0.02) is False

    asyncio.run(scenario())
