"""serve's history writer: records written in batches on the event loop, in order, what follows each once it is in."""
from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any, List

import pytest

from cfnrun.history.store import HistoryStore
from cfnrun.history import writer as writer_module
from cfnrun.history.writer import HistoryWriter

HEAD = {"type_name": "Org::Svc::Thing", "action": "CREATE", "function": "TypeFunction", "status": "SUCCESS", "invocations": 1, "duration_s": 0.0}


def test_records_are_written_in_order_in_batches_on_the_loop_and_each_console_line_follows_its_record(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path)
    followed: List[int] = []
    writer_threads: List[str] = []

    async def main() -> None:
        writer = HistoryWriter(store)
        done = asyncio.Event()
        loop_thread = threading.current_thread().name

        def record(number: int) -> None:
            writer_threads.append(threading.current_thread().name)
            store.add("serve", None, HEAD, "{}", [f'{{"n": {number}}}'])

        def follow(number: int) -> None:
            assert threading.current_thread().name == loop_thread
            assert len(store.operations()) >= number + 1  # the record is committed before its line is written
            followed.append(number)
            if number == 99:
                done.set()

        for number in range(100):
            writer.write(lambda n=number: record(n), lambda n=number: follow(n))  # type: ignore[misc]
        assert followed == []  # handed over: written once the loop turns, not in line
        await asyncio.wait_for(done.wait(), 60)
        writer.close()
        assert writer_threads and set(writer_threads) == {loop_thread}

    asyncio.run(main())
    assert followed == list(range(100))
    assert [store.events(operation.id) for operation in reversed(store.operations())] == [[{"n": n}] for n in range(100)]


def test_a_record_that_fails_costs_that_record_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = HistoryStore(tmp_path)
    followed: List[str] = []

    def broken() -> None:
        raise ValueError("a fault in the recorder")

    async def main() -> None:
        writer = HistoryWriter(store)
        writer.write(broken, lambda: followed.append("broken"))
        writer.write(lambda: store.add("serve", None, HEAD, "{}", []), lambda: followed.append("next"))
        writer.close()  # writes what was handed over and runs what follows, here

    asyncio.run(main())
    assert followed == ["broken", "next"]
    assert len(store.operations()) == 1
    assert "not recorded in the history: a fault in the recorder" in capsys.readouterr().err


def test_after_close_records_are_written_in_line(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path)
    followed: List[str] = []

    async def main() -> None:
        writer = HistoryWriter(store)
        writer.close()
        writer.write(lambda: store.add("serve", None, HEAD, "{}", []), lambda: followed.append("late"))
        assert followed == ["late"] and len(store.operations()) == 1

    asyncio.run(main())


def test_a_batch_keeps_the_newest_operations_up_to_the_limit_as_one_at_a_time_does(tmp_path: Path) -> None:
    (tmp_path / "batched").mkdir(), (tmp_path / "single").mkdir()
    batched, single = HistoryStore(tmp_path / "batched", limit=3), HistoryStore(tmp_path / "single", limit=3)
    with batched.batch():
        for number in range(7):
            batched.add("serve", None, HEAD, "{}", [f'{{"n": {number}}}'])
    batched.close()
    for number in range(7):
        single.add("serve", None, HEAD, "{}", [f'{{"n": {number}}}'])
    for store in (batched, single):
        kept = store.operations()
        assert [store.events(operation.id) for operation in kept] == [[{"n": 6}], [{"n": 5}], [{"n": 4}]]


def test_records_that_keep_coming_share_a_transaction_while_one_after_a_pause_is_written_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A boto3 client calling a no-op handler one call after another sends its next call ~2-3 ms after the last
    answer: its record waits for the next ones (one transaction for several calls); a record after a pause of a
    second is written at once."""
    clock = [1000.0]
    monkeypatch.setattr(writer_module, "time", type("Clock", (), {"monotonic": staticmethod(lambda: clock[0])}))
    store = HistoryStore(tmp_path)
    transactions: List[int] = []
    batch = store.batch

    def counted(*args: Any) -> Any:
        transactions.append(1)
        return batch(*args)

    store.batch = counted  # type: ignore[method-assign]
    waits: List[float] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        call_later = loop.call_later

        def noted(delay: float, callback: Any, *args: Any) -> Any:
            if getattr(callback, "__name__", "") != "_write_waiting":
                return call_later(delay, callback, *args)
            waits.append(delay)
            return loop.call_soon(callback, *args)  # as if the window were over: the test never waits on the clock

        loop.call_later = noted  # type: ignore[method-assign,assignment]
        writer = HistoryWriter(store)
        written = asyncio.Event()
        writer.write(lambda: store.add("serve", None, HEAD, "{}", []), written.set)  # after a pause: written at once
        await asyncio.wait_for(written.wait(), 60)
        assert waits == [] and len(transactions) == 1
        clock[0] += 0.005  # the client's next calls, 5 ms after the last batch was written
        written.clear()
        for _ in range(3):
            writer.write(lambda: store.add("serve", None, HEAD, "{}", []), written.set)
        await asyncio.wait_for(written.wait(), 60)
        assert waits == [writer_module.GATHER_S] and len(transactions) == 2  # one window, one transaction for the three
        clock[0] += 1.0  # a call after a pause of a second
        written.clear()
        writer.write(lambda: store.add("serve", None, HEAD, "{}", []), written.set)
        await asyncio.wait_for(written.wait(), 60)
        assert waits == [writer_module.GATHER_S] and len(transactions) == 3  # written at once
        loop.call_later = call_later  # type: ignore[method-assign]
        writer.close()

    asyncio.run(main())
    assert len(store.operations()) == 5


def test_the_log_is_folded_back_in_off_the_loop_every_so_many_records_and_once_at_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer_module, "CHECKPOINT_RECORDS", 3)
    store = HistoryStore(tmp_path)
    checkpoints: List[str] = []
    checkpoint = store.checkpoint

    def noted() -> None:
        checkpoints.append(threading.current_thread().name)
        checkpoint()

    store.checkpoint = noted  # type: ignore[method-assign]

    async def main() -> None:
        writer = HistoryWriter(store)
        for _ in range(2):  # two batches of two: the second passes three records since the last checkpoint
            written = asyncio.Event()
            writer.write(lambda: store.add("serve", None, HEAD, "{}", []))
            writer.write(lambda: store.add("serve", None, HEAD, "{}", []), written.set)
            await asyncio.wait_for(written.wait(), 60)
        writer.close()  # waits for the checkpoint under way, then closes the last connection

    asyncio.run(main())
    assert checkpoints == ["cfnrun-history-checkpoint"]
    assert not (tmp_path / ".cfnrun" / "history.sqlite3-wal").exists()  # the last connection closed: the log folded in
    assert len(store.operations()) == 4


def test_a_record_handed_over_while_close_runs_on_another_thread_is_written(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path)
    followed: List[str] = []

    async def main() -> None:
        writer = HistoryWriter(store)
        writer.write(lambda: store.add("serve", None, HEAD, "{}", []), lambda: followed.append("first"))
        closing = asyncio.get_running_loop().run_in_executor(None, writer.close)
        writer.write(lambda: store.add("serve", None, HEAD, "{}", []), lambda: followed.append("second"))
        await closing
        await asyncio.sleep(0)  # the loop's turn: what it scheduled runs, in line now that the writer is closed

    asyncio.run(main())
    assert sorted(followed) == ["first", "second"]
    assert len(store.operations()) == 2


def test_a_batch_inserts_its_events_as_it_commits_and_an_operation_extended_in_it_counts_those_of_the_batch(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path)
    with store.batch():
        first = store.add("serve", None, HEAD, "{}", ['{"n": 0}', '{"n": 1}'])
        second = store.add("serve", None, HEAD, "{}", ['{"m": 0}'])
        store.extend(first, {**HEAD, "invocations": 2}, ['{"n": 2}'])  # a callback of the first, in the same batch
        store.extend(first, {**HEAD, "invocations": 3}, ['{"n": 3}', '{"n": 4}'])
        store.extend(second, {**HEAD, "invocations": 2}, ['{"m": 1}'])
    store.close()
    assert store.events(first) == [{"n": n} for n in range(5)]
    assert store.events(second) == [{"m": 0}, {"m": 1}]
    assert store.get(first).invocations == 3


def test_a_record_that_fails_in_a_batch_leaves_no_events_of_what_its_rollback_took_back_and_the_next_records_are_written(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path)
    with store.batch():
        store.add("serve", None, HEAD, "{}", ['{"n": 0}'])
        with pytest.raises(KeyError):  # a record that fails in its transaction: the batch's so far is rolled back
            store.add("serve", None, {"action": "CREATE"}, "{}", ['{"n": 1}'])
        last = store.add("serve", None, HEAD, "{}", ['{"n": 2}'])
    store.close()
    assert [operation.id for operation in store.operations()] == [last]
    assert store.events(last) == [{"n": 2}]
    with store._session(create=False) as connection:
        (events,) = connection.execute("SELECT COUNT(*) FROM events").fetchone()
    assert events == 1


def _locked_by_another(store: HistoryStore) -> sqlite3.Connection:
    """A connection of its own (another process's, as far as SQLite can tell) holding the history file's write lock."""
    store.add("serve", None, HEAD, "{}", [])  # the file and its tables exist
    store.close()
    other = sqlite3.connect(str(store.path), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    return other


def test_a_batch_is_put_off_while_another_process_holds_the_write_lock_and_written_once_it_is_let_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer_module, "GATHER_S", 0.001)
    store = HistoryStore(tmp_path)
    other = _locked_by_another(store)
    attempts: List[bool] = []
    begin = store.begin_batch

    def noted(connection: sqlite3.Connection, wait_ms: int) -> bool:
        taken = begin(connection, wait_ms)
        attempts.append(taken)
        if len(attempts) == 2:
            other.execute("COMMIT")  # the other process lets go after the second try
        return taken

    store.begin_batch = noted  # type: ignore[method-assign]
    followed: List[str] = []

    async def main() -> None:
        writer = HistoryWriter(store)
        written = asyncio.Event()
        writer.write(lambda: store.add("serve", None, HEAD, "{}", ['{"n": 1}']), lambda: (followed.append("line"), written.set()))
        await asyncio.wait_for(written.wait(), 60)
        writer.close()

    asyncio.run(main())
    other.close()
    assert attempts[:2] == [False, False] and attempts[2:] == [True]  # put off twice, untouched; then written
    assert followed == ["line"]
    assert store.events(store.operations()[0].id) == [{"n": 1}]


def test_records_put_off_for_as_long_as_sqlite_would_wait_are_not_recorded_and_their_lines_still_follow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(writer_module, "LOCKED_GIVE_UP_S", 0.0)  # the first put-off is already as long as that
    store = HistoryStore(tmp_path)
    other = _locked_by_another(store)
    followed: List[str] = []

    async def main() -> None:
        writer = HistoryWriter(store)
        written = asyncio.Event()
        writer.write(lambda: store.add("serve", None, HEAD, "{}", []), lambda: (followed.append("line"), written.set()))
        await asyncio.wait_for(written.wait(), 60)
        other.execute("COMMIT")
        writer.close()

    asyncio.run(main())
    other.close()
    assert followed == ["line"]
    assert len(store.operations()) == 1  # the one made before the lock, not the one put off
    assert "locked by another process" in capsys.readouterr().err
