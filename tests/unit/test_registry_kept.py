"""registry.sqlite3 keeps each SetTypeConfiguration and reads back a file an earlier cfnrun wrote without them (#34)."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from cfnrun.registry.kept import FILE, FORMAT, KeptRegistry

CONFIGURATION = {"arn": "arn:aws:cloudformation:us-east-1:123456789012:type-configuration/hook/Org-Svc-Guard/default",
                 "params": {"Type": "HOOK", "TypeName": "Org::Svc::Guard", "Configuration": "{}"}, "set": "2026-11-27T03:00:00+00:00"}
REGISTRATION = {"token": "t-1", "kind": "HOOK", "type_name": "Org::Svc::Guard", "type_arn": "arn", "client_token": "release-7"}


def test_configurations_and_client_tokens_are_read_back_as_saved(tmp_path: Path) -> None:
    kept = KeptRegistry(tmp_path)
    kept.save([], [REGISTRATION], "publisher", [CONFIGURATION])
    kept.close()
    again = KeptRegistry(tmp_path).load()
    assert (again.configurations, again.registrations, again.publisher_id) == ([CONFIGURATION], [REGISTRATION], "publisher")


def test_a_file_kept_before_configurations_were_kept_reads_back_with_none(tmp_path: Path) -> None:
    earlier = sqlite3.connect(tmp_path / FILE)  # the tables an earlier cfnrun of the same format made, without configurations
    earlier.executescript(
        "CREATE TABLE types (position INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, type_name TEXT NOT NULL, record TEXT NOT NULL,"
        " UNIQUE (kind, type_name));"
        "CREATE TABLE registrations (position INTEGER PRIMARY KEY AUTOINCREMENT, token TEXT NOT NULL UNIQUE, record TEXT NOT NULL);"
        "CREATE TABLE publisher (one INTEGER PRIMARY KEY CHECK (one = 1), publisher_id TEXT NOT NULL);"
        f"INSERT INTO publisher VALUES (1, 'kept'); PRAGMA user_version = {FORMAT};"
    )
    earlier.close()
    loaded = KeptRegistry(tmp_path).load()
    assert (loaded.publisher_id, loaded.configurations) == ("kept", [])
