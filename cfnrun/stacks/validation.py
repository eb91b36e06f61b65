"""Pre-deployment validation: what CloudFormation checks of a change plan before any resource is touched.

Since 2025-11 the service validates every change set as it is created, and since 2026-06-30 every
CreateStack and UpdateStack too, unless the call says ``DisableValidation``. Two checks refuse
(their failure mode is FAIL): each resource's properties against its type's schema
(``AWS::EarlyValidation::PropertyValidation``) and a new resource whose name an existing resource
already has (``AWS::EarlyValidation::ResourceExistenceCheck``). A change set that fails them is
FAILED and cannot be executed; a stack operation that fails them ends before its first resource.
Each failure is a ``VALIDATION_ERROR`` event of the operation (DescribeEvents), with the path in the
template it is about.

What was read and what is inferred: the validation names, the change set's status reason and the
FAIL mode are AWS's (its documentation and the answers users quote). Here your types' properties are
checked against their schemas by their provisioner's own check (AWS::* types are checked against
theirs by cfn-lint before the operation, whose findings warn; a custom resource's function and a
hook's rule files are checked when they run), a value not known before execution is not checked, and a name
conflicts when a createOnly property holds the physical id of a resource of the same type that a
stack on this serve already has (what the endpoint holds outside any stack is not asked); the
failure's reason for a name is the service's AlreadyExists wording, inferred.

Apart from it, ``unsupported_attribute`` is the check the service makes of the template as the
stack operation starts (the engine runs it, whatever DisableValidation says): an output reading an
attribute its type lacks stops the operation before any resource (docs/reference/templates.md,
"Validation as the operation starts").
"""
from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from cfnrun.stacks.blueprint import KNOWN_AFTER_APPLY, Blueprint
from cfnrun.stacks.plan import ChangePlan, ResourceChange
from cfnrun.stacks.provisioning import AttributeNames, NoProvisioner, Provisioner, Provisioners, Replacement
from cfnrun.stacks.records import Stack
from cfnrun.stacks.template.parameter_types import aws_specific_item
from cfnrun.stacks.template.parameters import NO_ECHO_MASK

PROPERTY_VALIDATION = "AWS::EarlyValidation::PropertyValidation"
RESOURCE_EXISTENCE_CHECK = "AWS::EarlyValidation::ResourceExistenceCheck"
# A stack event's DetailedStatus when "template validation failed because of invalid properties in the template" and its
# ResourceStatusReason says which (the API reference's StackEvent): here the event of an ``unsupported_attribute`` refusal.
VALIDATION_FAILED = "VALIDATION_FAILED"
# The types whose provisioner checks more than a schema's syntax (a custom resource's function, a hook's rule files):
# those checks stay with the execution; AWS's own types are checked against their schemas by cfn-lint before the operation.
NOT_SCHEMA_CHECKED = ("AWS::", "Custom::")
_PROBLEM_LINE = re.compile(r"^#(?P<pointer>[^:]*): (?P<message>.*)$")
_REQUIRED = re.compile(r"'(?P<quoted>[A-Za-z0-9_]+)' is a required property|required (?:key|property) \[(?P<named>[A-Za-z0-9_]+)\]")


@dataclass(frozen=True)
class ValidationFailure:
    """One VALIDATION_ERROR: which validation, about which resource, where in the template, and why."""

    name: str
    logical_id: str
    resource_type: str
    path: str
    reason: str
    failure_mode: str = "FAIL"


def failed_reason(failures: Iterable[ValidationFailure]) -> str:
    """The status reason of a change set or stack operation the validation stopped, in the service's words."""
    names = ", ".join(dict.fromkeys(f.name for f in failures))
    return (
        f"The following hook(s)/validation failed: [{names}]. "
        "To troubleshoot Early Validation errors, use the DescribeEvents API for detailed failure information."
    )


def validate_plan(
    plan: ChangePlan, provisioners: Provisioners, names_taken: Mapping[Tuple[str, str], Tuple[str, str]], stack_id: str
) -> List[ValidationFailure]:
    """Every failure of ``plan``'s resources. ``names_taken``: (type, physical id) → (stack id, logical id) of each
    resource the serve's stacks hold."""
    failures: List[ValidationFailure] = []
    to_make: Optional[Set[str]] = None  # a new stack's resources, every one still to be made: gathered once, not once per resource
    for change in plan.changes:
        if change.action not in ("Add", "Modify"):
            continue
        try:
            provisioner = provisioners.for_type(change.resource_type)
        except NoProvisioner:
            continue  # refused when the blueprint was made
        if change.after is None and to_make is None:
            to_make = set(plan.blueprint.resource_ids())
        properties = _planned(plan, change, to_make or set())
        if not change.resource_type.startswith(NOT_SCHEMA_CHECKED):
            failures += _property_failures(provisioner, change, properties)
        if change.action == "Add" or change.replacement == "True":
            failures += _name_conflicts(provisioner, change, properties, names_taken, stack_id)
    return failures


def _planned(plan: ChangePlan, change: ResourceChange, to_make: Set[str]) -> Dict[str, Any]:
    if change.after is not None:
        return change.after
    return plan.blueprint.planned_properties(change.logical_id, {}, to_make)  # a new stack's plan: every other resource is still to be made


def _property_failures(provisioner: Provisioner, change: ResourceChange, properties: Dict[str, Any]) -> List[ValidationFailure]:
    unknown = {name for name, value in properties.items() if value == KNOWN_AFTER_APPLY}
    known = {name: value for name, value in properties.items() if name not in unknown}
    problem = provisioner.validate(change.resource_type, change.logical_id, known)
    if problem is None:
        return []
    failures = []
    base = f"/Resources/{change.logical_id}/Properties"
    lines = [m for m in (_PROBLEM_LINE.match(line) for line in problem.splitlines()) if m]
    if not lines:  # a provisioner's check in words of its own: about the properties as a whole
        return [ValidationFailure(PROPERTY_VALIDATION, change.logical_id, change.resource_type, base, problem)]
    for line in lines:
        pointer, message = line.group("pointer"), line.group("message")
        required = _REQUIRED.search(message)
        missing = (required.group("quoted") or required.group("named")) if required else None
        if pointer.strip("/").split("/")[0] in unknown or missing in unknown:
            continue  # about a value known only once the resources it uses have run
        failures.append(ValidationFailure(PROPERTY_VALIDATION, change.logical_id, change.resource_type, base + pointer, message))
    return failures


def _name_conflicts(
    provisioner: Provisioner, change: ResourceChange, properties: Dict[str, Any],
    names_taken: Mapping[Tuple[str, str], Tuple[str, str]], stack_id: str,
) -> List[ValidationFailure]:
    failures = []
    for name, value in sorted(properties.items()):
        if not isinstance(value, str) or value == KNOWN_AFTER_APPLY:
            continue
        owner = names_taken.get((change.resource_type, value))
        if owner is None or owner == (stack_id, change.logical_id):
            continue
        if provisioner.replacement(change.resource_type, name) is not Replacement.ALWAYS:
            continue  # only a createOnly property names a resource
        failures.append(
            ValidationFailure(
                RESOURCE_EXISTENCE_CHECK, change.logical_id, change.resource_type, f"/Resources/{change.logical_id}/Properties/{name}",
                f"Resource of type '{change.resource_type}' with identifier '{value}' already exists.",
            )
        )
    return failures


async def missing_parameter_value(blueprint: Blueprint) -> Optional[str]:
    """Why the operation stops as it starts: a parameter of an AWS-specific type (``AWS::EC2::KeyPair::KeyName``, a
    ``List<AWS::EC2::Subnet::Id>``, a Systems Manager parameter holding one) whose value names nothing on the AWS endpoint,
    in the service's words as users quote them (m-chandler/factorio-spot-pricing#39: "Parameter validation failed:
    parameter value for parameter name HostedZoneId does not exist. Rollback requested by user."). That it is checked
    as the operation starts, with the rollback's reason, is read from that report; the rest (an update's, the
    VALIDATION_FAILED detail, the first parameter named only) is inferred. Without an endpoint nothing is looked up."""
    lookup = blueprint.environment.aws_value_missing
    if lookup is None:
        return None
    for name, declared in blueprint.template.parameters.items():
        item_type = aws_specific_item(declared.type)
        value = blueprint.parameter_values.get(name)
        if item_type is None or value is None:
            continue
        values = value if isinstance(value, list) else [value]
        missing = await asyncio.to_thread(lookup, item_type, values)
        if missing is not None:
            shown = NO_ECHO_MASK if name in blueprint.no_echo else missing
            return f"Parameter validation failed: parameter value {shown} for parameter name {name} does not exist"
    return None


def unsupported_attribute(blueprint: Blueprint, provisioners: Provisioners) -> Optional[str]:
    """Why the operation stops as it starts, before any resource: an output's Fn::GetAtt (or ``${X.Attr}``) reads an
    attribute its resource's type does not have, in the service's words (LocalStack's test_invalid_getatt_fails, recorded
    against AWS). Not part of the pre-deployment validation above (that recording predates it, and its change set was
    made): DisableValidation does not skip it. A type whose provisioner cannot tell (a custom resource) is never refused;
    only the first such output is named (inferred)."""
    for read in blueprint.output_attribute_reads():
        declared = blueprint.template.resources.get(read.logical_id)
        if declared is None:
            continue  # not a resource (refused when the template was read)
        try:
            provisioner = provisioners.for_type(declared.type)
        except NoProvisioner:
            continue  # fails when the resource comes to be made, saying what is served
        if isinstance(provisioner, AttributeNames) and provisioner.lacks_attribute(declared.type, read.attribute):
            return f"[Error] {read.path}: Resource type {declared.type} does not support attribute {{{read.attribute}}}"
    return None


def names_taken(stacks: Iterable[Stack]) -> Dict[Tuple[str, str], Tuple[str, str]]:
    """(type, physical id) → (stack id, logical id) of every resource the stacks hold."""
    taken: Dict[Tuple[str, str], Tuple[str, str]] = {}
    for stack in stacks:
        for resource in stack.resources.values():
            if resource.exists and resource.physical_id:
                taken[(resource.type_name, str(resource.physical_id))] = (stack.stack_id, resource.logical_id)
    return taken


def refuse(stack: Stack, verb: str, reason: str, token: Optional[str]) -> None:
    """What a CreateStack or UpdateStack the validation stopped leaves: the stack's own events, as when a STACK hook
    refuses, and no resource touched (the statuses are inferred: the service documents only that nothing is)."""
    stack.set_status(f"{verb}_IN_PROGRESS", "User Initiated", token)
    if verb == "CREATE" and stack.disable_rollback:
        stack.set_status("CREATE_FAILED", reason, token)
        return
    rolling_back = "ROLLBACK" if verb == "CREATE" else "UPDATE_ROLLBACK"
    stack.set_status(f"{rolling_back}_IN_PROGRESS", reason, token)
    stack.set_status(f"{rolling_back}_COMPLETE", None, token)
