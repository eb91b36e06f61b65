"""The history's bound: after every batch, by whichever process, the store holds exactly the newest ``limit``
operations and their events; the prune's work grows with what it removes, not with what it keeps."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List, Tuple

import pytest

from cfnrun.history.store import HistoryStore
from cfnrun.model.errors import CfnrunError

HEAD = {"type_name": "Org::Svc::Thing", "action": "CREATE", "function": "TypeFunction", "status": "SUCCESS", "invocations": 1, "duration_s": 0.0}
LIMIT = 5


def kept(path: Path) -> Tuple[List[int], List[Tuple[int, int]], int]:
    """The operations' ids (ascending), the events' (operation, seq), and the largest id ever given (sqlite_sequence)."""
    with sqlite3.connect(path, timeout=60) as connection:
        connection.execute("BEGIN")  # one snapshot for the three reads, whatever another writer commits meanwhile
        ids = [row[0] for row in connection.execute("SELECT id FROM operations ORDER BY id")]
        events = [(row[0], row[1]) for row in connection.execute("SELECT operation_id, seq FROM events ORDER BY operation_id, seq")]
        (given,) = connection.execute("SELECT seq FROM sqlite_sequence WHERE name = 'operations'").fetchone()
    connection.close()
    return ids, events, given


def newest(path: Path, limit: int) -> None:
    """Exactly the newest ``limit`` operations are there (all, while fewer were written), each with its two events,
    and no other events."""
    ids, events, given = kept(path)
    assert ids == list(range(max(given - limit, 0) + 1, given + 1))
    assert events == [(operation, seq) for operation in ids for seq in (0, 1)]


def fill(store: HistoryStore, count: int) -> None:
    with store.batch():
        for _ in range(count):
            store.add("serve", None, HEAD, "{}", ['{"n": 0}', '{"n": 1}'])
    store.close()


def test_one_record_batches_and_batches_of_many_keep_exactly_the_newest(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path, limit=LIMIT)
    fill(store, 1)
    assert kept(store.path)[0] == [1]  # fewer than the limit: none goes
    for size in (1, 3, 1, 7, 2, 1, 12, 1):
        fill(store, size)
        newest(store.path, LIMIT)
    for _ in range(3):
        store.add("invoke", None, HEAD, "{}", ['{"n": 0}', '{"n": 1}'])  # one at a time, outside a batch
        newest(store.path, LIMIT)


def test_a_batch_whose_last_records_were_rolled_back_keeps_as_many_as_before(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path, limit=LIMIT)
    fill(store, LIMIT)
    with store.batch():
        store.add("serve", None, HEAD, "{}", ['{"n": 0}', '{"n": 1}'])  # an id past the largest committed ...
        with pytest.raises(KeyError):  # ... taken back with the batch so far by a record that fails
            store.add("serve", None, {"action": "CREATE"}, "{}", [])
    store.close()
    newest(store.path, LIMIT)
    assert kept(store.path)[0] == [1, 2, 3, 4, 5]


def test_a_smaller_limit_in_another_process_cuts_to_it_and_a_larger_one_keeps_what_is_there(tmp_path: Path) -> None:
    fill(HistoryStore(tmp_path, limit=10), 10)
    fill(HistoryStore(tmp_path, limit=3), 1)
    newest(HistoryStore(tmp_path).path, 3)
    fill(HistoryStore(tmp_path, limit=10), 2)
    ids, _, given = kept(HistoryStore(tmp_path).path)
    assert ids == list(range(given - 4, given + 1))


WRITER = textwrap.dedent(
    """
    import random, sys
    from pathlib import Path

    sys.path.insert(0, sys.argv[5])
    from cfnrun.history.store import HistoryStore
    from test_history_prune import HEAD, newest

    root, limit, batches, seed = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    store = HistoryStore(root, limit=limit)
    chance = random.Random(seed)
    print("ready", flush=True)
    sys.stdin.readline()  # both writers start together
    for _ in range(batches):
        with store.batch():
            for _ in range(chance.choice((1, 1, 1, 2, 3, 6))):
                store.add("serve", None, HEAD, "{}", ['{"n": 0}', '{"n": 1}'])
        newest(store.path, limit)  # with whatever the other writer committed meanwhile
    store.close()
    print(batches, flush=True)
    """
)
BATCHES = 150


def test_two_processes_writing_one_history_at_once_each_leave_exactly_the_newest_after_every_batch(tmp_path: Path) -> None:
    """serve's writer and a one-shot invoke (or a second serve) share the project's file, each holding its one write
    lock in turn: whichever committed last must have left exactly the newest operations, the other's counted."""
    fill(HistoryStore(tmp_path, limit=LIMIT), LIMIT)
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), str(LIMIT), str(BATCHES), str(seed), str(Path(__file__).parent)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for seed in (1, 2)
    ]
    try:
        for writer in writers:
            assert writer.stdout is not None
            assert writer.stdout.readline().strip() == "ready", writer.communicate()
        for writer in writers:
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.flush()
        for writer in writers:
            out, err = writer.communicate(timeout=600)
            assert writer.returncode == 0 and out.strip() == str(BATCHES), err
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
    path = HistoryStore(tmp_path).path
    newest(path, LIMIT)
    assert kept(path)[2] >= LIMIT + 2 * BATCHES  # every record of both writers was given an id


def prune_steps(store: HistoryStore) -> int:
    """SQLite's virtual-machine steps one prune takes (its progress handler, called at every step)."""
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0

    store.hold()
    connection = store._held
    assert connection is not None
    connection.set_progress_handler(step, 1)
    with store._session(create=True):
        store._prune(connection)
    connection.set_progress_handler(None, 1)
    store.close()
    return steps[0]


@pytest.mark.parametrize("over", [0, 1, 4])
def test_the_prune_steps_over_what_it_removes_not_over_what_it_keeps(tmp_path: Path, over: int) -> None:
    """A prune with nothing to remove takes the same steps with 10 operations kept as with 1,000; one that removes
    ``over`` takes the same steps whatever it keeps too (the prune before stepped back over every operation kept)."""
    steps = []
    for limit in (10, 1000):
        store = HistoryStore(tmp_path / str(limit), limit=limit)
        store.folder.parent.mkdir()
        with store.batch():  # no prune yet: outside one, add would prune
            for _ in range(limit + over):
                store.add("serve", None, HEAD, "{}", ['{"n": 0}', '{"n": 1}'])
            store._thread.pruning = False
        store.close()
        steps.append(prune_steps(store))
        newest(store.path, limit)
    assert steps[0] == steps[1]


def test_a_callback_of_an_operation_another_process_pruned_is_not_recorded_and_costs_its_batch_nothing(tmp_path: Path) -> None:
    serve = HistoryStore(tmp_path, limit=2)
    fill(serve, 1)  # operation 1: IN_PROGRESS, its next call still to come
    fill(HistoryStore(tmp_path, limit=2), 2)  # meanwhile a one-shot invoke records two: operation 1 is pruned
    with serve.batch():
        first = serve.add("serve", None, HEAD, "{}", ['{"n": 0}', '{"n": 1}'])
        with pytest.raises(CfnrunError, match="operation 1 is no longer in"):
            serve.extend(1, {**HEAD, "invocations": 2}, ['{"n": 2}'])
        last = serve.add("serve", None, HEAD, "{}", ['{"n": 0}', '{"n": 1}'])
    serve.close()
    assert kept(serve.path)[0] == [first, last]
    newest(serve.path, 2)  # no events of operation 1's
