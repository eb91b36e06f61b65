"""Once serve has loaded what it serves, that heap is frozen out of the cyclic collector's way: a full collection during a
wide stack's create walks what serve made since, not its whole start again."""
from __future__ import annotations

import asyncio
import gc
from types import SimpleNamespace
from typing import Iterator, List

import pytest

from cfnrun.app import serve


@pytest.fixture
def announced(monkeypatch: pytest.MonkeyPatch) -> Iterator[List[int]]:
    """The freeze count each time serve says it listens; the test process's heap is unfrozen afterwards."""
    seen: List[int] = []
    monkeypatch.setattr(serve, "_announce", lambda settings, server, console: seen.append(gc.get_freeze_count()))
    gc.unfreeze()
    try:
        yield seen
    finally:
        gc.unfreeze()


def test_what_serve_loaded_is_frozen_before_it_says_it_listens(announced: List[int]) -> None:
    async def run() -> None:
        loaded = asyncio.get_running_loop().create_future()
        loaded.set_result(None)
        await serve._announce_when_loaded(SimpleNamespace(), SimpleNamespace(loaded=loaded), SimpleNamespace())  # type: ignore[arg-type]

    assert gc.get_freeze_count() == 0
    asyncio.run(run())
    assert len(announced) == 1 and announced[0] > 1000  # the modules and objects loaded so far
    made_after = [[index] for index in range(1000)]  # what comes later is the collector's as before
    assert gc.get_freeze_count() <= announced[0] and gc.is_tracked(made_after[0])


def test_a_serve_whose_load_failed_freezes_nothing(announced: List[int]) -> None:
    async def run() -> None:
        loaded = asyncio.get_running_loop().create_future()
        loaded.set_exception(RuntimeError("an unusable schema"))
        await serve._announce_when_loaded(SimpleNamespace(), SimpleNamespace(loaded=loaded), SimpleNamespace())  # type: ignore[arg-type]

    asyncio.run(run())
    assert announced == [] and gc.get_freeze_count() == 0
