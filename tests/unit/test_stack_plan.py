"""One change plan: what a change set shows is what its execution does, on in-memory provisioners."""
from __future__ import annotations

import json
from typing import Any, Dict, List

from cfnrun.stacks.changes import described_changes
from cfnrun.stacks.plan import KNOWN_AFTER_APPLY
from cfnrun.stacks.provisioning import Replacement
from test_stack_engine import TWO, Memory, _store, _template, run


class Fickle(Memory):
    """``Name`` replaces the resource until ``Size`` is said to as well: the answers change between planning and execution."""

    def __init__(self) -> None:
        super().__init__()
        self.replacing = {"Name"}

    def replacement(self, type_name: str, property_path: str) -> Replacement:
        return Replacement.ALWAYS if property_path in self.replacing else Replacement.NEVER


def _actions(memory: Memory, logical_id: str) -> List[str]:
    return [c[0] for c in memory.calls if c[1] == logical_id]


def _resized(size: int) -> Dict[str, Any]:
    resources = json.loads(json.dumps(TWO))
    resources["First"]["Properties"]["Size"] = size
    return resources


def test_execution_follows_the_change_set_even_when_the_provisioner_answers_otherwise_later() -> None:
    memory = Fickle()

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        change_set = store.create_change_set("s", "grow", "UPDATE", _template(_resized(2)), {}, None)
        memory.replacing = {"Name", "Size"}  # after the change set was made: it promised an update in place
        memory.calls.clear()
        store.execute_change_set("grow", "s")
        return change_set, await store.settled("s")

    change_set, stack = run(scenario())
    [first] = [c for c in change_set.changes if c.logical_id == "First"]
    assert (first.action, first.replacement) == ("Modify", "False")
    assert stack.status == "UPDATE_COMPLETE"
    assert _actions(memory, "First") == ["update"]  # not a create of a new one and a delete of the old
    assert stack.resources["First"].physical_id == "First-1"


def test_a_replacement_the_change_set_shows_is_carried_out_though_the_provisioner_changes_its_mind() -> None:
    memory = Fickle()
    memory.replacing = {"Name", "Size"}

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        change_set = store.create_change_set("s", "grow", "UPDATE", _template(_resized(2)), {}, None)
        memory.replacing = set()
        memory.calls.clear()
        store.execute_change_set("grow", "s")
        return change_set, await store.settled("s")

    change_set, stack = run(scenario())
    shown = {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"] for c in described_changes(change_set.plan)}
    assert shown["First"]["Replacement"] == "True"
    assert stack.status == "UPDATE_COMPLETE"
    assert _actions(memory, "First") == ["create", "delete"]
    assert stack.resources["First"].physical_id != "First-1"


def test_the_plan_holds_before_and_after_values_and_marks_what_cannot_be_known_yet() -> None:
    memory = Memory()
    renamed = json.loads(json.dumps(TWO))
    renamed["First"]["Properties"]["Name"] = "uno"

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        return store.create_change_set("s", "rename", "UPDATE", _template(renamed), {}, None).plan

    plan = run(scenario())
    first, second = plan.of("First"), plan.of("Second")
    assert (first.before, first.after) == ({"Name": "one", "Size": 1}, {"Name": "uno", "Size": 1})
    assert second.replacement == "False"
    assert second.after == {"Name": "two", "Parent": KNOWN_AFTER_APPLY, "ParentArn": KNOWN_AFTER_APPLY}
    assert second.before == {"Name": "two", "Parent": "First-1", "ParentArn": "arn:First-1"}


def test_a_resource_read_back_without_its_properties_is_planned_against_its_model_not_replaced() -> None:
    """After a --state restart a resource holding secrets has no kept properties: the change set and the execution
    compare with the model its handler returned, and agree."""
    memory = Memory()

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO), {}, {})
        stack = await store.settled("s")
        for resource in stack.resources.values():
            resource.properties = None  # as persistence reads back a resource whose properties were masked
        change_set = store.create_change_set("s", "grow", "UPDATE", _template(_resized(2)), {}, None)
        memory.calls.clear()
        store.execute_change_set("grow", "s")
        return change_set, await store.settled("s")

    change_set, stack = run(scenario())
    first = change_set.plan.of("First")
    assert (first.action, first.replacement, [d.name for d in first.details]) == ("Modify", "False", ["Size"])
    assert stack.status == "UPDATE_COMPLETE"
    assert _actions(memory, "First") == ["update"]




def test_include_property_values_shows_the_plans_before_and_after_with_secrets_masked() -> None:
    memory = Memory()
    declared = {
        "Parameters": {"Token": {"Type": "String", "NoEcho": True}},
    }
    before = json.loads(json.dumps(TWO))
    before["First"]["Properties"].update({"Secret": "hush", "Label": {"Ref": "Token"}})
    after = json.loads(json.dumps(before))
    after["First"]["Properties"]["Name"] = "uno"

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(before, **declared), {"Token": "old-token"}, {})
        await store.settled("s")
        change_set = store.create_change_set("s", "rename", "UPDATE", _template(after, **declared), {"Token": "new-token"}, None)
        return described_changes(change_set.plan, store.property_values(change_set))

    shown = {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"] for c in run(scenario())}
    first, second = shown["First"], shown["Second"]
    assert json.loads(first["BeforeContext"]) == {"Properties": {"Name": "one", "Size": 1, "Secret": "<masked>", "Label": "****"}}
    assert json.loads(first["AfterContext"]) == {"Properties": {"Name": "uno", "Size": 1, "Secret": "<masked>", "Label": "****"}}
    assert json.loads(second["AfterContext"])["Properties"]["Parent"] == KNOWN_AFTER_APPLY
    assert "token" not in first["BeforeContext"] + first["AfterContext"]


def test_the_name_of_an_executed_change_set_can_be_used_again() -> None:
    memory = Memory()

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        store.create_change_set("s", "grow", "UPDATE", _template(_resized(2)), {}, None)
        store.execute_change_set("grow", "s")
        await store.settled("s")
        again = store.create_change_set("s", "grow", "UPDATE", _template(_resized(3)), {}, None)
        return store, again

    store, again = run(scenario())
    assert store.change_set("grow", "s") is again
    assert [c.name for c in store.change_sets_of("s")] == ["grow"]
    assert again.execution_status == "AVAILABLE"
