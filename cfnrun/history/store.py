"""The history database: ``.cfnrun/history.sqlite3`` in the project folder, pruned to a bound."""
from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Type

from cfnrun import __version__
from cfnrun.model.errors import CfnrunError
from cfnrun.model.local_state import FOLDER, state_folder
from cfnrun.model.sqlite_file import open_wal, unusable

FILE = "history.sqlite3"
DEFAULT_LIMIT = 500  # operations kept; the oldest go first
SWITCH_ENV = "CFNRUN_HISTORY"  # "off" (or 0, false, no) records nothing
LIMIT_ENV = "CFNRUN_HISTORY_LIMIT"
_OFF = ("off", "0", "false", "no")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS operations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source TEXT NOT NULL,
    token TEXT,
    started_at REAL NOT NULL,
    type_name TEXT NOT NULL,
    action TEXT NOT NULL,
    function TEXT NOT NULL,
    status TEXT NOT NULL,
    error_code TEXT,
    invocations INTEGER NOT NULL,
    duration_s REAL NOT NULL,
    cfnrun_version TEXT NOT NULL,
    request TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    operation_id INTEGER NOT NULL REFERENCES operations(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (operation_id, seq)
);
"""


@dataclass
class RecordedOperation:
    id: int
    source: str  # "invoke" or "serve"
    token: Optional[str]
    started_at: float
    type_name: str
    action: str
    function: str
    status: str
    error_code: Optional[str]
    invocations: int
    duration_s: float
    cfnrun_version: str
    request: Dict[str, Any]

    def summary(self) -> Dict[str, Any]:
        return {
            "id": self.id,
            "startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started_at)),
            "source": self.source,
            "typeName": self.type_name,
            "action": self.action,
            "function": self.function,
            "status": self.status,
            "errorCode": self.error_code,
            "invocations": self.invocations,
            "durationSeconds": round(self.duration_s, 3),
            "cfnrunVersion": self.cfnrun_version,
        }


def not_recorded(error: Exception) -> None:
    """History is a convenience: a database that cannot be written never fails the operation."""
    sys.stderr.write(f"cfnrun: note: this operation is not recorded in the history: {error}\n")


def recording_enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "on").strip().lower() not in _OFF


def history_limit() -> int:
    value = os.environ.get(LIMIT_ENV, "")
    try:
        return max(1, int(value)) if value else DEFAULT_LIMIT
    except ValueError:
        raise CfnrunError(f"{LIMIT_ENV}={value!r} is not a number of operations") from None


class HistoryStore:
    def __init__(self, project_root: Path, limit: int = DEFAULT_LIMIT) -> None:
        self.folder = project_root / FOLDER
        self.path = self.folder / FILE
        self.limit = limit
        self._thread = threading.local()  # each thread's held connection and whether it writes in a batch

    @classmethod
    def for_recording(cls, project_root: Path) -> Optional["HistoryStore"]:
        """The project's store, or None when recording is switched off."""
        return cls(project_root, history_limit()) if recording_enabled() else None

    def _connect(self, create: bool, shared: bool = False) -> sqlite3.Connection:
        """A connection to write through (``create``: folder, file and tables made as needed; ``shared``: usable from any
        thread, one at a time), or one that only reads."""
        if not create:
            if not self.path.exists():
                raise CfnrunError(f"no history yet: {self.path} does not exist (run cfnrun invoke or serve first)")
            # Reading makes no tables and sets no journal mode: a damaged file stays as it was. (Not mode=ro:
            # a read-only connection cannot fold the write-ahead log back in, so it would leave -wal/-shm files.)
            return sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=rw", uri=True, timeout=10)
        state_folder(self.folder.parent)
        connection = open_wal(self.path, _SCHEMA, shared=shared)  # synchronous NORMAL: no fsync per operation, history is not a ledger
        # The store keeps its events with their operations itself (``extend`` checks, ``_prune`` deletes both), so SQLite
        # need not look up an event's operation at each insert nor run a cascade for each operation pruned.
        connection.execute("PRAGMA foreign_keys = OFF")
        return connection

    def add(self, source: str, token: Optional[str], head: Dict[str, Any], request: str, events: List[str]) -> int:
        """Store one operation (``head``: type_name, action, function, status, error_code, invocations, duration_s),
        its request and its events as JSON texts already masked."""
        with self._session(create=True) as connection:
            cursor = connection.execute(
                "INSERT INTO operations (source, token, started_at, type_name, action, function, status, error_code,"
                " invocations, duration_s, cfnrun_version, request) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    source, token, head["started_at"] if "started_at" in head else time.time(), head["type_name"], head["action"], head["function"],
                    head["status"], head.get("error_code"), head["invocations"], head["duration_s"], __version__,
                    request,
                ),
            )
            operation_id = int(cursor.lastrowid or 0)
            self._append(connection, operation_id, 0, events)
            if getattr(self._thread, "batching", False):
                self._thread.pruning = True  # once, as the batch commits: the same operations are kept
            else:
                self._prune(connection)
            return operation_id

    def _prune(self, connection: sqlite3.Connection) -> None:
        """Keep the newest ``limit`` operations and their events: those whose (operation) id is within ``limit`` of the
        largest. One seek when none must go, a step per operation that goes (not ``limit`` steps back every time).

        Exact because the ids in the table are always one run of consecutive numbers (the note at ``_PRUNE``), so the
        ``limit`` largest are ``max - limit + 1`` to ``max``. The largest is read here, inside this transaction (which
        holds the file's one write lock from its first insert): every writer's operations, committed or in it, count,
        and none taken back by a rollback does."""
        kept = (min(self.limit, _LARGEST_ID),)
        connection.execute(_PRUNE_EVENTS, kept)  # the events, then their operations: the largest id is the same for both
        connection.execute(_PRUNE, kept)

    def extend(self, operation_id: int, head: Dict[str, Any], events: List[str]) -> None:
        """Add invocations to an operation still going (serve: a callback of the same request)."""
        with self._session(create=True) as connection:
            updated = connection.execute(
                "UPDATE operations SET status = ?, error_code = ?, invocations = ?, duration_s = ? WHERE id = ?",
                (head["status"], head.get("error_code"), head["invocations"], head["duration_s"], operation_id),
            )
            gone = updated.rowcount == 0  # pruned meanwhile (others' operations came after it): no events of none
            if not gone:
                self._insert_waiting(connection)  # the events counted below may be of this batch
                (seq,) = connection.execute("SELECT COUNT(*) FROM events WHERE operation_id = ?", (operation_id,)).fetchone()
                self._append(connection, operation_id, seq, events)
        if gone:  # raised once the session is left as it was: the batch's other records stay
            raise CfnrunError(f"operation {operation_id} is no longer in {self.path}: the oldest are pruned (CFNRUN_HISTORY_LIMIT)")

    def _append(self, connection: sqlite3.Connection, operation_id: int, first: int, events: List[str]) -> None:
        """Insert ``events``; in a batch they wait for its end and go in with the batch's others, in one statement."""
        rows = [(operation_id, first + n, record) for n, record in enumerate(events)]
        waiting: Optional[List[Any]] = getattr(self._thread, "waiting", None)
        if waiting is not None:
            waiting.extend(rows)
        else:
            connection.executemany(_INSERT_EVENTS, rows)

    def _insert_waiting(self, connection: sqlite3.Connection) -> None:
        """Insert the events of the batch so far (none outside a batch)."""
        waiting: Optional[List[Any]] = getattr(self._thread, "waiting", None)
        if waiting:
            self._thread.waiting = []
            connection.executemany(_INSERT_EVENTS, waiting)

    def operations(self, limit: Optional[int] = None) -> List[RecordedOperation]:
        """The most recent operations, newest first."""
        with self._session(create=False) as connection:
            rows = connection.execute(
                f"SELECT {_COLUMNS} FROM operations ORDER BY id DESC LIMIT ?",
                (limit if limit is not None and limit <= _LARGEST_ID else -1,),  # -1: no limit
            ).fetchall()
        return [_operation(row) for row in rows]

    def operations_from(self, source: str, status: Optional[str], limit: int) -> List[RecordedOperation]:
        """The most recent operations recorded via ``source`` (``fuzz``, ``stack``...), with ``status`` if given, newest first."""
        with self._session(create=False) as connection:
            rows = connection.execute(
                f"SELECT {_COLUMNS} FROM operations WHERE source = ? AND (? IS NULL OR status = ?) ORDER BY id DESC LIMIT ?",
                (source, status, status, min(limit, _LARGEST_ID)),
            ).fetchall()
        return [_operation(row) for row in rows]

    def get(self, operation_id: int) -> RecordedOperation:
        with self._session(create=False) as connection:
            row = None
            if 0 < operation_id <= _LARGEST_ID:  # sqlite3 cannot even bind a larger one (OverflowError)
                row = connection.execute(f"SELECT {_COLUMNS} FROM operations WHERE id = ?", (operation_id,)).fetchone()
        if row is None:
            raise CfnrunError(f"no operation {operation_id} in {self.path} (cfnrun history lists them)")
        return _operation(row)

    def events(self, operation_id: int) -> List[Dict[str, Any]]:
        with self._session(create=False) as connection:
            rows = connection.execute("SELECT record FROM events WHERE operation_id = ? ORDER BY seq", (operation_id,)).fetchall()
        return [json.loads(record) for (record,) in rows]

    def hold(self) -> None:
        """Keep one connection open for this thread's writes to come (serve records every call), until ``close``."""
        if getattr(self._thread, "held", None) is None:  # every recorded call asks: no property on the way
            try:
                self._thread.held = self._connect(create=True)
            except (sqlite3.Error, OSError) as error:  # a damaged file, a folder it cannot write: named, as every session does
                raise self._unusable(error) from None

    def close(self) -> None:
        """Close this thread's held connection."""
        if self._held is not None:
            self._held.close()
            self._thread.held = None

    @property
    def _held(self) -> Optional[sqlite3.Connection]:
        held: Optional[sqlite3.Connection] = getattr(self._thread, "held", None)
        return held

    def batch(self, connection: Optional[sqlite3.Connection] = None) -> "_Batch":
        """The writes inside, on this thread, in one transaction (serve's history writer: one commit for many calls),
        through ``connection`` when given (``writer_connection``), else through this thread's held one."""
        return _Batch(self, connection)

    def writer_connection(self) -> sqlite3.Connection:
        """A connection for ``batch`` that any thread may use, one at a time, and that never folds the write-ahead log
        back into the file as it commits (``checkpoint`` does, on another connection, and closing it does); each batch
        takes the write lock first (``begin_batch``). Raises CfnrunError."""
        try:
            connection = self._connect(create=True, shared=True)
            connection.execute("PRAGMA wal_autocheckpoint = 0")
        except (sqlite3.Error, OSError) as error:
            raise self._unusable(error) from None
        return connection

    def begin_batch(self, connection: sqlite3.Connection, wait_ms: int) -> bool:
        """Take the file's write lock for a batch on ``connection`` (``writer_connection``), waiting up to ``wait_ms``
        for another process's; False when that process still holds it. Raises CfnrunError."""
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            if str(error) == "database is locked":
                return False
            raise self._unusable(error) from None
        except sqlite3.Error as error:
            raise self._unusable(error) from None
        return True

    def checkpoint(self) -> None:
        """Fold what the write-ahead log holds back into the file, on a connection of its own, without waiting for or
        holding up writers (a passive checkpoint: its syncs of the disk are this thread's to wait on)."""
        try:
            with contextlib.closing(self._connect(create=False)) as connection:
                connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except (sqlite3.Error, OSError, CfnrunError):
            pass  # the next one, or the last connection's close, folds it in

    def _session(self, create: bool) -> "_Session":
        """A transaction (in a batch: part of its); what the database or the disk refuses (a damaged file,
        a full disk) becomes a CfnrunError naming the file."""
        return _Session(self, create)

    def _unusable(self, error: BaseException) -> CfnrunError:
        return CfnrunError(unusable(self.path, "the history", error, "a new history"))


class _Batch:
    """``HistoryStore.batch``: a class rather than a generator, as serve's writer opens one per batch (one per call
    when calls come one after another). Whatever happens inside, what was written is committed as it ends."""

    __slots__ = ("store", "lent", "own")

    def __init__(self, store: HistoryStore, lent: Optional[sqlite3.Connection]) -> None:
        self.store, self.lent = store, lent
        self.own: Optional[sqlite3.Connection] = None

    def __enter__(self) -> None:
        store = self.store
        if self.lent is not None:
            self.own, store._thread.held = store._held, self.lent
        else:
            store.hold()
        store._thread.batching = True
        store._thread.waiting = []  # the events of the batch's records, inserted as it commits

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException], trace: Any) -> None:
        store = self.store
        thread = store._thread
        thread.batching = False
        waiting, thread.waiting = thread.waiting, None
        try:
            with store._session(create=True) as connection:
                if waiting:
                    connection.executemany(_INSERT_EVENTS, waiting)
                if getattr(thread, "pruning", False):
                    thread.pruning = False
                    store._prune(connection)
                # leaving the session commits the batch
        finally:
            if self.lent is not None:
                thread.held = self.own  # the lent connection is the lender's, not this thread's to keep or close


class _Session:
    """``HistoryStore._session``: a class rather than a generator, as serve's writer opens two per call."""

    __slots__ = ("store", "create", "connection")

    def __init__(self, store: HistoryStore, create: bool) -> None:
        self.store, self.create = store, create

    def __enter__(self) -> sqlite3.Connection:
        store = self.store
        try:
            self.connection = store._held or store._connect(self.create)
        except (sqlite3.Error, OSError) as error:
            raise store._unusable(error) from None
        return self.connection

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException], trace: Any) -> None:
        connection, store = self.connection, self.store
        try:
            if kind is None:
                if not getattr(store._thread, "batching", False):
                    try:
                        connection.commit()
                    except (sqlite3.Error, OSError) as failed:
                        _rolled_back(connection)
                        raise store._unusable(failed) from None
            else:
                if getattr(store._thread, "waiting", None):
                    store._thread.waiting = []  # the batch's events wait for operations the rollback takes back
                if isinstance(error, (sqlite3.Error, OSError)):
                    _rolled_back(connection)
                    raise store._unusable(error) from None
                connection.rollback()
        finally:
            if connection is not store._held:
                connection.close()


def _rolled_back(connection: sqlite3.Connection) -> None:
    with contextlib.suppress(sqlite3.Error):
        connection.rollback()


_INSERT_EVENTS = "INSERT INTO events (operation_id, seq, record) VALUES (?, ?, ?)"
_PRUNE = "DELETE FROM operations WHERE id <= (SELECT max(id) FROM operations) - ?"  # max(id): one seek to the rowid tree's end
_PRUNE_EVENTS = "DELETE FROM events WHERE operation_id <= (SELECT max(id) FROM operations) - ?"  # a range of its key's index
# Why the operations' ids are consecutive, whichever process wrote them (serve, one-shot invoke, fuzz, several at once,
# cfnrun versions old and new: all write this file the one way, since the table was first made):
# - ``id INTEGER PRIMARY KEY AUTOINCREMENT``: a new row's id is one more than the larger of the largest id in the
#   table and the largest ever committed (sqlite_sequence). Writers take turns (one write lock per file) and a
#   transaction rolled back, or cut short by a crash, takes back its sqlite_sequence update with its rows.
# - The only rows ever deleted are pruned ones: the oldest, ids up to a bound below the largest (limit >= 1; every
#   cfnrun's prune, this one and the ``ORDER BY id DESC LIMIT 1 OFFSET limit`` before it). The largest id stays, so
#   the largest in the table is the largest ever committed and the next id follows it: appending at one end and
#   cutting at the other keeps one run. (An operation deleted from the middle by hand leaves a gap: until the gap
#   ages out, the store keeps one operation fewer per id missing, never more.)
_LARGEST_ID = 2**63 - 1  # SQLite's largest integer
_COLUMNS = (
    "id, source, token, started_at, type_name, action, function, status, error_code, invocations, duration_s, cfnrun_version, request"
)


def _operation(row: Any) -> RecordedOperation:
    values = list(row)
    values[-1] = json.loads(values[-1])
    return RecordedOperation(*values)
