"""serve's stop, one bounded step at a time: a step that outlives its bound is named, with what it waits in, and left.

Each step of ``RunningServer.stop`` bounds itself (the shutdown grace, a worker's two seconds to leave, ...). Should one
wait past that and ``STEP_SLACK_S`` more, a cfnrun bug, the stop says which step it was and prints the stacks of the
tasks still waiting (what a bug report needs), cancels the step and goes on to the next: serve always ends, and its
workers end with it (each holds a lifeline to serve's process).
"""
from __future__ import annotations

import asyncio
import sys
from typing import Any, Awaitable, List, TextIO

STEP_SLACK_S = 10.0  # past a step's own bound, how long the stop waits before it goes on without it
_SHOWN_FRAMES = 12  # per waiting task in the report


class StopIncomplete(Exception):
    """serve stopped without waiting for the steps the message names (a bug in cfnrun, reported above it)."""


class StopSteps:
    """The steps of one stop; ``left_behind``: those that did not finish in time (empty after a clean stop)."""

    def __init__(self, report_to: TextIO = sys.stderr) -> None:
        self.left_behind: List[str] = []
        self._report_to = report_to

    async def run(self, what: str, step: Awaitable[Any], bound_s: float) -> None:
        """Await ``step`` (``what`` names it for the report) for ``bound_s`` and ``STEP_SLACK_S`` more; raise what it raises."""
        task = asyncio.ensure_future(step)
        try:
            await asyncio.wait([task], timeout=bound_s + STEP_SLACK_S)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if task.done():
            task.result()
            return
        self.left_behind.append(what)
        self._report(what, bound_s + STEP_SLACK_S)
        task.cancel()
        await asyncio.wait([task], timeout=STEP_SLACK_S)  # it may not heed the cancel either

    def _report(self, what: str, waited_s: float) -> None:
        out = self._report_to
        out.write(f"cfnrun: serve's stop: {what} has not finished after {waited_s:g} s; serve stops without it. "
                  "This is a bug in cfnrun: please report it with what follows.\n")
        current = asyncio.current_task()
        for task in asyncio.all_tasks():
            if task is not current and not task.done():
                task.print_stack(limit=_SHOWN_FRAMES, file=out)
        out.flush()
