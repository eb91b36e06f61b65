"""The template lint started in a pause of serve's handler calls, so that it never takes a core from them.

cfn-lint over a template of hundreds of resources costs a second of CPU or more. Nothing waits for its
findings (console warnings, ``stacks/lint_process.py``), yet on two cores a lint running beside a stack's
handler calls took their CPU, at low priority or not: 500 independent resources created on
``--virtual-clock`` took 1.6–1.9 s beside the lint at nice 10, 1.5–1.8 s at SCHED_IDLE, 1.3–1.6 s with
no lint (2026-11-27, three alternations). So a lint, once its turn has come (one lint runs at a time:
``stacks/lint_process.py``), waits until no served function has had a call running or queued for
``QUIET_S``: at once when nothing runs, in a real clock's callback delays, or when the operation's calls
are done; never longer than ``WAIT_MOST_S``, so a serve that other clients keep busy still gets its
findings. A template linted before is answered from memory, without waiting.

The calls are looked at every ``LOOK_EVERY_S`` while a lint waits, rather than counted as they begin and
end: nothing is added to every call's path for the sake of a lint that waits now and then.
"""
from __future__ import annotations

import asyncio
from typing import Callable

QUIET_S = 0.1
LOOK_EVERY_S = 0.02
WAIT_MOST_S = 60.0


async def pause_in_calls(
    calls: Callable[[], int], quiet_s: float = QUIET_S, look_every_s: float = LOOK_EVERY_S, wait_most_s: float = WAIT_MOST_S
) -> bool:
    """Once ``calls()`` (the calls running or queued now) has been 0 at every look for ``quiet_s``; whether it has
    (False: ``wait_most_s`` went by first)."""
    loop = asyncio.get_running_loop()
    give_up_at = loop.time() + wait_most_s
    quiet_since = None
    while True:
        now = loop.time()
        if calls():
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        if quiet_since is not None and now - quiet_since >= quiet_s:
            return True
        if now >= give_up_at:
            return False
        await asyncio.sleep(look_every_s)
