"""The stack engine's order, rollback and replacement logic, on in-memory provisioners.

The real provisioners (handlers through the invoker, moto, served functions) are driven by
tests/test_local_stacks.py through serve; here the engine's own decisions are checked fast.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest

from cfnrun.stacks.blueprint import Blueprints
from cfnrun.stacks.engine import StackEngine
from cfnrun.stacks.exports import Exports
from cfnrun.stacks.in_flight import OperationStopped
from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, Replacement, ResourceWork, NoProvisioner
from cfnrun.stacks.store import StackError, StackStore

REGION, ACCOUNT = "us-east-1", "123456789012"


class Memory:
    """A provisioner keeping resources in a dict: ``Name`` is createOnly, ``Fail`` fails the operation."""

    def __init__(self) -> None:
        self.live: Dict[str, Dict[str, Any]] = {}
        self.calls: List[tuple] = []
        self.running = 0
        self.most_at_once = 0
        self.gate: Optional[asyncio.Event] = None
        self.counter = 0
        # (action, logical id) of calls that run until their stack operation is cancelled, once each, as a type's
        # handlers waiting out CallbackDelaySeconds do (``app/stacks/user_types.py``)
        self.held: Set[Tuple[str, str]] = set()

    def validate(self, type_name: str, logical_id: str, properties: Dict[str, Any]) -> Optional[str]:
        if "Invalid" in properties:
            return f"Properties validation failed for resource {logical_id} with message:\n#: extraneous key [Invalid] is not permitted"
        return None

    def shown(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        return {k: ("<masked>" if k == "Secret" else v) for k, v in properties.items()}

    def replacement(self, type_name: str, property_path: str) -> Replacement:
        return Replacement.ALWAYS if property_path == "Name" else Replacement.NEVER

    async def _enter(self, action: str, work: ResourceWork) -> None:
        self.calls.append((action, work.logical_id, dict(work.properties), work.previous_properties))
        if (action, work.logical_id) in self.held:
            self.held.discard((action, work.logical_id))
            assert work.cancellation is not None, "a create's or an update's resource operations can be cancelled"
            cancelled = asyncio.Event()
            work.cancellation.listen(lambda reason: cancelled.set())
            await asyncio.wait_for(cancelled.wait(), 5)
            raise OperationStopped(work.cancellation.reason or "")
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            if self.gate is not None:
                await asyncio.wait_for(self.gate.wait(), 5)
            else:
                await asyncio.sleep(0)
        finally:
            self.running -= 1
        if work.properties.get("Fail") == action:
            raise ProvisioningFailed(f'Resource handler returned message: "{action} refused" (HandlerErrorCode: InvalidRequest)')

    async def create(self, work: ResourceWork) -> Provisioned:
        await self._enter("create", work)
        self.counter += 1
        physical = f"{work.logical_id}-{self.counter}"
        self.live[physical] = dict(work.properties)
        model = {"Id": physical, **work.properties}  # as a handler returns it: the properties and the identifier
        return Provisioned(physical, physical, {"Arn": f"arn:{physical}", "Nested.Value": "deep"}, model)

    async def update(self, work: ResourceWork) -> Provisioned:
        await self._enter("update", work)
        assert work.physical_id in self.live
        self.live[work.physical_id] = dict(work.properties)
        model = {"Id": work.physical_id, **work.properties}
        return Provisioned(work.physical_id, work.physical_id, {"Arn": f"arn:{work.physical_id}", "Nested.Value": "deep"}, model)

    async def delete(self, work: ResourceWork) -> None:
        await self._enter("delete", work)
        self.live.pop(work.physical_id or "", None)


class Router:
    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def for_type(self, type_name: str) -> Memory:
        if not type_name.startswith("Test::"):
            raise NoProvisioner(f"Template format error: Unrecognized resource types: [{type_name}]")
        return self.memory


def _store(memory: Memory, exports: Optional[Exports] = None) -> StackStore:
    exports = exports or Exports()
    engine = StackEngine(Router(memory), exports, REGION, ACCOUNT)

    return StackStore(engine, Blueprints(Router(memory), exports, REGION, ACCOUNT))


def _template(resources: Dict[str, Any], **sections: Any) -> str:
    return json.dumps({"Resources": resources, **sections})


TWO = {
    "First": {"Type": "Test::Thing::Resource", "Properties": {"Name": "one", "Size": 1}},
    "Second": {
        "Type": "Test::Thing::Resource",
        "Properties": {"Name": "two", "Parent": {"Ref": "First"}, "ParentArn": {"Fn::GetAtt": ["First", "Arn"]}},
    },
}


def _statuses(stack: Any, logical_id: str) -> List[str]:
    return [e.status for e in stack.events if e.logical_id == logical_id]


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_a_create_runs_dependencies_first_and_resolves_ref_and_getatt() -> None:
    memory = Memory()

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO, Outputs={"Arn": {"Value": {"Fn::GetAtt": ["Second", "Arn"]}}}), {}, {})
        return await store.settled("s")

    stack = run(scenario())
    assert stack.status == "CREATE_COMPLETE"
    assert [c[1] for c in memory.calls] == ["First", "Second"]
    assert memory.calls[1][2] == {"Name": "two", "Parent": "First-1", "ParentArn": "arn:First-1"}
    assert _statuses(stack, "Second") == ["CREATE_IN_PROGRESS", "CREATE_IN_PROGRESS", "CREATE_COMPLETE"]
    assert [(o.key, o.value) for o in stack.outputs] == [("Arn", "arn:Second-2")]
    assert _statuses(stack, "s") == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"]


def test_independent_resources_are_created_at_the_same_time() -> None:
    memory = Memory()
    resources = {name: {"Type": "Test::Thing::Resource", "Properties": {"Name": name}} for name in ("A", "B", "C")}

    async def scenario() -> Any:
        memory.gate = asyncio.Event()
        store = _store(memory)
        store.create_stack("s", _template(resources), {}, {})
        while memory.running < 3:  # all three are in their create at once; none finishes before the gate opens
            await asyncio.sleep(0)
        memory.gate.set()
        return await store.settled("s")

    assert run(scenario()).status == "CREATE_COMPLETE"
    assert memory.most_at_once == 3


def test_a_failed_create_rolls_back_what_was_created() -> None:
    memory = Memory()
    failing = json.loads(json.dumps(TWO))
    failing["Second"]["Properties"]["Fail"] = "create"

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(failing), {}, {})
        return await store.settled("s")

    stack = run(scenario())
    assert stack.status == "ROLLBACK_COMPLETE"
    assert memory.live == {}
    assert _statuses(stack, "First") == ["CREATE_IN_PROGRESS", "CREATE_IN_PROGRESS", "CREATE_COMPLETE", "DELETE_IN_PROGRESS", "DELETE_COMPLETE"]
    second = [e for e in stack.events if e.logical_id == "Second" and e.status == "CREATE_FAILED"]
    assert 'create refused' in (second[0].reason or "")
    rollback = [e for e in stack.events if e.status == "ROLLBACK_IN_PROGRESS"]
    assert rollback[0].reason == "The following resource(s) failed to create: [Second]. Rollback requested by user."


def test_pre_deployment_validation_stops_the_stack_before_any_resource_is_touched() -> None:
    memory = Memory()
    invalid = json.loads(json.dumps(TWO))
    invalid["Second"]["Properties"]["Invalid"] = True

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(invalid), {}, {})
        return await store.settled("s")

    stack = run(scenario())
    assert [e.status for e in stack.events] == ["CREATE_IN_PROGRESS", "ROLLBACK_IN_PROGRESS", "ROLLBACK_COMPLETE"]
    assert stack.events[1].reason.startswith("The following hook(s)/validation failed: [AWS::EarlyValidation::PropertyValidation].")
    assert memory.calls == []


def test_properties_validation_fails_the_resource_before_any_call() -> None:
    """With DisableValidation, the provisioner's check still stops the resource before its handler is called."""
    memory = Memory()
    invalid = json.loads(json.dumps(TWO))
    invalid["Second"]["Properties"]["Invalid"] = True

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(invalid), {}, {}, disable_validation=True)
        return await store.settled("s")

    stack = run(scenario())
    assert stack.status == "ROLLBACK_COMPLETE"
    assert [c[1] for c in memory.calls if c[0] == "create"] == ["First"]
    failed = [e for e in stack.events if e.status == "CREATE_FAILED"]
    assert failed[0].reason.startswith("Properties validation failed for resource Second with message:")


def test_disable_rollback_keeps_what_was_created() -> None:
    memory = Memory()
    failing = json.loads(json.dumps(TWO))
    failing["Second"]["Properties"]["Fail"] = "create"

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(failing), {}, {}, disable_rollback=True)
        return await store.settled("s")

    stack = run(scenario())
    assert stack.status == "CREATE_FAILED"
    assert list(memory.live) == ["First-1"]


def test_an_update_leaves_unchanged_resources_alone_and_updates_in_place() -> None:
    memory = Memory()
    changed = json.loads(json.dumps(TWO))
    changed["Second"]["Properties"]["Size"] = 2

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        memory.calls.clear()
        store.update_stack("s", _template(changed), {}, None)
        return await store.settled("s")

    stack = run(scenario())
    assert stack.status == "UPDATE_COMPLETE"
    assert [(c[0], c[1]) for c in memory.calls] == [("update", "Second")]
    assert memory.calls[0][3] == {"Name": "two", "Parent": "First-1", "ParentArn": "arn:First-1"}  # previous properties
    assert _statuses(stack, "s")[-3:] == ["UPDATE_IN_PROGRESS", "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS", "UPDATE_COMPLETE"]


def test_a_create_only_change_replaces_and_deletes_the_old_one_in_cleanup() -> None:
    memory = Memory()
    renamed = json.loads(json.dumps(TWO))
    renamed["First"]["Properties"]["Name"] = "uno"

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        memory.calls.clear()
        store.update_stack("s", _template(renamed), {}, None)
        return await store.settled("s")

    stack = run(scenario())
    assert stack.status == "UPDATE_COMPLETE"
    assert [(c[0], c[1]) for c in memory.calls] == [("create", "First"), ("update", "Second"), ("delete", "First")]
    assert memory.calls[1][2]["Parent"] == "First-3"  # the dependant moved to the new resource
    assert memory.calls[2][2]["Name"] == "one"  # the old one goes, in the cleanup phase
    assert sorted(memory.live) == ["First-3", "Second-2"]
    replacing = [e for e in stack.events if e.logical_id == "First" and e.status == "UPDATE_IN_PROGRESS"]
    assert [e.reason for e in replacing] == [
        "Requested update requires the creation of a new physical resource; hence creating one.", "Resource creation Initiated",
    ]
    cleanup = _statuses(stack, "s").index("UPDATE_COMPLETE_CLEANUP_IN_PROGRESS")
    deleted = [i for i, e in enumerate(stack.events) if e.logical_id == "First" and e.status == "DELETE_COMPLETE"]
    assert deleted and stack.events.index([e for e in stack.events if e.status == "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS"][0]) < deleted[0]
    assert cleanup > 0


def test_a_failed_update_puts_resources_back_and_deletes_what_it_added() -> None:
    memory = Memory()
    broken = json.loads(json.dumps(TWO))
    broken["First"]["Properties"]["Size"] = 5
    broken["Third"] = {"Type": "Test::Thing::Resource", "Properties": {"Name": "three"}}
    broken["Second"]["Properties"]["Fail"] = "update"

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        store.update_stack("s", _template(broken), {}, None)
        return await store.settled("s")

    stack = run(scenario())
    assert stack.status == "UPDATE_ROLLBACK_COMPLETE"
    assert memory.live["First-1"] == {"Name": "one", "Size": 1}  # put back
    assert "Third" not in stack.resources and not any(k.startswith("Third") for k in memory.live)
    assert json.loads(stack.template_body) == {"Resources": TWO}


def test_delete_removes_dependants_first_and_skips_retained_resources() -> None:
    memory = Memory()
    kept = json.loads(json.dumps(TWO))
    kept["First"]["DeletionPolicy"] = "Retain"
    kept["Third"] = {"Type": "Test::Thing::Resource", "Properties": {"Name": "three", "After": {"Ref": "Second"}}}

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(kept), {}, {})
        await store.settled("s")
        memory.calls.clear()
        store.delete_stack("s")
        return await store.settled(store.stacks[next(iter(store.stacks))].stack_id)

    stack = run(scenario())
    assert stack.status == "DELETE_COMPLETE"
    assert [(c[0], c[1]) for c in memory.calls] == [("delete", "Third"), ("delete", "Second")]
    assert _statuses(stack, "First")[-1] == "DELETE_SKIPPED"
    assert list(memory.live) == ["First-1"]


def test_an_export_in_use_cannot_be_deleted() -> None:
    memory = Memory()
    exporting = _template(
        {"First": TWO["First"]}, Outputs={"Id": {"Value": {"Ref": "First"}, "Export": {"Name": "shared-id"}}}
    )
    importing = _template({"User": {"Type": "Test::Thing::Resource", "Properties": {"Name": "u", "Uses": {"Fn::ImportValue": "shared-id"}}}})

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("exporter", exporting, {}, {})
        await store.settled("exporter")
        store.create_stack("importer", importing, {}, {})
        await store.settled("importer")
        store.delete_stack("exporter")
        return store, await store.settled("exporter")

    store, exporter = run(scenario())
    assert memory.calls[1][2]["Uses"] == "First-1"
    assert exporter.status == "DELETE_FAILED"
    assert exporter.reason == "Export shared-id cannot be deleted as it is in use by importer"
    assert [e.name for e in store.engine.exports.all()] == ["shared-id"]


def test_no_echo_values_never_reach_the_events() -> None:
    memory = Memory()
    body = _template(
        {"First": {"Type": "Test::Thing::Resource", "Properties": {"Name": "one", "Password": {"Ref": "Password"}, "Fail": "create"}}},
        Parameters={"Password": {"Type": "String", "NoEcho": True}},
    )

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", body, {"Password": "hunter2"}, {})
        return await store.settled("s")

    stack = run(scenario())
    assert memory.calls[0][2]["Password"] == "hunter2"  # the handler gets it
    assert not any("hunter2" in (e.properties or "") + (e.reason or "") for e in stack.events)
    assert stack.shown_parameters() == {"Password": "****"}


def test_an_update_with_nothing_new_is_refused_as_the_service_does() -> None:
    async def scenario() -> None:
        store = _store(Memory())
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        with pytest.raises(StackError, match=r"^No updates are to be performed\.$"):
            store.update_stack("s", _template(TWO), {}, None)
        with pytest.raises(StackError, match=r"Stack \[s\] already exists"):
            store.create_stack("s", _template(TWO), {}, {})

    run(scenario())


def test_a_change_set_says_add_modify_remove_and_replacement() -> None:
    memory = Memory()
    after = {
        "First": {"Type": "Test::Thing::Resource", "Properties": {"Name": "uno", "Size": 1}},
        "Second": TWO["Second"],
        "Fresh": {"Type": "Test::Thing::Resource", "Properties": {"Name": "new"}},
    }
    before = dict(TWO, Old={"Type": "Test::Thing::Resource", "Properties": {"Name": "old"}})

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(before), {}, {})
        await store.settled("s")
        change_set = store.create_change_set("s", "rename", "UPDATE", _template(after), {}, None)
        return {c.logical_id: c for c in change_set.changes}

    changes = run(scenario())
    assert changes["First"].action == "Modify" and changes["First"].replacement == "True"
    assert [(d.name, d.requires_recreation, d.evaluation) for d in changes["First"].details] == [("Name", "Always", "Static")]
    assert changes["Second"].action == "Modify" and changes["Second"].replacement == "False"
    assert {(d.name, d.evaluation, d.change_source, d.causing_entity) for d in changes["Second"].details} == {
        ("Parent", "Dynamic", "DirectModification", None), ("Parent", "Static", "ResourceReference", "First"),
        ("ParentArn", "Dynamic", "DirectModification", None), ("ParentArn", "Static", "ResourceAttribute", "First.Arn"),
    }
    assert changes["Fresh"].action == "Add"
    assert changes["Old"].action == "Remove"


def test_unknown_parameters_and_types_are_refused_before_anything_runs() -> None:
    memory = Memory()

    async def scenario() -> None:
        store = _store(memory)
        with pytest.raises(Exception, match=r"Parameters: \[Nope\] do not exist in the template"):
            store.create_stack("s", _template(TWO), {"Nope": "x"}, {})

    run(scenario())
    assert memory.calls == []


def test_a_failed_rollback_waits_for_continue_update_rollback_which_can_skip_the_resource() -> None:
    memory = Memory()
    broken = json.loads(json.dumps(TWO))
    broken["First"]["Properties"]["Size"] = 5
    broken["Second"]["Properties"]["Fail"] = "update"

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        original_update = memory.update

        async def refuse_going_back(work: ResourceWork) -> Provisioned:
            if work.logical_id == "First" and work.properties.get("Size") == 1:
                raise ProvisioningFailed("cannot go back")
            return await original_update(work)

        memory.update = refuse_going_back  # type: ignore[method-assign]
        store.update_stack("s", _template(broken), {}, None)
        stuck = await store.settled("s")
        assert stuck.status == "UPDATE_ROLLBACK_FAILED"
        assert stuck.reason == "The following resource(s) failed to update: [First]. "  # the resource its rollback could not put back
        with pytest.raises(StackError, match=r"^Stack:\S+ is in UPDATE_ROLLBACK_FAILED state and can not be updated\.$"):
            store.update_stack("s", _template(TWO), {}, None)
        store.continue_update_rollback("s", ("First",))
        return await store.settled("s")

    stack = run(scenario())
    assert stack.status == "UPDATE_ROLLBACK_COMPLETE"
    assert json.loads(stack.template_body) == {"Resources": TWO}


def test_cancel_update_stack_starts_nothing_more_and_rolls_back() -> None:
    memory = Memory()
    longer = dict(TWO, Third={"Type": "Test::Thing::Resource", "Properties": {"Name": "three", "After": {"Ref": "Second"}}})

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        memory.gate = asyncio.Event()
        store.update_stack("s", _template(longer), {}, None)
        while memory.running < 1:  # Third waits for nothing new: it is being created
            await asyncio.sleep(0)
        store.cancel_update("s")
        memory.gate.set()
        return await store.settled("s")

    stack = run(scenario())
    assert stack.status == "UPDATE_ROLLBACK_COMPLETE"
    assert "Third" not in stack.resources
    assert not any(k.startswith("Third") for k in memory.live)


PAIR = {name: {"Type": "Test::Thing::Resource", "Properties": {"Name": name.lower(), "Size": 1}} for name in ("Slow", "Bad")}


def _created(memory: Memory, resources: Dict[str, Any]) -> Any:
    """The stack ``s`` of ``resources`` once its create has ended."""

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(resources), {}, {})
        return await store.settled("s")

    return run(scenario())


def _reasons(stack: Any, logical_id: str) -> List[Tuple[str, Optional[str]]]:
    return [(e.status, e.reason) for e in stack.events if e.logical_id == logical_id]


def test_a_failed_create_cancels_the_resources_in_flight_names_them_and_rolls_them_back() -> None:
    memory = Memory()
    memory.held.add(("create", "Slow"))
    failing = json.loads(json.dumps(PAIR))
    failing["Bad"]["Properties"]["Fail"] = "create"
    stack = _created(memory, failing)
    assert stack.status == "ROLLBACK_COMPLETE"
    assert ("CREATE_FAILED", "Resource creation cancelled") in _reasons(stack, "Slow")
    assert ("ROLLBACK_IN_PROGRESS", "The following resource(s) failed to create: [Bad, Slow]. Rollback requested by user.") in _reasons(stack, "s")
    assert memory.live == {}


async def _updating(memory: Memory, changed: Dict[str, Any]) -> StackStore:
    """The stack ``s`` of PAIR created, then its update to ``changed`` started with Slow's update call held."""
    store = _store(memory)
    store.create_stack("s", _template(PAIR), {}, {})
    await store.settled("s")
    memory.held.add(("update", "Slow"))
    store.update_stack("s", _template(changed), {}, None)
    return store


def test_a_failed_update_cancels_the_updates_in_flight_and_puts_them_back() -> None:
    memory = Memory()
    changed = json.loads(json.dumps(PAIR))
    changed["Slow"]["Properties"]["Size"] = 2
    changed["Bad"]["Properties"]["Fail"] = "update"

    async def scenario() -> Any:
        store = await _updating(memory, changed)
        return await store.settled("s")

    stack = run(scenario())
    assert stack.status == "UPDATE_ROLLBACK_COMPLETE"
    assert ("UPDATE_FAILED", "Resource update cancelled") in _reasons(stack, "Slow")
    assert ("UPDATE_ROLLBACK_IN_PROGRESS", "The following resource(s) failed to update: [Bad, Slow]. ") in _reasons(stack, "s")
    assert sorted(props["Size"] for props in memory.live.values()) == [1, 1]  # Slow's update put back


def test_cancel_update_stack_cancels_the_updates_in_flight() -> None:
    memory = Memory()
    changed = json.loads(json.dumps(PAIR))
    changed["Slow"]["Properties"]["Size"] = 2

    async def scenario() -> Any:
        store = await _updating(memory, changed)
        while ("update", "Slow") in memory.held:  # its call is running
            await asyncio.sleep(0)
        store.cancel_update("s")
        return await store.settled("s")

    stack = run(scenario())
    assert stack.status == "UPDATE_ROLLBACK_COMPLETE"
    assert ("UPDATE_FAILED", "Resource update cancelled") in _reasons(stack, "Slow")
    assert ("UPDATE_ROLLBACK_IN_PROGRESS", "User Initiated") in _reasons(stack, "s")


def test_a_provisioner_that_breaks_fails_its_resource_and_the_stack_still_rolls_back() -> None:
    memory = Memory()
    original = memory.create

    async def breaks(work: ResourceWork) -> Provisioned:
        if work.logical_id == "Second":
            raise RuntimeError("the endpoint answered HTML")
        return await original(work)

    memory.create = breaks  # type: ignore[method-assign]

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO), {}, {})
        return await store.settled("s")

    stack = run(scenario())
    assert stack.status == "ROLLBACK_COMPLETE"
    assert memory.live == {}
    failed = [e for e in stack.events if e.status == "CREATE_FAILED"]
    assert failed[0].reason == "cfnrun failed provisioning the resource: RuntimeError: the endpoint answered HTML"


def test_an_update_hands_the_handlers_the_stack_tags_before_and_after() -> None:
    memory = Memory()
    seen: List[Any] = []
    original = memory.update

    async def watching(work: ResourceWork) -> Provisioned:
        seen.append((work.stack.tags, work.stack.previous_tags))
        return await original(work)

    memory.update = watching  # type: ignore[method-assign]
    changed = json.loads(json.dumps(TWO))
    changed["First"]["Properties"]["Size"] = 2

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO), {}, {"team": "a"})
        await store.settled("s")
        store.update_stack("s", _template(changed), {}, {"team": "b"})
        return await store.settled("s")

    assert run(scenario()).status == "UPDATE_COMPLETE"
    assert seen == [({"team": "b"}, {"team": "a"})]


def test_an_update_in_place_keeps_its_physical_id_whatever_the_handler_answers() -> None:
    """Only a custom resource may move to a new physical resource on an update; a registry type's stays, nothing is deleted."""
    memory = Memory()
    original = memory.update

    async def renaming(work: ResourceWork) -> Provisioned:
        made = await original(work)
        memory.live[f"{work.physical_id}-v2"] = memory.live[made.physical_id]
        return Provisioned(f"{work.physical_id}-v2", f"{work.physical_id}-v2", made.attributes, made.model)

    memory.update = renaming  # type: ignore[method-assign]
    changed = json.loads(json.dumps(TWO))
    changed["Second"]["Properties"]["Size"] = 7

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        store.update_stack("s", _template(changed), {}, None)
        return await store.settled("s")

    stack = run(scenario())
    assert stack.status == "UPDATE_COMPLETE"
    assert (stack.resources["Second"].physical_id, stack.resources["Second"].ref) == ("Second-2", "Second-2")
    assert [c[0] for c in memory.calls][-1] == "update"
    assert "Second-2" in memory.live
    assert "DELETE_IN_PROGRESS" not in _statuses(stack, "Second")


def test_continue_update_rollback_after_a_restart_puts_back_the_properties_the_events_kept() -> None:
    """A restart loses the engine's record of the update: the rollback reads what each resource was from its events."""
    memory = Memory()
    broken = json.loads(json.dumps(TWO))
    broken["First"]["Properties"]["Size"] = 5
    broken["Second"]["Properties"]["Fail"] = "update"
    going_back = {"refused": True}

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        original_update = memory.update

        async def refuse_going_back_once(work: ResourceWork) -> Provisioned:
            if work.logical_id == "First" and work.properties.get("Size") == 1 and going_back["refused"]:
                raise ProvisioningFailed("cannot go back")
            return await original_update(work)

        memory.update = refuse_going_back_once  # type: ignore[method-assign]
        store.update_stack("s", _template(broken), {}, None)
        assert (await store.settled("s")).status == "UPDATE_ROLLBACK_FAILED"
        store.engine.updates.clear()  # what a restart of serve loses
        going_back["refused"] = False
        memory.calls.clear()
        store.continue_update_rollback("s")
        return await store.settled("s")

    stack = run(scenario())
    assert stack.status == "UPDATE_ROLLBACK_COMPLETE"
    assert sorted((c[0], c[1], c[2].get("Size"), "Fail" in c[2]) for c in memory.calls) == [("update", "First", 1, False), ("update", "Second", None, False)]
    assert memory.live[stack.resources["First"].physical_id]["Size"] == 1


def test_continue_update_rollback_after_a_restart_says_what_it_cannot_put_back() -> None:
    memory = Memory()
    broken = json.loads(json.dumps(TWO))
    broken["First"]["Properties"]["Size"] = 5
    broken["Second"]["Properties"]["Fail"] = "update"

    async def scenario() -> Any:
        store = _store(memory)
        store.create_stack("s", _template(TWO), {}, {})
        await store.settled("s")
        original_update = memory.update

        async def refuse_going_back(work: ResourceWork) -> Provisioned:
            if work.logical_id == "First" and work.properties.get("Size") == 1:
                raise ProvisioningFailed("cannot go back")
            return await original_update(work)

        memory.update = refuse_going_back  # type: ignore[method-assign]
        store.update_stack("s", _template(broken), {}, None)
        stuck = await store.settled("s")
        store.engine.updates.clear()  # what a restart of serve loses
        stuck.resources["First"].properties = None  # as read back when they held a writeOnly or NoEcho value
        store.continue_update_rollback("s")
        return await store.settled("s")

    stack = run(scenario())
    assert stack.status == "UPDATE_ROLLBACK_FAILED"
    assert stack.reason.startswith("cfnrun cannot roll back [First]: what they were before the update was not kept")


def test_an_attribute_a_resource_does_not_have_fails_the_resource_that_reads_it_in_the_services_words() -> None:
    from cfnrun.stacks.blueprint import missing_attribute

    reading = json.loads(json.dumps(TWO))
    reading["Second"]["Properties"]["ParentArn"] = {"Fn::GetAtt": ["First", "Nope"]}
    stack = _created(Memory(), reading)
    assert stack.status == "ROLLBACK_COMPLETE"
    assert [status for status, _ in _reasons(stack, "First")][-3:] == ["CREATE_COMPLETE", "DELETE_IN_PROGRESS", "DELETE_COMPLETE"]
    [(status, reason)] = _reasons(stack, "Second")
    assert status == "CREATE_FAILED" and reason is not None
    assert reason.startswith("Requested attribute Nope does not exist in schema for Test::Thing::Resource")
    # a custom resource's function answered no such key in its Data
    said = missing_attribute("Custom::Thing", "Thing", "Url", "arn:aws:cloudformation:us-east-1:123456789012:stack/s/1")
    assert said == "CustomResource attribute error: Vendor response doesn't contain Url attribute in object " \
                   "arn:aws:cloudformation:us-east-1:123456789012:stack/s/1|Thing"
