"""Change sets kept in ``--state``: read back after a restart with the plan they showed, executable when what executing
needs was kept, never with a NoEcho or writeOnly value on disk."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

from cfnrun.stacks.change_sets import ChangeSet
from cfnrun.stacks.state_db import StateDatabase
from cfnrun.stacks.store import StackError, StackStore
from kept_state import kept_records, kept_text
from test_stack_engine import TWO, Memory, _template
from test_stack_persistence import _store

CHANGED = dict(TWO, First={"Type": "Test::Thing::Resource", "Properties": {"Name": "one", "Size": 2, "Secret": "hush-123"}})
WITH_PIN = {"Parameters": {"Pin": {"Type": "String", "NoEcho": True, "Default": "pin-default"}}}
PINNED = dict(TWO, First={"Type": "Test::Thing::Resource", "Properties": {"Name": "one", "Size": 3, "Tag": {"Ref": "Pin"}}})


def _shown(change_set: ChangeSet) -> Tuple[Any, ...]:
    """What DescribeChangeSet shows of a change set: its statuses, parameters and the plan's changes."""
    return (change_set.status, change_set.execution_status, change_set.stack_id, change_set.name, change_set.tags,
            change_set.description, [(c.action, c.logical_id, c.physical_id, c.replacement, c.scope) for c in change_set.changes])


async def _made(store: StackStore, body: str, parameters: Dict[str, Any], name: str = "next") -> ChangeSet:
    change_set = store.create_change_set("kept", name, "UPDATE", body, parameters, None, "the next one")
    store.sync_change_sets()  # as the API call's end does
    return await store.change_set_settled(change_set.change_set_id)


def test_a_change_set_comes_back_after_a_restart_with_its_plan_and_can_be_executed(tmp_path: Path) -> None:
    memory = Memory()

    async def first_life() -> Tuple[Any, ...]:
        store = _store(memory, tmp_path)
        store.create_stack("kept", _template(TWO), {}, {})
        await store.settled("kept")
        return _shown(await _made(store, _template(CHANGED), {}))

    before = asyncio.run(first_life())
    assert before[-1] == [("Modify", "First", "First-1", "False", ("Properties",))]
    kept = kept_records(tmp_path, StateDatabase.change_sets)
    assert "hush-123" in kept[0]["blueprint"].pop("template_body")  # the user's own file, kept as it is (as a stack's record keeps it)
    assert "hush-123" not in json.dumps(kept)  # the writeOnly value (Memory masks Secret) is in no other part
    memory.calls.clear()

    async def second_life() -> Any:
        store = _store(memory, tmp_path)
        change_set = store.change_set("next", "kept")
        assert _shown(change_set) == before
        assert [c.name for c in store.change_sets_of("kept")] == ["next"]
        store.execute_change_set("next", "kept")
        stack = await store.settled("kept")
        return stack, store.change_set("next", "kept")

    stack, executed = asyncio.run(second_life())
    assert stack.status == "UPDATE_COMPLETE" and executed.execution_status == "EXECUTE_COMPLETE"
    assert [(c[0], c[1], c[2]["Size"], c[2]["Secret"]) for c in memory.calls] == [("update", "First", 2, "hush-123")]
    third = _store(memory, tmp_path)  # what the execution made of it is kept too
    assert third.change_set("next", "kept").execution_status == "EXECUTE_COMPLETE"


def test_a_deleted_change_set_stays_deleted_and_an_obsolete_one_stays_obsolete(tmp_path: Path) -> None:
    memory = Memory()

    async def first_life() -> None:
        store = _store(memory, tmp_path)
        store.create_stack("kept", _template(TWO), {}, {})
        await store.settled("kept")
        await _made(store, _template(CHANGED), {}, "gone")
        await _made(store, _template(CHANGED), {}, "passed")
        store.delete_change_set("gone", "kept")
        store.update_stack("kept", _template(CHANGED), {}, None)
        await store.settled("kept")

    asyncio.run(first_life())
    store = _store(memory, tmp_path)
    assert [(c.name, c.execution_status) for c in store.change_sets_of("kept")] == [("passed", "OBSOLETE")]
    with pytest.raises(StackError, match="ChangeSet \\[gone\\] does not exist"):
        store.change_set("gone", "kept")


def test_a_noecho_value_is_never_kept_so_its_change_set_is_shown_but_refused(tmp_path: Path) -> None:
    memory = Memory()

    async def first_life() -> Tuple[Any, Any]:
        store = _store(memory, tmp_path)
        store.create_stack("kept", _template(TWO, **WITH_PIN), {}, {})
        await store.settled("kept")
        given = await _made(store, _template(PINNED, **WITH_PIN), {"Pin": "pin-4711"}, "given")
        defaulted = await _made(store, _template(PINNED, **WITH_PIN), {}, "defaulted")
        return _shown(given), _shown(defaulted)

    given, defaulted = asyncio.run(first_life())
    assert "pin-4711" not in kept_text(tmp_path)

    async def second_life() -> Any:
        store = _store(memory, tmp_path)
        assert _shown(store.change_set("given", "kept")) == given
        assert store.change_set("given", "kept").parameters == {"Pin": "****"}
        with pytest.raises(StackError, match="without the value of NoEcho parameter Pin \\(never written to --state\\)"):
            store.execute_change_set("given", "kept")
        assert _shown(store.change_set("defaulted", "kept")) == defaulted
        store.execute_change_set("defaulted", "kept")  # its NoEcho value was its Default: the template holds it
        return await store.settled("kept")

    assert asyncio.run(second_life()).status == "UPDATE_COMPLETE"
    assert memory.live["First-1"]["Tag"] == "pin-default"


def test_a_change_set_caught_being_made_reads_back_failed(tmp_path: Path) -> None:
    memory = Memory()

    async def interrupted() -> None:
        store = _store(memory, tmp_path)
        store.create_stack("kept", _template(TWO), {}, {})
        await store.settled("kept")
        change_set = store.create_change_set("kept", "cut", "UPDATE", _template(CHANGED), {}, None)
        change_set.status, change_set.execution_status = "CREATE_IN_PROGRESS", "UNAVAILABLE"  # its hooks running
        store.sync_change_sets()
        # serve stops here

    asyncio.run(interrupted())
    store = _store(memory, tmp_path)
    cut = store.change_set("cut", "kept")
    assert (cut.status, cut.execution_status, cut.status_reason) == (
        "FAILED", "UNAVAILABLE", "cfnrun serve stopped while this change set was being created")


def test_a_drift_aware_change_reads_back_as_it_was_planned_its_write_only_values_masked() -> None:
    from cfnrun.stacks.change_details import ChangeDetail
    from cfnrun.stacks.drift_aware import ActualState
    from cfnrun.stacks.kept_change_sets import resource_change_record, restored_resource_change
    from cfnrun.stacks.plan import ResourceChange

    drift = ActualState("MODIFIED", 1.5, {"Size": 9, "Name": "one"}, frozenset({"Size"}), frozenset({"Secret"}))
    detail = ChangeDetail("Size", "Never", "Static", "DirectModification", before=9, after=2, before_from="ACTUAL_STATE",
                          drift=(1, 9))
    secret = ChangeDetail("Secret", "Never", "Static", "DirectModification", before="old-hush", after="new-hush")
    change = ResourceChange("Modify", "First", "Test::Thing::Resource", "First-1", "False", (detail, secret),
                            before={"Size": 1, "Secret": "old-hush"}, after={"Size": 2, "Secret": "new-hush"},
                            policy_action="Delete", drift=drift)
    record = json.loads(json.dumps(resource_change_record(change, Memory().shown)))  # as written and read
    assert "hush" not in json.dumps(record)
    masked = ChangeDetail("Secret", "Never", "Static", "DirectModification", before="<masked>", after="<masked>")
    assert restored_resource_change(record) == ResourceChange(
        "Modify", "First", "Test::Thing::Resource", "First-1", "False", (detail, masked),
        before={"Size": 1, "Secret": "<masked>"}, after={"Size": 2, "Secret": "<masked>"}, policy_action="Delete", drift=drift,
    )
