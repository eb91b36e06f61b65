"""cfnrun's SQLite files (history, ``--state``): opened the one way, their failures told in one line.

Each is opened in write-ahead-log mode (a reader never blocks the writer, and a crash, however
it ends the process, leaves the last committed transaction), with foreign keys on (the history's writer turns them off on its
connection and keeps events with their operations itself: ``history/store.py``). What SQLite or
the disk refuses (a damaged file, a read-only folder, a full disk) becomes one sentence that names
the file, for a CfnrunError.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path


def open_wal(path: Path, schema: str, synchronous: str = "NORMAL", shared: bool = False) -> sqlite3.Connection:
    """A connection to write through: the file and ``schema``'s tables made as needed (``shared``: usable from any
    thread, one at a time). Raises sqlite3.Error or OSError."""
    connection = sqlite3.connect(str(path), timeout=10, check_same_thread=not shared)
    try:
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute(f"PRAGMA synchronous = {synchronous}")
        connection.executescript(schema)
    except BaseException:
        connection.close()
        raise
    return connection


class OtherFormat(Exception):
    """The file was written by a cfnrun of another format."""

    def __init__(self, version: int) -> None:
        super().__init__(f"format {version}")
        self.version = version


def open_versioned(path: Path, schema: str, version: int) -> sqlite3.Connection:
    """``open_wal`` in a folder made as needed; a new file is stamped with ``version``, and a file stamped with
    another raises OtherFormat. Raises sqlite3.Error or OSError."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = open_wal(path, schema)
    try:
        (found,) = connection.execute("PRAGMA user_version").fetchone()
        if found == 0:
            connection.execute(f"PRAGMA user_version = {version}")
        elif found != version:
            raise OtherFormat(found)
    except BaseException:
        connection.close()
        raise
    return connection


def unusable(path: Path, what: str, error: BaseException, fresh: str) -> str:
    """The one line for a file SQLite or the disk refused; ``fresh``: what moving a damaged file aside gives."""
    reason = str(error) or type(error).__name__
    if isinstance(error, sqlite3.DatabaseError) and ("not a database" in reason or "malformed" in reason):
        reason += f"; move it aside (or delete it) and cfnrun starts {fresh}"
    return f"{path}: cannot use {what}: {reason}"
