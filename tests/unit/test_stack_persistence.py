"""Local stacks kept in ``--state``: read back after a restart, never with a NoEcho or writeOnly value on disk."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from cfnrun.stacks.blueprint import Blueprints
from cfnrun.stacks.engine import StackEngine
from cfnrun.stacks.exports import Exports
from cfnrun.stacks.state_db import StateError
from cfnrun.stacks.store import StackError, StackStore
from kept_state import kept_records, kept_text
from test_stack_engine import ACCOUNT, REGION, TWO, Memory, Router, _template

SECRETS = _template(
    dict(TWO, Vault={"Type": "Test::Thing::Resource", "Properties": {"Name": "vault", "Secret": {"Ref": "Pin"}}}),
    Parameters={"Pin": {"Type": "String", "NoEcho": True}},
    Outputs={"Id": {"Value": {"Ref": "First"}, "Export": {"Name": "first-id"}}},
)


def _store(memory: Memory, state: Path) -> StackStore:
    exports = Exports()
    engine = StackEngine(Router(memory), exports, REGION, ACCOUNT)
    store = StackStore(engine, Blueprints(Router(memory), exports, REGION, ACCOUNT), state)
    store.restore()
    return store


def test_stacks_come_back_after_a_restart_and_can_be_deleted(tmp_path: Path) -> None:
    memory = Memory()

    async def first_life() -> None:
        store = _store(memory, tmp_path)
        stack = store.create_stack("kept", SECRETS, {"Pin": "pin-4711"}, {"team": "a"})
        stack.notification_arns, stack.role_arn, stack.timeout_in_minutes = ("arn:topic",), "arn:role", 5  # as CreateStack sets them
        stack.rollback_configuration = {"MonitoringTimeInMinutes": 5}
        await store.settled("kept")

    asyncio.run(first_life())
    written = kept_text(tmp_path)
    assert "pin-4711" not in written
    assert sorted(k.split("-")[0] for k in memory.live) == ["First", "Second", "Vault"]

    async def second_life() -> Any:
        store = _store(memory, tmp_path)
        stack = store.get("kept")
        assert stack.status == "CREATE_COMPLETE" and stack.tags == {"team": "a"}
        assert (stack.notification_arns, stack.role_arn, stack.timeout_in_minutes) == (("arn:topic",), "arn:role", 5)
        assert stack.rollback_configuration == {"MonitoringTimeInMinutes": 5}
        assert [e.name for e in store.engine.exports.all()] == ["first-id"]
        assert stack.shown_parameters() == {}  # the NoEcho value was never kept
        with pytest.raises(StackError, match="NoEcho, and its value is never written to --state"):
            store.update_stack("kept", None, {"Pin": None}, None)
        store.delete_stack("kept")
        return await store.settled(stack.stack_id)

    deleted = asyncio.run(second_life())
    assert deleted.status == "DELETE_COMPLETE"
    assert memory.live == {}
    assert [c[1] for c in memory.calls if c[0] == "delete"][-1] == "First"  # dependants first, as before the restart


def test_an_update_after_a_restart_resolves_again_and_sends_masked_resources_to_update(tmp_path: Path) -> None:
    memory = Memory()

    async def lives() -> Any:
        store = _store(memory, tmp_path)
        store.create_stack("kept", SECRETS, {"Pin": "pin-4711"}, {})
        await store.settled("kept")
        memory.calls.clear()
        store = _store(memory, tmp_path)
        store.update_stack("kept", None, {"Pin": "pin-4711"}, None)
        return await store.settled("kept")

    stack = asyncio.run(lives())
    assert stack.status == "UPDATE_COMPLETE"
    # Vault's properties held secrets, so they were not kept: cfnrun cannot tell it is unchanged, and updates it.
    assert [(c[0], c[1]) for c in memory.calls] == [("update", "Vault")]


def test_a_stack_caught_mid_operation_is_read_back_failed(tmp_path: Path) -> None:
    memory = Memory()

    async def interrupted() -> None:
        store = _store(memory, tmp_path)
        memory.gate = asyncio.Event()
        store.create_stack("cut", _template(TWO), {}, {})
        while memory.running < 1:
            await asyncio.sleep(0)
        # serve stops here: the state holds the create in progress

    asyncio.run(interrupted())
    store = _store(Memory(), tmp_path)
    stack = store.get("cut")
    assert stack.status == "CREATE_FAILED"
    assert stack.reason == "cfnrun serve stopped during this operation; its resources are as last recorded"
    # on disk it stays as it was until the operation that carries it on (its rollback) writes its first event: a serve
    # stopped before that leaves it for the next serve to carry on (c0ae01d)
    assert kept_records(tmp_path)[0]["status"] == "CREATE_IN_PROGRESS"


def test_a_state_file_cfnrun_did_not_write_is_refused_plainly(tmp_path: Path) -> None:
    (tmp_path / "stacks.json").write_text('{"something": "else"}', encoding="utf-8")
    with pytest.raises(StateError, match="not a stacks file cfnrun wrote"):
        _store(Memory(), tmp_path)


def test_a_yaml_template_with_a_noecho_default_is_read_back_as_written(tmp_path: Path) -> None:
    # Masked in the template, the Default would read back as "Default: ****": a YAML alias, not a template.
    body = (
        "Parameters:\n  Pin:\n    Type: String\n    NoEcho: true\n    Default: dev-pin\n"
        "Resources:\n  First:\n    Type: Test::Thing::Resource\n    Properties: {Name: one, Size: 1}\n"
    )
    memory = Memory()

    async def first_life() -> None:
        store = _store(memory, tmp_path)
        store.create_stack("defaulted", body, {}, {})
        await store.settled("defaulted")

    asyncio.run(first_life())
    [record] = kept_records(tmp_path)
    assert record["template_body"] == body  # the user's own file, as it was given
    assert "dev-pin" not in json.dumps({key: value for key, value in record.items() if key != "template_body"})

    async def second_life() -> str:
        return _store(memory, tmp_path).get("defaulted").status

    assert asyncio.run(second_life()) == "CREATE_COMPLETE"
