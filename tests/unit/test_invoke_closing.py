"""A one-shot invoke's end: the worker is torn down while the history writes its record and closes its file."""
from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import List, Optional

from cfnrun.app.invoke import _closed
from cfnrun.history.store import HistoryStore
from cfnrun.history.writer import HistoryWriter
from cfnrun.runtime.process import WorkerInitError

WAIT_S = 30.0  # a bound for a deadlock, never reached when the two close at once


class _Target:
    """A target whose close waits until the history has closed: it finishes only if the two run at once."""

    def __init__(self, history_closed: threading.Event) -> None:
        self.history_closed = history_closed
        self.saw_history_closed: Optional[bool] = None

    async def invoke(self, event: object, timeout_s: float, request_id: Optional[str] = None) -> object:
        raise NotImplementedError

    async def warm(self) -> None:
        return None

    async def reload(self) -> Optional[WorkerInitError]:
        return None

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        self.saw_history_closed = await loop.run_in_executor(None, self.history_closed.wait, WAIT_S)


class _Writer(HistoryWriter):
    def __init__(self, store: HistoryStore, closed: threading.Event, order: List[str]) -> None:
        super().__init__(store)
        self.closed, self.order = closed, order

    def close(self) -> None:
        super().close()
        self.order.append("history closed")
        self.closed.set()


def test_the_target_closes_while_the_history_writes_and_closes(tmp_path: Path) -> None:
    closed = threading.Event()
    order: List[str] = []
    store = HistoryStore(tmp_path)
    history = _Writer(store, closed, order)
    target = _Target(closed)
    written = threading.Event()

    async def run() -> None:
        history.write(written.set)  # a record handed over as the operation completed
        await _closed(target, history)  # type: ignore[arg-type]
        order.append("closed")

    asyncio.run(run())
    assert target.saw_history_closed is True  # not one after the other: the target saw the history close meanwhile
    assert written.is_set()
    assert order == ["history closed", "closed"]  # and the command goes on only once both are done


def test_without_a_history_the_target_still_closes(tmp_path: Path) -> None:
    closed = threading.Event()
    closed.set()
    target = _Target(closed)
    asyncio.run(_closed(target, None))  # type: ignore[arg-type]
    assert target.saw_history_closed is True
