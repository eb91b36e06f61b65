"""The stack engine's own work per resource stays the same however many resources the stack has.

A resource's turn must not walk the whole template again (that made a create quadratic in
its resources): what the engine derives from the template is worked out once per operation.
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from cfnrun.app.stacks import user_types
from cfnrun.events.stack import StackEvent
from cfnrun.model.schema import ResourceSchema
from cfnrun.stacks import blueprint as blueprint_module
from cfnrun.stacks import persistence
from cfnrun.stacks.blueprint import Blueprints
from cfnrun.stacks.engine import StackEngine
from cfnrun.stacks.exports import Exports
from cfnrun.stacks.provisioning import NoProvisioner
from cfnrun.stacks.records import Stack
from cfnrun.stacks.store import StackStore
from kept_state import kept_records
from test_stack_engine import Memory, Router, _template

REGION, ACCOUNT = "us-east-1", "123456789012"
SAMPLES = Path(__file__).resolve().parents[2] / "samples"
TYPE = "Cfnrun::Sample::Cluster"


class AnyType:
    def for_type(self, type_name: str) -> object:
        if not type_name.startswith("Test::"):
            raise NoProvisioner(type_name)
        return self


def _clusters(count: int, **extra: Any) -> str:
    """``count`` resources, each but the first with the ``extra`` properties."""
    resources: Dict[str, Any] = {
        f"C{index}": {
            "Type": "Test::Thing::Resource",
            "Properties": {"Name": {"Fn::Sub": "${AWS::StackName}-" + str(index)}, **(extra if index else {})},
        }
        for index in range(count)
    }
    return json.dumps({"Resources": resources})


@pytest.mark.parametrize("reads", [{}, {"Peer": {"Fn::GetAtt": ["C0", "Arn"]}}], ids=["no attribute read", "attributes read"])
def test_the_attributes_each_resource_must_report_are_found_in_one_walk_of_the_template(
    monkeypatch: pytest.MonkeyPatch, reads: Dict[str, Any]
) -> None:
    walked: List[object] = []
    walk = blueprint_module.attribute_reads  # the one walker of the template's attribute reads, once per value it visits

    def counted(value: Any, path: str) -> Any:
        walked.append(value)
        return walk(value, path)

    monkeypatch.setattr(blueprint_module, "attribute_reads", counted)
    exports = Exports()
    blueprint = Blueprints(AnyType(), exports, REGION, ACCOUNT).prepare(_clusters(40, **reads), {}, {}, "s", "arn:s")  # type: ignore[arg-type]
    first = blueprint.attributes_wanted("C0")
    one_walk = len(walked)
    assert one_walk > 40  # the template was walked: every resource's properties
    others = [blueprint.attributes_wanted(f"C{index}") for index in range(1, 40)]
    assert len(walked) == one_walk
    assert first == (frozenset({"Arn"}) if reads else frozenset())
    assert others == [frozenset()] * 39


def test_with_state_each_stack_event_is_turned_into_its_record_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A save writes the stack's new events only: building every event's record again on each event made --state cubic."""
    built: List[StackEvent] = []
    as_record = persistence.asdict

    def counted(value: Any) -> Dict[str, Any]:
        if isinstance(value, StackEvent):
            built.append(value)
        return as_record(value)

    monkeypatch.setattr(persistence, "asdict", counted)
    looked_up: List[int] = []  # each time a stack's secrets are gathered (a walk over its resources)
    secrets_of = Stack.secrets

    def gathered(stack: Stack) -> Any:
        looked_up.append(1)
        return secrets_of(stack)

    monkeypatch.setattr(Stack, "secrets", gathered)
    memory = Memory()

    async def create() -> Any:
        exports = Exports()
        store = StackStore(StackEngine(Router(memory), exports, REGION, ACCOUNT), Blueprints(Router(memory), exports, REGION, ACCOUNT), tmp_path)
        store.restore()
        store.create_stack("kept", _template(resources), {}, {})
        return await store.settled("kept")

    resources = {f"C{index}": {"Type": "Test::Thing::Resource", "Properties": {"Name": f"c{index}"}} for index in range(20)}
    stack = asyncio.run(create())
    assert stack.status == "CREATE_COMPLETE"
    assert len(stack.events) == 2 + 3 * 20  # the stack's two, and each resource's three
    assert sorted(e.event_id for e in built) == sorted(e.event_id for e in stack.events)
    assert [e["event_id"] for e in kept_records(tmp_path)[0]["events"]] == [e.event_id for e in stack.events]
    # a few times per event and save (its reason masked, the record scrubbed, the properties checked), not per resource
    assert len(looked_up) <= 4 * len(stack.events)


class OneType:
    """The ``TypeOperations`` part validation reads: the served type's schema as it is now."""

    def __init__(self, schema: ResourceSchema) -> None:
        self.current = schema

    def schema(self, type_name: str) -> ResourceSchema:
        return self.current


def test_properties_validated_before_the_stack_starts_are_not_validated_again_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pre-deployment validation and the resource's own turn check the same properties: the schema runs once for both,
    and again for other properties or a reloaded schema."""
    checked: List[Dict[str, Any]] = []
    check = user_types.service_problems

    def counted(schema: ResourceSchema, document: Dict[str, Any], *rest: Any) -> Any:
        checked.append(document)
        return check(schema, document, *rest)

    monkeypatch.setattr(user_types, "service_problems", counted)
    document = json.loads((SAMPLES / "cluster" / "cfnrun-sample-cluster.json").read_text())
    served = OneType(ResourceSchema(document))
    types = user_types.UserTypes(served)  # type: ignore[arg-type]
    good, bad = {"Name": "c-1", "NodeCount": "1"}, {"Name": "c-1", "NodeCount": "1", "Unknown": "x"}
    assert types.validate(TYPE, "C1", good) is None
    assert types.validate(TYPE, "C1", dict(good)) is None
    assert len(checked) == 1
    problem = types.validate(TYPE, "C1", bad)
    assert problem is not None and "Unknown" in problem and len(checked) == 2
    assert types.validate(TYPE, "C1", bad) == problem and len(checked) == 2
    assert types.validate(TYPE, "C2", bad) == problem.replace("C1", "C2") and len(checked) == 3  # another resource
    served.current = ResourceSchema(document)  # a reload: the same properties are checked against the new schema
    assert types.validate(TYPE, "C1", bad) == problem and len(checked) == 4


def test_a_template_its_api_call_read_already_is_not_read_again_for_the_operation(monkeypatch: pytest.MonkeyPatch) -> None:
    from cfnrun.stacks.template.loading import load_stack_template

    reads: List[str] = []

    def counted(body: str, *args: Any, **kwargs: Any) -> Any:
        reads.append(body)
        return load_stack_template(body, *args, **kwargs)

    monkeypatch.setattr(blueprint_module, "load_stack_template", counted)
    blueprints = Blueprints(AnyType(), Exports(), REGION, ACCOUNT)  # type: ignore[arg-type]
    body, other = _clusters(3), _clusters(4)
    read_by_the_call = load_stack_template(body, {})
    with blueprints.loaded(body, {}, read_by_the_call):
        made = blueprints.prepare(body, {}, {}, "s", "arn:s")
        again = blueprints.prepare(body, {}, {}, "s", "arn:s")  # a second operation in the same call: read as before
    assert made.template is read_by_the_call
    assert again.template is not read_by_the_call and again.template == read_by_the_call and reads == [body]  # only the second read it
    with blueprints.loaded(body, {}, read_by_the_call):
        assert blueprints.prepare(other, {}, {}, "s", "arn:s").resource_ids() == ["C0", "C1", "C2", "C3"]  # another body: its own
    assert reads == [body, other]
    blueprints.prepare(body, {}, {}, "s", "arn:s")  # after the call: nothing kept
    assert reads == [body, other, body]


def test_pre_deployment_validation_gathers_a_new_stacks_resources_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each resource's planned properties mark what uses a resource still to be made; the set of those is gathered once
    for the plan, not once per resource (quadratic in a wide stack)."""
    from cfnrun.stacks import validation
    from cfnrun.stacks.blueprint import KNOWN_AFTER_APPLY, Blueprint
    from cfnrun.stacks.plan import plan_create

    resources: Dict[str, Any] = {"C0": {"Type": "Test::Thing::Resource", "Properties": {"Name": "c0"}}}
    for index in range(1, 30):  # each uses the one before: known after it is made; one is refused by its provisioner
        properties = {"Name": f"c{index}", "Peer": {"Ref": f"C{index - 1}"}, **({"Invalid": "x"} if index == 7 else {})}
        resources[f"C{index}"] = {"Type": "Test::Thing::Resource", "Properties": properties}
    memory = Memory()
    exports = Exports()
    plan = plan_create(Blueprints(Router(memory), exports, REGION, ACCOUNT).prepare(_template(resources), {}, {}, "s", "arn:s"))
    gathered: List[int] = []
    resource_ids = Blueprint.resource_ids

    def counted(blueprint: Blueprint) -> List[str]:
        gathered.append(1)
        return resource_ids(blueprint)

    monkeypatch.setattr(Blueprint, "resource_ids", counted)
    planned: List[Dict[str, Any]] = []
    validate = memory.validate

    def seen(type_name: str, logical_id: str, properties: Dict[str, Any]) -> Any:
        planned.append(properties)
        return validate(type_name, logical_id, properties)

    monkeypatch.setattr(memory, "validate", seen)
    failures = validation.validate_plan(plan, Router(memory), {}, "arn:s")  # type: ignore[arg-type]
    assert len(gathered) == 1
    assert [(f.logical_id, f.name) for f in failures] == [("C7", validation.PROPERTY_VALIDATION)]
    assert planned[0] == {"Name": "c0"} and planned[5] == {"Name": "c5"}  # Peer, known after C4 is made, left out of the check
    assert plan.blueprint.planned_properties("C5", {}, {"C4"})["Peer"] == KNOWN_AFTER_APPLY


def test_without_hooks_no_resource_or_stack_operation_is_described_for_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no hook configured, a resource's turn builds no hook target (and a create writes no template out for STACK
    hooks); with one, each resource operation and the stack's are described as before."""
    from cfnrun.stacks import engine as engine_module

    described: List[str] = []
    target = engine_module.HookedOperation

    def counted(*args: Any, **kwargs: Any) -> Any:
        described.append(str(args[2]))  # the target's name: a logical id, or the stack's name
        return target(*args, **kwargs)

    monkeypatch.setattr(engine_module, "HookedOperation", counted)
    memory = Memory()
    resources = {f"C{index}": {"Type": "Test::Thing::Resource", "Properties": {"Name": f"c{index}"}} for index in range(5)}

    async def create(hooks: Any) -> Any:
        exports = Exports()
        engine = StackEngine(Router(memory), exports, REGION, ACCOUNT, hooks=hooks)
        store = StackStore(engine, Blueprints(Router(memory), exports, REGION, ACCOUNT))
        store.create_stack("s", _template(resources), {}, {})
        return await store.settled("s")

    assert asyncio.run(create(None)).status == "CREATE_COMPLETE"
    assert described == []

    class Allowing:
        async def before(self, operation: Any, report: Any) -> None:
            return None

    assert asyncio.run(create(Allowing())).status == "CREATE_COMPLETE"
    assert sorted(described) == sorted(["s", *resources])
