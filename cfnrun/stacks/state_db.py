"""The ``--state`` database: ``stacks.sqlite3`` in the state folder, one row per stack and one per event.

Each stack event writes one transaction: the stack's own row (its record without events, replaced)
and the events it has not written yet (appended). Nothing else is read or rewritten, so an event
costs the same with one stack kept or with thousands (the JSON file it replaces was rewritten whole
on every event). The file is SQLite in write-ahead-log mode, as the history is
(``model/sqlite_file.py``): a process killed at any point leaves the last committed event. Its format
is ``PRAGMA user_version``; a file of a newer format is refused, not guessed at.

A ``stacks.json`` of an earlier cfnrun in the folder is read in on first open and renamed
``stacks.json.migrated``.

The ``validation_events`` table holds each operation's pre-deployment validation failures (DescribeEvents'
``VALIDATION_ERROR`` events; a table added to format 1, created in a file that lacks it).

The ``invocations`` table holds, for each resource operation still in flight, the last IN_PROGRESS answer
its handler gave (``in_flight.py``: the action, clientRequestToken, callbackContext and physical id); the
row goes when the resource's status leaves ``*_IN_PROGRESS``.

The ``replaced`` table holds the old physical resource of each replacement an update in flight made (it is no longer
in the stack's own record, whose resource is the new one), until the update or its rollback completes (``in_flight.py``).
The ``superseded`` table holds, for a stack whose update failed with rollback disabled (UPDATE_FAILED) and was followed
by another, the old resources of that update's replacements (and any before it), one row per stack, until they are
deleted (a table added to format 1, created in a file that lacks it).

The ``first_calls`` table holds each resource's first CREATE call (and each custom resource's Update, which may make a new
physical resource) while it is in flight, written before the call is made
(``in_flight.py``: the type, the handler's clientRequestToken and the properties as events show them, writeOnly and NoEcho
values masked): the one moment no record knows the resource's identifier. The row goes once the stack's record names the
resource, or the call ended without making it; one left by a killed serve is how the next one finds the resource
(``unanswered_creates.py``).

``one_transaction`` holds several writes (several stacks' records: a stack refactor moving a resource from one to another)
in one transaction, so that a process killed at any point leaves them all as they were or all as they became.

The ``iac_generator`` table holds the IaC generator's resource scans and generated templates once each settles
(``resource_scans.py``, ``generated_templates.py``), so that a restart with ``--state`` lists them again; one in progress
when serve stopped is not kept (its LISTs or READs ended with that serve).

The ``request_tokens`` table holds the ClientRequestToken of each stack name's last CreateStack, UpdateStack and
DeleteStack (``request_tokens.py``), so that a retry after a restart is answered as the first call was.
The ``change_sets`` table holds each change set as it last changed (``kept_change_sets.py``: its plan, template, values
that are not NoEcho, statuses and settings), until it is deleted (a table added to format 1, created in a file that lacks it);
the ``stack_refactors`` table each stack refactor, alike (``kept_refactors.py``).
"""
from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

from cfnrun.model.sqlite_file import OtherFormat, open_versioned, unusable

FILE = "stacks.sqlite3"
FORMAT = 1
JSON_FILE = "stacks.json"  # what cfnrun kept before the database
JSON_FORMAT = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS stacks (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    stack_id TEXT NOT NULL UNIQUE,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS stack_events (
    stack_id TEXT NOT NULL REFERENCES stacks(stack_id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (stack_id, seq)
);
CREATE TABLE IF NOT EXISTS validation_events (
    event_id TEXT PRIMARY KEY,
    stack_id TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS invocations (
    stack_id TEXT NOT NULL,
    logical_id TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (stack_id, logical_id)
);
CREATE TABLE IF NOT EXISTS replaced (
    stack_id TEXT NOT NULL,
    logical_id TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (stack_id, logical_id)
);
CREATE TABLE IF NOT EXISTS superseded (
    stack_id TEXT PRIMARY KEY,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS first_calls (
    stack_id TEXT NOT NULL,
    logical_id TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (stack_id, logical_id)
);
CREATE TABLE IF NOT EXISTS request_tokens (
    operation TEXT NOT NULL,
    stack_name TEXT NOT NULL,
    token TEXT NOT NULL,
    stack_id TEXT NOT NULL,
    PRIMARY KEY (operation, stack_name)
);
CREATE TABLE IF NOT EXISTS change_sets (
    change_set_id TEXT PRIMARY KEY,
    stack_id TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS stack_refactors (
    refactor_id TEXT PRIMARY KEY,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS iac_generator (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (kind, id)
);
"""


class StateError(Exception):
    """The state folder cannot be read back or written: one line that names the file."""


class StateDatabase:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / FILE
        self._connection: Optional[sqlite3.Connection] = None
        self._written: Dict[str, int] = {}  # events already in the file, by stack id
        self._held = 0  # inside ``one_transaction``: the writes wait for its end to be committed, all at once

    def open(self) -> None:
        """Open (or make) the file, check its format, and read in an earlier ``stacks.json``. Raises StateError."""
        if self._connection is not None:
            return
        try:
            connection = open_versioned(self.path, _SCHEMA, FORMAT)
        except OtherFormat as other:
            raise StateError(f"{self.path}: kept by a cfnrun of state format {other.version}; this one reads format {FORMAT}") from None
        except (sqlite3.Error, OSError) as error:
            raise self._unusable(error) from None
        self._connection = connection
        self._migrate()

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def records(self) -> List[Dict[str, Any]]:
        """Every stack as written, its events under ``"events"``, in the order they were first kept."""
        with self._session() as connection:
            rows = connection.execute("SELECT stack_id, record FROM stacks ORDER BY position").fetchall()
            events: Dict[str, List[Any]] = {}
            for stack_id, record in connection.execute("SELECT stack_id, record FROM stack_events ORDER BY stack_id, seq"):
                events.setdefault(stack_id, []).append(json.loads(record))
        records = []
        for stack_id, text in rows:
            record = json.loads(text)
            if not isinstance(record, dict):
                raise StateError(f"{self.path}: stack {stack_id}: its record is not one cfnrun wrote")
            record["events"] = events.get(stack_id, [])
            self._written[stack_id] = len(record["events"])
            records.append(record)
        return records

    def written(self, stack_id: str) -> int:
        """How many of the stack's events are written already."""
        return self._written.get(stack_id, 0)

    def put(self, record: Dict[str, Any], events_from: int = 0) -> None:
        """Write one stack: its row replaced, the events not written yet appended (``record["events"]``: its events from
        number ``events_from`` on; all of them by default)."""
        stack_id = record["stack_id"]
        head = {key: value for key, value in record.items() if key != "events"}
        events = record["events"]
        first = max(self._written.get(stack_id, 0), events_from)  # the first event not written yet
        with self._session() as connection:
            connection.execute(
                "INSERT INTO stacks (stack_id, record) VALUES (?, ?) ON CONFLICT(stack_id) DO UPDATE SET record = excluded.record",
                (stack_id, json.dumps(head, default=str)),
            )
            connection.executemany(
                "INSERT OR REPLACE INTO stack_events (stack_id, seq, record) VALUES (?, ?, ?)",
                [(stack_id, first + n, json.dumps(event, default=str)) for n, event in enumerate(events[first - events_from:])],
            )
            settled = [r["logical_id"] for r in head.get("resources") or () if not str(r.get("status", "")).endswith("_IN_PROGRESS")]
            connection.executemany(  # an operation that ended is no longer in flight
                "DELETE FROM invocations WHERE stack_id = ? AND logical_id = ?", [(stack_id, logical_id) for logical_id in settled]
            )
        self._written[stack_id] = events_from + len(events)

    def drop(self, stack_id: str) -> None:
        """Forget a stack that never was (a change set refused before its stack was used)."""
        with self._session() as connection:
            connection.execute("DELETE FROM stacks WHERE stack_id = ?", (stack_id,))
            connection.execute("DELETE FROM validation_events WHERE stack_id = ?", (stack_id,))
        self._written.pop(stack_id, None)

    # -- pre-deployment validation failures (``operation_events.py``) ------------------------------------

    def put_validation_events(self, stack_id: str, records: List[Dict[str, Any]]) -> None:
        with self._session() as connection:
            connection.executemany(
                "INSERT OR REPLACE INTO validation_events (event_id, stack_id, record) VALUES (?, ?, ?)",
                [(record["event_id"], stack_id, json.dumps(record, default=str)) for record in records],
            )

    def validation_events(self) -> List[Dict[str, Any]]:
        with self._session() as connection:
            rows = connection.execute("SELECT record FROM validation_events ORDER BY rowid").fetchall()
        return [record for record in (json.loads(text) for (text,) in rows) if isinstance(record, dict)]

    # -- resource operations in flight (``in_flight.py``) -----------------------------------------------

    def put_invocation(self, stack_id: str, logical_id: str, record: Dict[str, Any]) -> None:
        with self._session() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO invocations (stack_id, logical_id, record) VALUES (?, ?, ?)",
                (stack_id, logical_id, json.dumps(record, default=str)),
            )

    def invocations(self) -> List[Dict[str, Any]]:
        with self._session() as connection:
            rows = connection.execute("SELECT stack_id, logical_id, record FROM invocations ORDER BY rowid").fetchall()
        found = []
        for stack_id, logical_id, text in rows:
            record = json.loads(text)
            if isinstance(record, dict):
                found.append(dict(record, stack_id=stack_id, logical_id=logical_id))
        return found

    # -- first CREATE calls in flight (``in_flight.py``, ``unanswered_creates.py``) -----------------------------

    def put_first_call(self, stack_id: str, logical_id: str, record: Dict[str, Any]) -> None:
        with self._session() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO first_calls (stack_id, logical_id, record) VALUES (?, ?, ?)",
                (stack_id, logical_id, json.dumps(record, default=str)),
            )

    def drop_first_call(self, stack_id: str, logical_id: str) -> None:
        with self._session() as connection:
            connection.execute("DELETE FROM first_calls WHERE stack_id = ? AND logical_id = ?", (stack_id, logical_id))

    def first_calls(self) -> List[Dict[str, Any]]:
        """Each first call kept, its stack's id and logical id under ``"stack_id"`` and ``"logical_id"``."""
        with self._session() as connection:
            rows = connection.execute("SELECT stack_id, logical_id, record FROM first_calls ORDER BY rowid").fetchall()
        found = []
        for stack_id, logical_id, text in rows:
            record = json.loads(text)
            if isinstance(record, dict):
                found.append(dict(record, stack_id=stack_id, logical_id=logical_id))
        return found

    # -- the old resource of each replacement in flight (``in_flight.py``) --------------------------------

    def put_replaced(self, stack_id: str, logical_id: str, record: Dict[str, Any]) -> None:
        with self._session() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO replaced (stack_id, logical_id, record) VALUES (?, ?, ?)",
                (stack_id, logical_id, json.dumps(record, default=str)),
            )

    def drop_replaced(self, stack_id: str) -> None:
        with self._session() as connection:
            connection.execute("DELETE FROM replaced WHERE stack_id = ?", (stack_id,))

    def replaced(self) -> List[Dict[str, Any]]:
        """Each old resource kept, its stack's id under ``"stack_id"``."""
        with self._session() as connection:
            rows = connection.execute("SELECT stack_id, record FROM replaced ORDER BY rowid").fetchall()
        found = []
        for stack_id, text in rows:
            record = json.loads(text)
            if isinstance(record, dict):
                found.append(dict(record, stack_id=stack_id))
        return found

    def put_superseded(self, stack_id: str, batches: List[Dict[str, Any]]) -> None:
        """The stack's superseded old resources, one dict (logical id to record) per failed update; none: the row goes."""
        with self._session() as connection:
            if batches:
                connection.execute(
                    "INSERT OR REPLACE INTO superseded (stack_id, record) VALUES (?, ?)", (stack_id, json.dumps(batches, default=str))
                )
            else:
                connection.execute("DELETE FROM superseded WHERE stack_id = ?", (stack_id,))

    def superseded(self) -> Dict[str, List[Dict[str, Dict[str, Any]]]]:
        """Each stack's superseded old resources, by stack id."""
        with self._session() as connection:
            rows = connection.execute("SELECT stack_id, record FROM superseded").fetchall()
        found = {}
        for stack_id, text in rows:
            batches = json.loads(text)
            if isinstance(batches, list):
                found[stack_id] = [dict(batch) for batch in batches if isinstance(batch, dict)]
        return found

    # -- ClientRequestTokens (``request_tokens.py``) -------------------------------------------------------

    def put_request_token(self, operation: str, stack_name: str, token: str, stack_id: str) -> None:
        with self._session() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO request_tokens (operation, stack_name, token, stack_id) VALUES (?, ?, ?, ?)",
                (operation, stack_name, token, stack_id),
            )

    def request_tokens(self) -> List[Tuple[str, str, str, str]]:
        """Each kept token: (operation, stack name, token, stack id)."""
        with self._session() as connection:
            rows = connection.execute("SELECT operation, stack_name, token, stack_id FROM request_tokens").fetchall()
        return [(str(operation), str(name), str(token), str(stack_id)) for operation, name, token, stack_id in rows]

    def put_generated(self, kind: str, item_id: str, record: Dict[str, Any]) -> None:
        """An IaC generator's resource scan or generated template (``kind``), as it settled."""
        with self._session() as connection:
            connection.execute(
                "INSERT INTO iac_generator (kind, id, record) VALUES (?, ?, ?) ON CONFLICT (kind, id) DO UPDATE SET record = excluded.record",
                (kind, item_id, json.dumps(record)),
            )  # an update keeps its place in the order

    def drop_generated(self, kind: str, item_id: str) -> None:
        with self._session() as connection:
            connection.execute("DELETE FROM iac_generator WHERE kind = ? AND id = ?", (kind, item_id))

    def generated(self, kind: str) -> List[Dict[str, Any]]:
        """The kept resource scans or generated templates, in the order first kept."""
        with self._session() as connection:
            rows = connection.execute("SELECT record FROM iac_generator WHERE kind = ? ORDER BY rowid", (kind,)).fetchall()
        return [json.loads(record) for (record,) in rows]

    def put_change_set(self, change_set_id: str, stack_id: str, record: Dict[str, Any]) -> None:
        """A change set as it last changed (its place in the order kept)."""
        with self._session() as connection:
            connection.execute(
                "INSERT INTO change_sets (change_set_id, stack_id, record) VALUES (?, ?, ?) "
                "ON CONFLICT (change_set_id) DO UPDATE SET record = excluded.record",
                (change_set_id, stack_id, json.dumps(record)),
            )

    def drop_change_set(self, change_set_id: str) -> None:
        with self._session() as connection:
            connection.execute("DELETE FROM change_sets WHERE change_set_id = ?", (change_set_id,))

    def change_sets(self) -> List[Dict[str, Any]]:
        """The kept change sets, in the order they were made."""
        with self._session() as connection:
            rows = connection.execute("SELECT record FROM change_sets ORDER BY rowid").fetchall()
        return [json.loads(record) for (record,) in rows]

    def put_refactor(self, refactor_id: str, record: Dict[str, Any]) -> None:
        """A stack refactor as it last changed (its place in the order kept)."""
        with self._session() as connection:
            connection.execute(
                "INSERT INTO stack_refactors (refactor_id, record) VALUES (?, ?) ON CONFLICT (refactor_id) DO UPDATE SET record = excluded.record",
                (refactor_id, json.dumps(record)),
            )

    def refactors(self) -> List[Dict[str, Any]]:
        """The kept stack refactors, in the order they were made."""
        with self._session() as connection:
            rows = connection.execute("SELECT record FROM stack_refactors ORDER BY rowid").fetchall()
        return [json.loads(record) for (record,) in rows]

    # -- the file ---------------------------------------------------------------------------------------

    def _migrate(self) -> None:
        """Read in the ``stacks.json`` an earlier cfnrun kept here, once; it is renamed, not deleted."""
        old = self.folder / JSON_FILE
        if not old.exists():
            return
        try:
            document = json.loads(old.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise StateError(f"{old}: cannot read the stacks an earlier cfnrun kept there: {error}") from None
        if not isinstance(document, dict) or document.get("format") != JSON_FORMAT or not isinstance(document.get("stacks"), list):
            raise StateError(f"{old}: not a stacks file cfnrun wrote (format {JSON_FORMAT} expected)")
        with self._session() as connection:
            (kept,) = connection.execute("SELECT COUNT(*) FROM stacks").fetchone()
        if not kept:  # a migration cut off after its commit has them already
            for record in document["stacks"]:
                if not isinstance(record, dict) or not isinstance(record.get("stack_id"), str) or not isinstance(record.get("events"), list):
                    raise StateError(f"{old}: a stack record there is not one cfnrun wrote")
                self.put(record)
        try:
            old.replace(old.with_name(JSON_FILE + ".migrated"))
        except OSError as error:
            raise StateError(f"{old}: read into {self.path}, but cannot be renamed: {error.strerror or error}") from None

    @contextlib.contextmanager
    def one_transaction(self) -> Iterator[None]:
        """Every write made inside is committed at its end, together, or none is: several stacks' records that must change
        at once (a stack refactor moves a resource from one record to another; a process killed between two commits would
        leave it in both, or in neither once the second went first)."""
        if self._connection is None:
            raise StateError(f"{self.path}: not open")
        connection, written = self._connection, dict(self._written)
        self._held += 1
        try:
            yield
        except BaseException:
            self._held -= 1
            with contextlib.suppress(sqlite3.Error):
                connection.rollback()
            self._written = written
            raise
        self._held -= 1
        if self._held == 0:
            try:
                connection.commit()
            except (sqlite3.Error, OSError) as error:
                with contextlib.suppress(sqlite3.Error):
                    connection.rollback()
                self._written = written
                raise self._unusable(error) from None

    @contextlib.contextmanager
    def _session(self) -> Iterator[sqlite3.Connection]:
        """One transaction, committed at the end; what SQLite or the disk refuses becomes a StateError naming the file."""
        if self._connection is None:
            raise StateError(f"{self.path}: not open")
        connection = self._connection
        try:
            yield connection
            if not self._held:
                connection.commit()
        except (sqlite3.Error, OSError, ValueError) as error:
            with contextlib.suppress(sqlite3.Error):
                connection.rollback()
            raise self._unusable(error) from None
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                connection.rollback()
            raise

    def _unusable(self, error: BaseException) -> StateError:
        return StateError(unusable(self.path, "the stacks kept there", error, "with no stacks kept"))
