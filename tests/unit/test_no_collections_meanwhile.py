"""``no_collections_meanwhile``: the collector off while an import runs on a thread of its own, and on again after the
last such import only if it was on before it, or ``keep_what_loaded`` (the command's start done) came meanwhile."""
from __future__ import annotations

import gc
import threading
from typing import Iterator

import pytest

from cfnrun.app.loaded_objects import keep_what_loaded, no_collections_meanwhile


@pytest.fixture(autouse=True)
def collector_as_it_was() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()  # keep_what_loaded froze the test process's heap
    (gc.enable if enabled else gc.disable)()


def test_an_import_turns_the_collector_off_and_on_again() -> None:
    gc.enable()
    with no_collections_meanwhile():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_import_during_a_commands_start_leaves_the_collector_off_until_the_start_is_done() -> None:
    gc.disable()  # off_while_loading
    with no_collections_meanwhile():
        assert not gc.isenabled()
    assert not gc.isenabled()
    with no_collections_meanwhile():
        keep_what_loaded()  # the start done while the import runs: on once it ends, not before
        assert not gc.isenabled() and gc.get_freeze_count() > 0
    assert gc.isenabled()


def test_overlapping_imports_on_two_threads_turn_it_on_once_both_are_done() -> None:
    gc.enable()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = []

    def second() -> None:
        first_in.wait()
        with no_collections_meanwhile():
            second_in.set()
            first_out.wait()
            seen.append(gc.isenabled())  # the first has ended: still off, for this one

    thread = threading.Thread(target=second)
    thread.start()
    with no_collections_meanwhile():
        first_in.set()
        second_in.wait()
    first_out.set()
    thread.join()
    assert seen == [False] and gc.isenabled()
