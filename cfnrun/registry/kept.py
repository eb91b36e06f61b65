"""The registry kept in the ``--state`` folder: ``registry.sqlite3``, read back when serve starts again with the same folder.

What is kept is what the registry's API answers from: each type (its versions, default version, last
version number, publication and activation), each registration (its token, status, description and
the ClientRequestToken it was sent with), each SetTypeConfiguration (set again by the next serve) and
the publisher id. Each change writes the whole registry in one transaction (registrations are few and
rare: a change costs the same as the registry is small). The packages themselves stay unpacked in the
state folder's ``registry/`` (``TYPE/TOKEN/``), where the versions' records point. The file is SQLite in
write-ahead-log mode (``model/sqlite_file.py``), its format ``PRAGMA user_version``: a newer one is
refused, not guessed at.
"""
from __future__ import annotations

import datetime
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from cfnrun.model.errors import CfnrunError
from cfnrun.model.sqlite_file import OtherFormat, open_versioned, unusable

FILE = "registry.sqlite3"
FORMAT = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS types (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    type_name TEXT NOT NULL,
    record TEXT NOT NULL,
    UNIQUE (kind, type_name)
);
CREATE TABLE IF NOT EXISTS registrations (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    token TEXT NOT NULL UNIQUE,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS configurations (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    arn TEXT NOT NULL UNIQUE,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS publisher (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    publisher_id TEXT NOT NULL
);
"""

Record = Dict[str, Any]


@dataclass(frozen=True)
class Kept:
    """What ``load`` read back."""

    types: List[Record]
    registrations: List[Record]
    publisher_id: Optional[str]
    configurations: List[Record]


class KeptRegistryError(CfnrunError):
    """The registry's file in the state folder cannot be read or written: one line that names the file."""


class KeptRegistry:
    """``registry.sqlite3`` in ``folder``: ``load`` what an earlier serve kept, ``save`` each change."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / FILE
        self._connection: Optional[sqlite3.Connection] = None

    def _open(self) -> sqlite3.Connection:
        if self._connection is not None:
            return self._connection
        try:
            connection = open_versioned(self.path, _SCHEMA, FORMAT)
        except OtherFormat as other:
            raise KeptRegistryError(f"{self.path}: kept by a cfnrun of registry format {other.version}; this one reads format {FORMAT}") from None
        except (sqlite3.Error, OSError) as error:
            raise self._unusable(error) from None
        self._connection = connection
        return connection

    def _unusable(self, error: BaseException) -> KeptRegistryError:
        return KeptRegistryError(unusable(self.path, "the registry kept there", error, "with an empty registry"))

    def load(self) -> Kept:
        """What was kept: types, registrations and configurations in the order they were made, and the publisher id; nothing kept: empty."""
        connection = self._open()
        try:
            types = [json.loads(row[0]) for row in connection.execute("SELECT record FROM types ORDER BY position")]
            registrations = [json.loads(row[0]) for row in connection.execute("SELECT record FROM registrations ORDER BY position")]
            configurations = [json.loads(row[0]) for row in connection.execute("SELECT record FROM configurations ORDER BY position")]
            publisher = connection.execute("SELECT publisher_id FROM publisher").fetchone()
        except (sqlite3.Error, ValueError) as error:
            raise self._unusable(error) from None
        return Kept(types, registrations, publisher[0] if publisher else None, configurations)

    def save(self, types: List[Record], registrations: List[Record], publisher_id: Optional[str], configurations: Sequence[Record] = ()) -> None:
        """The registry as it is now, in place of what was kept, in one transaction."""
        connection = self._open()
        try:
            with connection:
                for table in ("types", "registrations", "configurations", "publisher"):
                    connection.execute(f"DELETE FROM {table}")  # noqa: S608 - the table names above, not input
                connection.executemany(
                    "INSERT INTO types (kind, type_name, record) VALUES (?, ?, ?)",
                    [(record["kind"], record["type_name"], json.dumps(record)) for record in types],
                )
                connection.executemany(
                    "INSERT INTO registrations (token, record) VALUES (?, ?)", [(record["token"], json.dumps(record)) for record in registrations]
                )
                connection.executemany(
                    "INSERT INTO configurations (arn, record) VALUES (?, ?)", [(record["arn"], json.dumps(record)) for record in configurations]
                )
                if publisher_id is not None:
                    connection.execute("INSERT INTO publisher (one, publisher_id) VALUES (1, ?)", (publisher_id,))
        except (sqlite3.Error, OSError) as error:
            raise self._unusable(error) from None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def moment(value: datetime.datetime) -> str:
    return value.isoformat()


def read_moment(value: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(value)
