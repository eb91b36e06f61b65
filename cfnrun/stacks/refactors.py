"""Stack refactoring: resources move between stacks, or take new logical ids, and no resource is touched.

``CreateStackRefactor`` gives each stack's template as it should be afterwards (``StackDefinitions``) and, where the
logical id alone cannot tell, where a resource goes (``ResourceMappings``). ``plan_refactor`` works out each resource's
destination as the user guide ("Stack refactoring") describes the service doing it: a resource whose logical id is in
its own stack's new template stays; one named in a mapping goes where the mapping says (Detection ``MANUAL``); one whose
logical id is gone from its stack and appears in exactly one other stack's new template moves there (``AUTO``). The
refactor is refused (``CREATE_FAILED``) when a resource would go nowhere (deleted), a template declares a resource no
existing one becomes (created), a resource would change its type or resolved properties, or an existing stack's
Parameters, Conditions or Mappings change — the guide's limitations. Its refusals' words are cfnrun's.

``rehome`` carries a refactor out on the stacks' records: each moved ``StackResource`` leaves its stack and joins its
destination under its new logical id, as it is (physical id, attributes, model); no handler is called. The store runs it
as one stack operation per stack, written to ``--state`` in one transaction (``StackStore.execute_refactor``).
"""
from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from cfnrun.stacks.blueprint import Blueprint
from cfnrun.stacks.records import Stack, StackResource

MAX_STACKS = 5  # the user guide: "a maximum of 5 stacks"
UNCHANGED = "No configuration changes detected."  # the service's Descriptions of a MOVE (aws-cli's example output)
VALIDATED_LATER = "Resource configuration changes will be validated during refactor execution."
STACK_TAG_KEYS = ("aws:cloudformation:stack-name", "aws:cloudformation:logical-id", "aws:cloudformation:stack-id")
KEPT_SECTIONS = ("Parameters", "Conditions", "Mappings")  # the guide: a refactor cannot change or add these


class RefactorProblem(Exception):
    """Why the service would not make the refactor: its StatusReason (CREATE_FAILED)."""


@dataclass(frozen=True)
class Location:
    stack_name: str
    logical_id: str


@dataclass(frozen=True)
class Move:
    """One resource that changes stack or logical id."""

    source: Location
    destination: Location
    detection: str  # AUTO | MANUAL
    type_name: str
    physical_id: Optional[str]
    compared: bool  # its properties were compared (and found the same); False: none were recorded to compare


@dataclass
class StackRefactor:
    refactor_id: str
    description: Optional[str]
    stack_ids: Dict[str, str]  # by stack name, in the order the definitions gave them (a stack it creates: the id it will have)
    created: Tuple[str, ...]  # the names of the stacks it creates (EnableStackCreation)
    blueprints: Dict[str, Blueprint] = field(default_factory=dict)  # each stack's template afterwards, by name
    moves: List[Move] = field(default_factory=list)
    status: str = "CREATE_COMPLETE"
    status_reason: Optional[str] = None
    execution_status: str = "AVAILABLE"
    execution_status_reason: Optional[str] = None
    operations: Dict[str, Optional[str]] = field(default_factory=dict)  # each existing stack's last operation when planned
    created_at: float = field(default_factory=time.time)
    # read back from --state without what executing it needs (``kept_refactors.py``): what it lacks, said by ExecuteStackRefactor
    unexecutable: Optional[str] = None

    def failed(self, reason: str) -> None:
        self.status, self.status_reason, self.execution_status = "CREATE_FAILED", reason, "UNAVAILABLE"


def new_refactor_id() -> str:
    return str(uuid.uuid4())  # a bare UUID, as aws-cli's example shows the service's


def plan_refactor(
    stacks: Mapping[str, Optional[Stack]], now: Mapping[str, Optional[Blueprint]], after: Mapping[str, Blueprint],
    mappings: Sequence[Mapping[str, Any]],
) -> List[Move]:
    """The moves that turn ``stacks`` (by name; None: one the refactor creates) with their blueprints ``now`` into the
    blueprints ``after``; raises RefactorProblem with the reason the refactor fails."""
    manual: Dict[Location, Location] = {}
    for mapping in mappings:
        source, destination = _location(mapping.get("Source")), _location(mapping.get("Destination"))
        for end in (source, destination):
            if end.stack_name not in stacks:
                raise RefactorProblem(f"Stack [{end.stack_name}] of a resource mapping is not one of the refactor's stack definitions")
        if source in manual:
            raise RefactorProblem(f"Resource [{source.logical_id}] of stack [{source.stack_name}] is mapped more than once")
        manual[source] = destination
    existing = {Location(name, lid): resource for name, stack in stacks.items() if stack is not None for lid, resource in stack.resources.items()
                if resource.exists}
    declared = {Location(name, lid) for name, blueprint in after.items() for lid in blueprint.resource_ids()}
    claimed: Dict[Location, Tuple[Location, str]] = {}
    for source in existing:
        destination, detection = _destination(source, manual, declared, existing)
        if destination in claimed:
            other = claimed[destination][0]
            raise RefactorProblem(
                f"Resources [{other.logical_id}] of stack [{other.stack_name}] and [{source.logical_id}] of stack [{source.stack_name}] "
                f"would both become [{destination.logical_id}] of stack [{destination.stack_name}]"
            )
        claimed[destination] = (source, detection)
    added = sorted(f"{d.logical_id} ({d.stack_name})" for d in declared if d not in claimed)
    if added:
        raise RefactorProblem(f"A stack refactor cannot create resources: [{', '.join(added)}] are not resources of the stacks being refactored")
    for name, stack in stacks.items():
        before = now.get(name)
        if stack is not None and before is not None:
            _require_kept_sections(name, before, after[name])
    moves = []
    for destination, (source, detection) in claimed.items():
        resource = existing[source]
        compared = _require_same(resource, source, destination, after[destination.stack_name], existing, claimed)
        if destination != source:
            moves.append(Move(source, destination, detection, resource.type_name, resource.physical_id, compared))
    return moves


def _location(given: Any) -> Location:
    given = given or {}
    return Location(str(given.get("StackName")), str(given.get("LogicalResourceId")))


def _destination(
    source: Location, manual: Mapping[Location, Location], declared: Any, existing: Mapping[Location, StackResource],
) -> Tuple[Location, str]:
    if source in manual:
        destination = manual[source]
        if destination not in declared:
            raise RefactorProblem(f"Resource [{destination.logical_id}] of a resource mapping is not in the template of stack [{destination.stack_name}]")
        return destination, "MANUAL"
    if source in declared:
        return source, "AUTO"
    found = [d for d in declared if d.logical_id == source.logical_id and d != source and d not in existing]
    if len(found) == 1:
        return found[0], "AUTO"
    if not found:
        raise RefactorProblem(
            f"A stack refactor cannot delete resources: [{source.logical_id}] of stack [{source.stack_name}] is in no template given; "
            "give a resource mapping if it takes a new logical id"
        )
    raise RefactorProblem(f"Resource [{source.logical_id}] of stack [{source.stack_name}] could go to more than one stack: give a resource mapping")


def _require_kept_sections(name: str, before: Blueprint, after: Blueprint) -> None:
    for section in KEPT_SECTIONS:
        if before.template.document.get(section) != after.template.document.get(section):
            raise RefactorProblem(f"A stack refactor cannot change the {section} of stack [{name}]: update the stack first")


def _require_same(
    resource: StackResource, source: Location, destination: Location, blueprint: Blueprint,
    existing: Mapping[Location, StackResource], claimed: Mapping[Location, Tuple[Location, str]],
) -> bool:
    """Refuse a resource whose type or resolved properties would change; True when its properties were compared."""
    type_name = blueprint.type_of(destination.logical_id)
    if type_name != resource.type_name:
        raise RefactorProblem(
            f"Resource [{source.logical_id}] of stack [{source.stack_name}] is a {resource.type_name}, "
            f"but [{destination.logical_id}] of stack [{destination.stack_name}] is declared a {type_name}"
        )
    if resource.properties is None:
        return False
    neighbours = {d.logical_id: existing[s] for d, (s, _) in claimed.items() if d.stack_name == destination.stack_name}
    try:
        properties = blueprint.properties(destination.logical_id, neighbours)
    except Exception as error:  # noqa: B902 - what cannot be worked out cannot be shown to be unchanged
        raise RefactorProblem(f"The properties of [{destination.logical_id}] of stack [{destination.stack_name}] cannot be resolved: {error}") from None
    if _canonical(properties) != _canonical(resource.properties):
        raise RefactorProblem(
            f"A stack refactor cannot change resource configurations: the properties of [{destination.logical_id}] of stack "
            f"[{destination.stack_name}] differ from those of [{source.logical_id}] of stack [{source.stack_name}]"
        )
    return True


def _canonical(properties: Mapping[str, Any]) -> str:
    return json.dumps(properties, sort_keys=True, default=str)


def rehome(refactor: StackRefactor, stacks: Mapping[str, Stack]) -> None:
    """Each moved resource, as it is, out of its stack and into its destination under its new logical id: all taken out
    first, so that two resources may trade logical ids."""
    now = time.time()
    taken = [(move, stacks[move.source.stack_name].resources.pop(move.source.logical_id)) for move in refactor.moves]
    for move, resource in taken:
        resource.logical_id, resource.updated_at = move.destination.logical_id, now
        stacks[move.destination.stack_name].resources[move.destination.logical_id] = resource
    for name, stack in stacks.items():
        blueprint = refactor.blueprints[name]
        stack.template_body, stack.description = blueprint.template_body, blueprint.description
        stack.resources = {lid: stack.resources[lid] for lid in blueprint.resource_ids() if lid in stack.resources} | {
            lid: r for lid, r in stack.resources.items() if lid not in blueprint.resource_ids()
        }


def refactor_actions(refactor: StackRefactor) -> List[Dict[str, Any]]:
    """ListStackRefactorActions: a CREATE of each stack it makes, then a MOVE of each resource that changes place."""
    actions: List[Dict[str, Any]] = [
        {"Action": "CREATE", "Entity": "STACK", "Description": f"Stack {name} will be created.", "PhysicalResourceId": refactor.stack_ids[name]}
        for name in refactor.created
    ]
    for move in refactor.moves:
        destination_id = refactor.stack_ids[move.destination.stack_name]
        tags = {"aws:cloudformation:stack-name": move.destination.stack_name, "aws:cloudformation:logical-id": move.destination.logical_id,
                "aws:cloudformation:stack-id": destination_id}
        actions.append(
            {
                "Action": "MOVE",
                "Entity": "RESOURCE",
                "PhysicalResourceId": move.physical_id,
                "Description": UNCHANGED if move.compared else VALIDATED_LATER,
                "Detection": move.detection,
                "TagResources": [{"Key": key, "Value": tags[key]} for key in STACK_TAG_KEYS],
                "UntagResources": list(STACK_TAG_KEYS),
                "ResourceMapping": {
                    "Source": {"StackName": refactor.stack_ids[move.source.stack_name], "LogicalResourceId": move.source.logical_id},
                    "Destination": {"StackName": destination_id, "LogicalResourceId": move.destination.logical_id},
                },
            }
        )
    return actions
