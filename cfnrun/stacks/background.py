"""Work an API call starts and answers before it ends (a drift detection, a resource scan, a template generated), and
what happens to it when serve stops."""
from __future__ import annotations

import asyncio
from typing import Any, Coroutine, Iterable, Set


async def finish_or_cancel(tasks: Iterable["asyncio.Task[Any]"], timeout_s: float) -> None:
    """On stop: the tasks still running get ``timeout_s`` to finish, then they are cancelled."""
    running = [task for task in tasks if not task.done()]
    if running:
        _, pending = await asyncio.wait(running, timeout=timeout_s)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


class BackgroundTasks:
    """The tasks started and not yet done."""

    def __init__(self) -> None:
        self._tasks: Set["asyncio.Task[None]"] = set()

    def start(self, work: "Coroutine[Any, Any, None]") -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self, timeout_s: float) -> None:
        await finish_or_cancel(list(self._tasks), timeout_s)
