"""The ``--state`` database: one row per stack, events appended, a format version, plain errors, the JSON file migrated."""
from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from pathlib import Path

import pytest

from cfnrun.stacks.state_db import FILE, StateDatabase, StateError
from kept_state import kept_records
from test_stack_engine import Memory, TWO, _template
from test_stack_persistence import _store


def _create(folder: Path, *names: str) -> None:
    memory = Memory()

    async def life() -> None:
        store = _store(memory, folder)
        for name in names:
            store.create_stack(name, _template(TWO), {}, {})
            await store.settled(name)
        await store.close(1)

    asyncio.run(life())


def test_an_event_writes_its_own_stack_and_appends_its_events_only(tmp_path: Path) -> None:
    _create(tmp_path, "one", "two")
    with sqlite3.connect(tmp_path / FILE) as connection:
        rows = dict(connection.execute("SELECT stack_id, record FROM stacks").fetchall())
        counts = dict(connection.execute("SELECT stack_id, COUNT(*) FROM stack_events GROUP BY stack_id").fetchall())
        (version,) = connection.execute("PRAGMA user_version").fetchone()
    assert version == 1
    assert sorted(json.loads(r)["name"] for r in rows.values()) == ["one", "two"]
    assert all("events" not in json.loads(r) for r in rows.values())  # events are rows of their own, never rewritten
    records = kept_records(tmp_path)
    assert [len(r["events"]) for r in records] == [counts[r["stack_id"]] for r in records]
    assert records[0]["events"][-1]["status"] == "CREATE_COMPLETE"


def test_a_json_state_of_an_earlier_cfnrun_is_read_in_once_and_kept_aside(tmp_path: Path) -> None:
    _create(tmp_path, "old")
    [record] = kept_records(tmp_path)
    (tmp_path / FILE).unlink()
    (tmp_path / "stacks.json").write_text(json.dumps({"format": 1, "stacks": [record]}), encoding="utf-8")
    store = _store(Memory(), tmp_path)
    assert store.get("old").status == "CREATE_COMPLETE"
    assert len(store.get("old").events) == len(record["events"])
    assert not (tmp_path / "stacks.json").exists() and (tmp_path / "stacks.json.migrated").exists()
    assert [r["name"] for r in kept_records(tmp_path)] == ["old"]


def test_a_damaged_database_is_one_plain_error(tmp_path: Path) -> None:
    (tmp_path / FILE).write_bytes(b"this is not SQLite at all, " * 100)
    with pytest.raises(StateError, match=r"stacks\.sqlite3: cannot use the stacks kept there: file is not a database; move it aside"):
        _store(Memory(), tmp_path)


def test_a_damaged_stack_record_is_one_plain_error_naming_the_stack(tmp_path: Path) -> None:
    _create(tmp_path, "broken")
    with sqlite3.connect(tmp_path / FILE) as connection:
        (record,) = connection.execute("SELECT record FROM stacks").fetchone()
        damaged = {k: v for k, v in json.loads(record).items() if k != "resources"}
        connection.execute("UPDATE stacks SET record = ?", (json.dumps(damaged),))
    with pytest.raises(StateError, match=r"the record of stack broken is damaged \(KeyError: 'resources'\)"):
        _store(Memory(), tmp_path)


def test_a_newer_format_is_refused_not_guessed_at(tmp_path: Path) -> None:
    _create(tmp_path, "later")
    with sqlite3.connect(tmp_path / FILE) as connection:
        connection.execute("PRAGMA user_version = 7")
    with pytest.raises(StateError, match="kept by a cfnrun of state format 7; this one reads format 1"):
        _store(Memory(), tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders")
def test_a_read_only_folder_is_one_plain_error(tmp_path: Path) -> None:
    folder = tmp_path / "kept"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(StateError, match=r"kept/stacks\.sqlite3: cannot use the stacks kept there: unable to open database file"):
            StateDatabase(folder).open()
    finally:
        folder.chmod(0o700)


def test_a_store_kept_before_the_token_and_replacement_tables_gains_them_in_the_same_format(tmp_path: Path) -> None:
    _create(tmp_path, "older")
    with sqlite3.connect(tmp_path / FILE) as connection:  # as a cfnrun of format 1 without them wrote it
        connection.execute("DROP TABLE request_tokens")
        connection.execute("DROP TABLE replaced")
    database = StateDatabase(tmp_path)
    database.open()
    try:
        [record] = database.records()
        database.put_request_token("CreateStack", "older", "token-1", record["stack_id"])
        database.put_replaced(record["stack_id"], "Db", {"logical_id": "Db", "type_name": "T", "status": "CREATE_COMPLETE"})
        assert database.request_tokens() == [("CreateStack", "older", "token-1", record["stack_id"])]
        assert [r["logical_id"] for r in database.replaced()] == ["Db"]
        database.drop_replaced(record["stack_id"])
        assert database.replaced() == []
    finally:
        database.close()
    with sqlite3.connect(tmp_path / FILE) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (1,)


def test_a_first_create_call_is_written_down_before_it_is_made_with_its_secrets_masked_and_crossed_out_after(tmp_path: Path) -> None:
    memory = Memory()
    secret = {"Only": {"Type": "Test::Thing::Resource", "Properties": {"Name": "one", "Secret": "hunter2-value"}}}

    async def life() -> None:
        store = _store(memory, tmp_path)
        assert store.database is not None
        memory.gate = asyncio.Event()  # the CREATE call waits here: in flight
        store.create_stack("one", _template(secret), {}, {}, token="create-token-1")
        while not memory.running:
            await asyncio.sleep(0)
        [call] = store.database.first_calls()
        assert (call["logical_id"], call["type"], call["token"], call["masked"]) == ("Only", "Test::Thing::Resource", "create-token-1", True)
        assert call["properties"] == {"Name": "one", "Secret": "<masked>"}
        memory.gate.set()
        await store.settled("one")
        assert store.database.first_calls() == []  # the record names the resource now
        await store.close(1)

    asyncio.run(life())
