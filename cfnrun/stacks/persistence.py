"""Local stacks kept across restarts of serve (``--state DIR``): what is written, and how it is read back
(where: ``state_db.py``).

Written: each stack as DescribeStacks, DescribeStackEvents and the engine see it — its template,
parameters, resources (physical ids, Ref and GetAtt values, the model the handler last returned,
which never holds writeOnly values), outputs, events, its operations (each OperationId, so
DescribeEvents groups the events read back as before), each operation's pre-deployment validation
failures (``VALIDATION_ERROR`` events, in ``state_db.py``'s own table), the ResolvedValue of each
SSM-typed parameter — and the exports. Never written: the value of
a NoEcho parameter (masked wherever it appears), and the properties of a resource that hold a
writeOnly or NoEcho value (marked as not kept). What that costs after a restart:

- a NoEcho parameter must be given again on the next update (UsePreviousValue has nothing to use);
- a resource whose properties were masked is sent to its UPDATE handler on the next update even if
  its template did not change (cfnrun cannot tell), with the masked previous properties;
- a stack caught in the middle of an operation when serve stopped is read back failed
  (``*_FAILED``), its resources as they were last recorded — a resource whose create was still in
  flight with the id its handler's last IN_PROGRESS answer gave (``in_flight.py``); serve then rolls
  the create or update back, or finishes the delete (``interrupted_operations.py``).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Callable, Dict, List, Mapping, Optional

from cfnrun.stacks.blueprint import Blueprint, StackEnvironment, pseudo_parameters
from cfnrun.events.stack import StackEvent
from cfnrun.stacks.records import Stack, StackOutput, StackResource, mask_values
from cfnrun.stacks.state_db import StateError
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.loading import load_stack_template
from cfnrun.stacks.template.declarations import StackTemplate
from cfnrun.stacks.template.parameters import GivenParameter, ParameterValue, parameter_values, resolve_parameters

# What a stack caught mid-operation is read back as.
INTERRUPTED = {
    "CREATE_IN_PROGRESS": "CREATE_FAILED",
    "ROLLBACK_IN_PROGRESS": "ROLLBACK_FAILED",
    "UPDATE_IN_PROGRESS": "UPDATE_ROLLBACK_FAILED",
    "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS": "UPDATE_COMPLETE",
    "UPDATE_ROLLBACK_IN_PROGRESS": "UPDATE_ROLLBACK_FAILED",
    "UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS": "UPDATE_ROLLBACK_COMPLETE",
    "DELETE_IN_PROGRESS": "DELETE_FAILED",
}
_RESOURCE_FIELDS = tuple(f.name for f in fields(StackResource))
STOPPED_MID_OPERATION = "cfnrun serve stopped during this operation; its resources are as last recorded"


@dataclass
class RestoredBlueprint(Blueprint):
    """A stack's last template read back: what the engine needs to delete the stack, or to return to it on rollback."""

    restored_outputs: List[StackOutput] = field(default_factory=list)
    restored_imports: List[str] = field(default_factory=list)
    policies: Dict[str, List[str]] = field(default_factory=dict)  # logical id → [DeletionPolicy, UpdateReplacePolicy]

    def deletion_policy(self, logical_id: str) -> str:
        return self.policies.get(logical_id, ["Delete", "Delete"])[0]

    def update_replace_policy(self, logical_id: str) -> str:
        return self.policies.get(logical_id, ["Delete", "Delete"])[1]

    def properties(self, logical_id: str, resources: Mapping[str, StackResource]) -> Dict[str, Any]:
        raise TemplateError("Template error: this stack's template was read back after a restart: update the stack to resolve it again")

    def outputs(self, resources: Mapping[str, StackResource]) -> List[StackOutput]:
        return list(self.restored_outputs)

    def imports(self) -> "frozenset[str]":
        return frozenset(self.restored_imports)


def blueprint_record_of(blueprint: Blueprint) -> Dict[str, Any]:
    """What a stack's record keeps of its blueprint: the same for every save while the blueprint is the stack's."""
    return {
        "dependencies": {k: sorted(v) for k, v in blueprint.dependencies.items()},
        "order": blueprint.resource_ids(),
        "conditions": blueprint.conditions,
        "wanted": {lid: sorted(blueprint.attributes_wanted(lid)) for lid in blueprint.resource_ids()},
        "policies": {lid: [blueprint.deletion_policy(lid), blueprint.update_replace_policy(lid)] for lid in blueprint.resource_ids()},
        "imports": sorted(blueprint.imports()),
    }


def scrubbed(value: Any, stack: Stack) -> Any:
    """``value`` with every NoEcho parameter value in its text replaced by **** (``value`` itself when there is none:
    what is written is serialised at once, never changed)."""
    secrets = [secret for secret in stack.secrets() if secret]  # found once, not once per text
    return scrubbed_with(value, secrets) if secrets else value


def scrubbed_with(value: Any, secrets: List[str]) -> Any:
    """``value`` (a record about to be written) with each of ``secrets`` in its texts replaced by ****."""
    if isinstance(value, str):
        return mask_values(value, secrets)
    if isinstance(value, dict):
        return {key: scrubbed_with(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [scrubbed_with(item, secrets) for item in value]
    return value


@dataclass(frozen=True)
class RolledBackTo:
    """What an update in flight, or left UPDATE_FAILED, would roll back to: the stack's template, parameters, tags and
    outputs before it (its resources' properties before it are in the stack's events, ``interrupted_update.py``)."""

    blueprint: Blueprint
    parameters: Dict[str, str]
    tags: Dict[str, str]
    outputs: List[StackOutput]


def rolled_back_to_record(stack: Stack, before: RolledBackTo, blueprint_record: Dict[str, Any]) -> Dict[str, Any]:
    """``before`` as a stack's record keeps it, in the record's own keys, so that ``restored_blueprint`` reads it back; its
    NoEcho parameter values are not written (nor any value of the stack's own, masked as in the record)."""
    no_echo = before.blueprint.no_echo
    record = {
        "template_body": before.blueprint.template_body,
        "macro_output": before.blueprint.template.macro_output,
        "parameters": {k: v for k, v in before.parameters.items() if k not in no_echo},
        "no_echo": list(no_echo),
        "tags": dict(before.tags),
        "outputs": [asdict(o) for o in before.outputs],
        "blueprint": blueprint_record,
        "resolved_values": {k: v for k, v in before.blueprint.resolved_values.items() if k not in no_echo},
    }
    secrets = [secret for secret in [*stack.secrets(), *(before.parameters.get(name) for name in no_echo)] if secret]
    kept: Dict[str, Any] = scrubbed_with(record, secrets) if secrets else record
    kept["template_body"] = before.blueprint.template_body  # the user's own file, as the record keeps it (``stack_record``)
    return kept


def restored_rolled_back_to(record: Dict[str, Any], environment: StackEnvironment) -> Optional[RolledBackTo]:
    """The ``rolled_back_to`` of a stack's record read back, or None when it has none."""
    kept = record.get("rolled_back_to")
    if not isinstance(kept, dict):
        return None
    blueprint = restored_blueprint(dict(kept, name=record.get("name")), environment)
    if blueprint is None:
        return None
    return RolledBackTo(blueprint, dict(kept["parameters"]), dict(kept["tags"]), list(blueprint.restored_outputs))


def stack_record(
    stack: Stack, blueprint: Optional[Blueprint], masked: Mapping[str, bool], events_from: int = 0,
    blueprint_record: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """A stack as written; ``masked``: the resources whose properties hold writeOnly or NoEcho values.

    ``events_from``: its events from this one on (those before are written already: an event is written once, so a
    save costs the same however many events the stack has); ``blueprint_record``: ``blueprint_record(blueprint)``,
    when the caller kept it from an earlier save of the same blueprint.
    """
    record = scrubbed(_record(stack, blueprint, masked, events_from, blueprint_record), stack)
    # The template is the user's own file: a NoEcho Default is in it already, and masking text in it would break it (YAML
    # reads "Default: ****" as an alias; a short value like "dev" would be masked wherever it appears).
    record["template_body"] = stack.template_body
    return record


def _record(
    stack: Stack, blueprint: Optional[Blueprint], masked: Mapping[str, bool], events_from: int,
    blueprint_record: Optional[Dict[str, Any]],
) -> Dict[str, Any]:
    resources = []
    for resource in stack.resources.values():
        record = {name: getattr(resource, name) for name in _RESOURCE_FIELDS}  # no deep copy: scrubbed() copies what it keeps
        record["properties_masked"] = masked.get(resource.logical_id, True)
        if record["properties_masked"]:
            record["properties"] = None
        resources.append(record)
    return {
        "stack_id": stack.stack_id,
        "name": stack.name,
        "status": stack.status,
        "reason": stack.reason,
        "template_body": stack.template_body,
        "parameters": {k: v for k, v in stack.parameters.items() if k not in stack.no_echo},
        "no_echo": list(stack.no_echo),
        "tags": stack.tags,
        "description": stack.description,
        "disable_rollback": stack.disable_rollback,
        "termination_protection": stack.termination_protection,
        "capabilities": list(stack.capabilities),
        "notification_arns": list(stack.notification_arns),
        "rollback_configuration": stack.rollback_configuration,
        "role_arn": stack.role_arn,
        "alias_name": stack.alias_name,
        "deployment_config": stack.deployment_config,
        "timeout_in_minutes": stack.timeout_in_minutes,
        "policy_body": stack.policy_body,
        "created_at": stack.created_at,
        "updated_at": stack.updated_at,
        "deleted_at": stack.deleted_at,
        "resources": resources,
        "outputs": [asdict(o) for o in stack.outputs],
        "events": [asdict(e) for e in stack.events[events_from:]],
        "blueprint": (blueprint_record or blueprint_record_of(blueprint)) if blueprint is not None else None,
        # what the account's macros made of the template: read back instead of running them again (they may not be served)
        "macro_output": blueprint.template.macro_output if blueprint is not None else None,
        "operation_id": stack.operation_id,
        "change_set_id": stack.change_set_id,
        "operations": [list(o) for o in stack.operations],
        "resolved_values": {k: v for k, v in blueprint.resolved_values.items() if k not in stack.no_echo} if blueprint is not None else {},
    }


def restored_stack(record: Dict[str, Any]) -> Stack:
    resources = {}
    for item in record["resources"]:
        item = dict(item)
        item.pop("properties_masked", None)
        resources[item["logical_id"]] = StackResource(**item)
    stack = Stack(
        stack_id=record["stack_id"],
        name=record["name"],
        status=record["status"],
        template_body=record["template_body"],
        parameters=dict(record["parameters"]),
        no_echo=tuple(record["no_echo"]),
        tags=dict(record["tags"]),
        description=record.get("description"),
        reason=record.get("reason"),
        disable_rollback=bool(record.get("disable_rollback")),
        termination_protection=bool(record.get("termination_protection")),
        capabilities=tuple(record.get("capabilities") or ()),
        notification_arns=tuple(record.get("notification_arns") or ()),
        rollback_configuration=dict(record.get("rollback_configuration") or {}),
        role_arn=record.get("role_arn"),
        alias_name=record.get("alias_name"),
        deployment_config=dict(record.get("deployment_config") or {}),
        timeout_in_minutes=record.get("timeout_in_minutes"),
        policy_body=record.get("policy_body"),
        created_at=record["created_at"],
        updated_at=record.get("updated_at"),
        deleted_at=record.get("deleted_at"),
        resources=resources,
        outputs=[StackOutput(**o) for o in record["outputs"]],
        events=[StackEvent(**e) for e in record["events"]],
        operation_id=record.get("operation_id"),
        change_set_id=record.get("change_set_id"),
        operations=[(str(kind), str(operation)) for kind, operation in record.get("operations") or ()],
    )
    interrupted = INTERRUPTED.get(stack.status)
    if interrupted is not None:
        for logical_id in [r.logical_id for r in stack.resources.values() if r.status == "NOT_STARTED"]:
            del stack.resources[logical_id]  # waiting for others when serve stopped: never made, in no record the API shows
        for resource in stack.resources.values():
            if resource.status.endswith("_IN_PROGRESS"):  # as its handler's last answer left it (``in_flight.py``)
                stack.set_resource_status(resource, resource.status.replace("_IN_PROGRESS", "_FAILED"), STOPPED_MID_OPERATION)
        stack.set_status(interrupted, STOPPED_MID_OPERATION)
    return stack


def restored_blueprint(record: Dict[str, Any], environment: StackEnvironment) -> Optional[RestoredBlueprint]:
    saved = record.get("blueprint")
    if saved is None:
        return None
    try:
        body = json.dumps(record["macro_output"]) if record.get("macro_output") is not None else record["template_body"]
        template = load_stack_template(body, dict(record["parameters"]), environment.module_fragments, environment.read_include,
                                       environment.run_macro)
    except TemplateError as error:
        raise StateError(f"stack {record.get('name')}: its kept template no longer reads ({error}); remove it from the state folder") from None
    if record.get("macro_output") is not None:
        template = replace(template, macro_output=record["macro_output"])  # kept for the next restart too
    return RestoredBlueprint(
        template_body=record["template_body"],
        template=template,
        environment=environment,
        parameters=dict(record["parameters"]),
        parameter_values=_parameter_values(template, record),
        conditions=dict(saved["conditions"]),
        dependencies={k: frozenset(v) for k, v in saved["dependencies"].items()},
        order=list(saved["order"]),
        pseudo=pseudo_parameters(environment),
        no_echo=tuple(record["no_echo"]),
        _wanted={k: frozenset(v) for k, v in saved["wanted"].items()},
        restored_outputs=[StackOutput(**o) for o in record["outputs"]],
        restored_imports=list(saved["imports"]),
        policies={k: list(v) for k, v in saved["policies"].items()},
        resolved_values=dict(record.get("resolved_values") or {}),
    )


def _parameter_values(template: StackTemplate, record: Dict[str, Any]) -> Dict[str, ParameterValue]:
    """What ``Ref`` gave each parameter in the stack's last operation, from the values kept (an SSM type's as it was read,
    not read again), so the next change plan compares its values (Metadata, say) with the same ones. Empty when a value
    was not kept (a NoEcho parameter): the next operation must be given it again anyway."""
    kept = dict(record["parameters"])
    ssm_parameter = kept_ssm_values(kept, record.get("resolved_values") or {})
    try:
        return parameter_values(resolve_parameters(template.parameters, [GivenParameter(k, v) for k, v in kept.items()], None, ssm_parameter))
    except TemplateError:
        return {}


def kept_ssm_values(parameters: Mapping[str, str], resolved_values: Mapping[str, str]) -> Callable[[str], str]:
    """Reads an SSM-typed parameter's value as it was read when kept (``resolved_values``, by parameter name), not again."""
    read = {parameters[key]: value for key, value in resolved_values.items() if key in parameters}

    def ssm_parameter(name: str) -> str:
        if name not in read:
            raise TemplateError(f"{name} was not kept")
        return read[name]

    return ssm_parameter
