"""Hooks on the stack-level targets, on in-memory provisioners: what the engine and the change sets ask, what a refusal does, how results are found.

The real hooks (a served hook project through the invoker, its document behind a payload URL)
are driven by tests/test_hook_targets.py through serve; here the engine's decisions are checked.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, List, Optional

import pytest

from cfnrun.stacks.hook_results import HookResults
from cfnrun.stacks.blueprint import Blueprints
from cfnrun.stacks.plan import ResourceChange
from cfnrun.stacks.engine import StackEngine
from cfnrun.stacks.exports import Exports
from cfnrun.stacks.hooks import HookReport, HookedOperation, change_set_model, stack_model
from cfnrun.stacks.template_lines import resource_lines
from cfnrun.stacks.provisioning import StackContext
from cfnrun.stacks.store import StackError, StackStore
from test_stack_engine import ACCOUNT, REGION, TWO, Memory, Router, _template

HOOK = "Test::Policy::Hook"


class Gate:
    """A gate whose one hook refuses the targets ``refuse`` says no to; it keeps what it was asked."""

    def __init__(self, refuse: Callable[[HookedOperation], Optional[str]]) -> None:
        self.refuse = refuse
        self.asked: List[HookedOperation] = []

    async def before(self, target: HookedOperation, report: Callable[[HookReport], None]) -> Optional[str]:
        self.asked.append(target)
        report(HookReport(HOOK, "HOOK_IN_PROGRESS", "FAIL", "Hook invocation is in progress"))
        reason = self.refuse(target)
        report(HookReport(HOOK, "HOOK_COMPLETE_FAILED" if reason else "HOOK_COMPLETE_SUCCEEDED", "FAIL", reason))
        return f"The following hook(s)/validation failed: [{HOOK}]" if reason else None


def _store(memory: Memory, gate: Gate) -> StackStore:
    exports = Exports()
    engine = StackEngine(Router(memory), exports, REGION, ACCOUNT, gate)

    return StackStore(engine, Blueprints(Router(memory), exports, REGION, ACCOUNT))


def _no_description(target: HookedOperation) -> Optional[str]:
    if target.operation != "STACK" or target.action == "DELETE":
        return None
    return None if json.loads(target.model["template"]).get("Description") else "the template needs a Description"  # type: ignore[index]


def test_a_refused_stack_create_provisions_nothing_and_rolls_back() -> None:
    memory, gate = Memory(), Gate(_no_description)

    async def scenario() -> Any:
        store = _store(memory, gate)
        store.create_stack("s", _template(TWO), {}, {})
        return await store.settled("s")

    stack = asyncio.run(scenario())
    assert stack.status == "ROLLBACK_COMPLETE"
    assert memory.calls == [] and gate.asked[0].operation == "STACK" and len(gate.asked) == 1  # no resource was even asked about
    hooked = [e for e in stack.events if e.hook_type]
    assert [(e.logical_id, e.status, e.hook_status, e.hook_status_reason) for e in hooked][-1] == (
        "s", "CREATE_IN_PROGRESS", "HOOK_COMPLETE_FAILED", "Hook failed with message: the template needs a Description"
    )
    assert [e.reason for e in stack.events if e.status == "ROLLBACK_IN_PROGRESS"] == [f"The following hook(s)/validation failed: [{HOOK}]"]


def test_a_stack_target_is_shown_the_template_and_on_update_the_previous_one() -> None:
    memory, gate = Memory(), Gate(_no_description)

    async def scenario() -> Any:
        store = _store(memory, gate)
        store.create_stack("s", _template(TWO, Description="first"), {}, {})
        await store.settled("s")
        store.update_stack("s", _template(TWO), {}, None)
        return await store.settled("s")

    stack = asyncio.run(scenario())
    assert stack.status == "UPDATE_ROLLBACK_COMPLETE"
    update = [t for t in gate.asked if t.operation == "STACK"][-1]
    assert (update.action, update.logical_id, update.type_name, update.target_type) == ("UPDATE", "s", "STACK", "STACK")
    assert json.loads(update.model["previousTemplate"])["Description"] == "first"  # type: ignore[index]
    assert "Description" not in json.loads(update.model["template"])  # type: ignore[index]
    assert [c[0] for c in memory.calls] == ["create", "create"]  # the refused update touched nothing


def test_a_refused_stack_delete_is_delete_failed_with_every_resource_kept() -> None:
    memory = Memory()
    gate = Gate(lambda target: "protected" if target.operation == "STACK" and target.action == "DELETE" else None)

    async def scenario() -> Any:
        store = _store(memory, gate)
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        store.delete_stack("s")
        return await store.settled("s")

    stack = asyncio.run(scenario())
    assert (stack.status, stack.reason) == ("DELETE_FAILED", f"The following hook(s)/validation failed: [{HOOK}]")
    assert len(memory.live) == 2
    deleting = [t for t in gate.asked if t.action == "DELETE"]
    assert [t.operation for t in deleting] == ["STACK"] and "template" not in deleting[0].model  # type: ignore[operator]


def test_a_change_set_its_hooks_refuse_is_failed_with_their_reasons() -> None:
    memory = Memory()
    gate = Gate(lambda t: "removes Second" if t.operation == "CHANGE_SET" and any(c["action"] == "DELETE" for c in t.model["changedResources"]) else None)  # type: ignore[index]

    async def scenario() -> Any:
        store = _store(memory, gate)
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        removing = store.create_change_set("s", "shrink", "UPDATE", _template({"First": TWO["First"]}), {}, None)
        assert (removing.status, removing.execution_status) == ("CREATE_IN_PROGRESS", "UNAVAILABLE")
        resizing = store.create_change_set("s", "resize", "UPDATE", _template({**TWO, "First": {**TWO["First"], "Properties": {"Name": "one", "Size": 2}}}), {}, None)
        return [await store.change_set_settled(c.change_set_id) for c in (removing, resizing)]

    removing, resizing = asyncio.run(scenario())
    assert (removing.status, removing.execution_status) == ("FAILED", "UNAVAILABLE")
    assert removing.status_reason == f"The following hook(s)/validation failed: [{HOOK}]. {HOOK}: removes Second"
    assert (resizing.status, resizing.execution_status) == ("CREATE_COMPLETE", "AVAILABLE")
    asked = [t for t in gate.asked if t.operation == "CHANGE_SET"][-1]
    assert asked.change_set_id == resizing.change_set_id and asked.logical_id == resizing.change_set_id and asked.action == "CREATE"  # a change set's only action


def test_the_stack_and_change_set_documents_have_the_guides_shape() -> None:
    template = {"Description": "d", "Resources": {"A": {"Type": "T::T::T"}}}
    text = "Description: d\nResources:\n  A:\n    Type: T::T::T\n"  # the template as given: YAML stays YAML (the guide)
    assert stack_model(text, None) == {"template": text}
    assert stack_model(None, text) == {"previousTemplate": text}
    changes = [
        ResourceChange("Add", "New", "T::T::T", after={"Size": 3, "On": True}),
        ResourceChange("Modify", "A", "T::T::T", "a-1", "False", after={"Size": 4}),
        ResourceChange("Remove", "Old", "T::T::T"),
    ]
    model = change_set_model(json.dumps(template), changes, {"A": {"Size": 1}, "Old": {"Size": "2"}})
    assert model["template"] == json.dumps(template)
    # the Lambda hooks chapter: what it has now and what it would have, as JSON text with numbers and booleans as strings
    assert [(c["logicalResourceId"], c["action"], c["beforeContext"], c["afterContext"]) for c in model["changedResources"]] == [
        ("New", "CREATE", None, json.dumps({"Properties": {"Size": "3", "On": "true"}})),
        ("A", "UPDATE", json.dumps({"Properties": {"Size": "1"}}), json.dumps({"Properties": {"Size": "4"}})),
        ("Old", "DELETE", json.dumps({"Properties": {"Size": "2"}}), None),
    ]
    assert all(c["resourceType"] == "T::T::T" for c in model["changedResources"])
    assert [c["lineNumber"] for c in model["changedResources"]] == [None, 1, None]  # one line: A on line 1; New is not in it
    body = "Description: d\nResources:\n  A:\n    Type: T::T::T\n    Properties:\n      A: 4\n  New:\n    Type: T::T::T\n"
    numbered = change_set_model(body, changes, {"A": {"Size": 1}, "Old": {"Size": "2"}})
    assert numbered["template"] == body
    # the guide's example: the line of the logical id under Resources, and none for a removed resource
    assert [(c["logicalResourceId"], c["lineNumber"]) for c in numbered["changedResources"]] == [("New", 7), ("A", 3), ("Old", None)]
    assert resource_lines(json.dumps({"Resources": {"A": {}}}), ["A"]) == {"A": 1}  # a template on one line


def test_hook_results_are_found_by_target_or_by_hook_in_the_combinations_the_service_takes() -> None:
    results = HookResults(REGION, ACCOUNT)
    stack = StackContext("arn:aws:cloudformation:us-east-1:123456789012:stack/s/1", "s", REGION, ACCOUNT)
    change_set = HookedOperation(stack, "UPDATE", "arn:cs", "CHANGE_SET", {}, operation="CHANGE_SET", target_id="arn:cs")
    cloud_control = HookedOperation(StackContext("", "", REGION, ACCOUNT), "CREATE", "req-1", "Test::Thing::Resource", {}, operation="CLOUD_CONTROL", target_id="hooks-1")
    results.record(HOOK, change_set, "HOOK_COMPLETE_FAILED", "no", "FAIL", 1.0)
    results.record("Other::Policy::Hook", cloud_control, "HOOK_COMPLETE_SUCCEEDED", None, "WARN", 2.0)
    assert [r.hook_type for r in results.matching({})] == [HOOK, "Other::Policy::Hook"]
    assert [r.target_id for r in results.matching({"TargetType": "CLOUD_CONTROL", "TargetId": "hooks-1"})] == ["hooks-1"]
    assert results.matching({"TargetType": "CHANGE_SET", "TargetId": "hooks-1"}) == []
    arn = results.type_arn(HOOK)
    assert arn == "arn:aws:cloudformation:us-east-1:123456789012:type/hook/Test-Policy-Hook"
    assert [r.status for r in results.matching({"TypeArn": arn, "Status": "HOOK_COMPLETE_FAILED"})] == ["HOOK_COMPLETE_FAILED"]
    assert results.matching({"TypeArn": arn, "Status": "HOOK_COMPLETE_SUCCEEDED"}) == []
    assert results.matching({})[1].execution_target == "req-1" and results.matching({})[0].execution_target == stack.stack_id
    for wrong, message in (
        ({"TargetType": "CHANGE_SET"}, "TargetType and TargetId must be given together"),
        ({"TargetType": "STACK", "TargetId": "x"}, "only CHANGE_SET and CLOUD_CONTROL"),
        ({"Status": "HOOK_FAILED"}, "Status can only be given with TypeArn"),
    ):
        with pytest.raises(StackError, match=message):
            results.matching(wrong)
    with pytest.raises(StackError, match="does not exist") as missing:
        results.get("0" * 36)
    assert missing.value.code == "HookResultNotFoundException"


def test_hooks_that_answered_skip_stack_hook_for_a_change_set_are_skipped_on_its_stack_target() -> None:
    memory = Memory()

    class Skipping(Gate):
        async def before(self, target: HookedOperation, report: Callable[[HookReport], None]) -> Optional[str]:
            self.asked.append(target)
            report(HookReport(HOOK, "HOOK_COMPLETE_SUCCEEDED", "FAIL", "reviewed", skips_stack_hook=target.operation == "CHANGE_SET"))
            return None

    gate = Skipping(lambda target: None)

    async def scenario() -> Any:
        store = _store(memory, gate)
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        change_set = await store.change_set_settled(store.create_change_set("s", "grow", "UPDATE", _template({**TWO, "Third": TWO["First"]}), {}, None).change_set_id)
        store.execute_change_set(change_set.change_set_id, None)
        return await store.settled("s")

    assert asyncio.run(scenario()).status == "UPDATE_COMPLETE"
    stack_targets = [t for t in gate.asked if t.operation == "STACK"]
    assert [t.skipped for t in stack_targets] == [frozenset(), frozenset({HOOK})]  # the create asked every hook; the execution not this one
