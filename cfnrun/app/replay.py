"""``cfnrun replay``: run a recorded operation again against today's code and say what changed."""
from __future__ import annotations

import copy
import difflib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, List

from cfnrun.app.invoke import execute, prepare
from cfnrun.app.options import from_record, overrides
from cfnrun.app.settings.history import ReplayOptions
from cfnrun.app.settings.invoke import InvokeSettings
from cfnrun.history.masking import SECRET_MASK, Masker
from cfnrun.history.store import HistoryStore, RecordedOperation
from cfnrun.events.operation import Observer, OperationCompleted, OperationResult
from cfnrun.invoker.payloads import Entrypoint
from cfnrun.invoker.hook_request_files import load_hook_request_file
from cfnrun.invoker.request_files import OperationInput, load_request_file
from cfnrun.model.errors import CfnrunError
from cfnrun.model.project import load_project
from cfnrun.model.seen_call import SeenCall
from cfnrun.model.schema import WRITE_ONLY_MASK, ResourceSchema
from cfnrun.app.history import SERVED_SOURCES, recorded_events


@dataclass
class Change:
    what: str  # status, errorCode, resourceModel, resourceModels, violations
    lines: List[str]  # a readable account: "recorded → now", or a unified diff


@dataclass
class ReplayReport:
    operation: RecordedOperation
    result: OperationResult
    changes: List[Change] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return not self.changes


def _recorded_request(operation: RecordedOperation) -> Dict[str, Any]:
    """The request and flags of a recorded operation, from ``cfnrun invoke``'s record or serve's first payload."""
    request = operation.request
    if request.get("source") in SERVED_SOURCES:  # both record the request and the settings
        return {"request": request["request"], "settings": request["settings"]}
    payload = request.get("payload") or {}
    settings: Dict[str, Any] = {"action": operation.action, "function": operation.function}
    call = SeenCall.parse(payload)
    if call.hook_target is not None:  # a hook's HookInvocationRequest or HookTestEvent
        test = call.test_event
        settings.update(
            entrypoint=(Entrypoint.TEST if test else Entrypoint.TYPE).value,
            region=payload.get("region"),
            accountId=None if test else payload.get("awsAccountId"),
        )
        body = {
            "desiredResourceState": call.desired,
            "previousResourceState": call.previous,
            "typeConfiguration": payload.get("typeConfiguration" if test else "hookModel"),
            "targetName": call.hook_target.name,
        }
    elif isinstance(payload.get("request"), dict):  # a sam-tests event
        inner = payload["request"]
        settings.update(entrypoint=Entrypoint.TEST.value, region=payload.get("region"), accountId=inner.get("awsAccountId"))
        body = {key: inner.get(key) for key in ("desiredResourceState", "previousResourceState", "typeConfiguration")}
        body["logicalResourceIdentifier"] = inner.get("logicalResourceIdentifier")
    else:  # a HandlerRequest
        data = payload.get("requestData") or {}
        settings.update(entrypoint=Entrypoint.TYPE.value, region=payload.get("region"), accountId=payload.get("awsAccountId"))
        body = {
            "desiredResourceState": data.get("resourceProperties"),
            "previousResourceState": data.get("previousResourceProperties"),
            "typeConfiguration": data.get("typeConfiguration"),
            "logicalResourceIdentifier": data.get("logicalResourceId"),
        }
    return {"request": body, "settings": settings}


def _masked(schema: ResourceSchema, request: Dict[str, Any]) -> List[str]:
    found: "set[str]" = set()
    for key in ("desiredResourceState", "previousResourceState"):
        model = request.get(key)
        if isinstance(model, dict):
            found.update(p for p in schema.write_only_properties if schema.value_at(model, p) == WRITE_ONLY_MASK)
    return sorted(found)


def replay_settings(
    operation: RecordedOperation, project_dir: Path, options: ReplayOptions
) -> "tuple[InvokeSettings, List[str]]":
    """The settings ``cfnrun invoke`` ran with (its recorded options) with replay's overrides; and what the user should know."""
    recorded = _recorded_request(operation)
    flags, body = recorded["settings"], recorded["request"]
    notes: List[str] = []
    project = load_project(project_dir, usable_schema=False)
    if options.request_file:
        request = (load_hook_request_file if project.is_hook else load_request_file)(options.request_file)
        notes += request.warnings
    else:
        configuration = body.get("typeConfiguration")
        if SECRET_MASK in json.dumps(configuration):  # recorded masked: the type's own configuration file (cfn's), if any, instead
            configuration = None
            notes.append("the typeConfiguration was not recorded (history masks its values): pass --request FILE to send one")
        request = OperationInput(
            desired=copy.deepcopy(body.get("desiredResourceState") or {}),
            previous=copy.deepcopy(body.get("previousResourceState")),
            type_configuration=configuration,
            logical_resource_id=body.get("logicalResourceIdentifier"),
            target_name=body.get("targetName"),
        )
        masked = _masked(project.schema, body)
        if masked:
            notes.append(
                f"writeOnly {', '.join(masked)} {'was' if len(masked) == 1 else 'were'} not recorded: replayed as {WRITE_ONLY_MASK!r}; "
                "pass --request FILE to send the real value(s)"
            )
    settings = from_record(InvokeSettings, flags, request=request, project_dir=project_dir)
    if settings.lambda_endpoint:
        settings = replace(settings, function=flags.get("lambdaFunction") or settings.function)
    return replace(settings, **overrides(options)), notes


def _without_read_only(schema: ResourceSchema, model: Any) -> Any:
    if not isinstance(model, dict):
        return model
    pruned = copy.deepcopy(model)
    for container, key in reversed(schema.locate(pruned, schema.read_only_properties)):
        del container[key]
    return pruned


def _diff(what: str, before: Any, after: Any, operation_id: int) -> List[str]:
    def text(value: Any) -> List[str]:
        return json.dumps(value, indent=2, sort_keys=True).splitlines()

    return list(difflib.unified_diff(text(before), text(after), f"{what} recorded (#{operation_id})", f"{what} now", lineterm=""))


def compare(
    schema: ResourceSchema, operation_id: int, recorded: OperationResult, now: OperationResult, violations: bool = True
) -> List[Change]:
    """What differs in the outcome. readOnly properties (generated ids, timestamps) are left out of the models;
    ``violations=False`` leaves the contract violations out too."""
    masker = Masker(schema)
    changes: List[Change] = []
    for what, before, after in (("status", recorded.status.value, now.status.value), ("errorCode", recorded.error_code, now.error_code)):
        if before != after:
            changes.append(Change(what, [f"{what}: {before} → {after}"]))
    before_model = _without_read_only(schema, recorded.resource_model)
    after_model = _without_read_only(schema, masker.model(now.resource_model))
    if before_model != after_model:
        changes.append(Change("resourceModel", _diff("resourceModel", before_model, after_model, operation_id)))
    before_models = sorted((_without_read_only(schema, m) for m in recorded.resource_models or []), key=json.dumps)
    after_models = sorted((_without_read_only(schema, m) for m in masker.models(now.resource_models) or []), key=json.dumps)
    if (recorded.resource_models is None) != (now.resource_models is None) or before_models != after_models:
        changes.append(Change("resourceModels", _diff("resourceModels", before_models, after_models, operation_id)))
    before_rules = {(v.rule.id, v.pointer) for v in recorded.violations}
    after_rules = {(v.rule.id, v.pointer) for v in now.violations}
    if violations and before_rules != after_rules:
        lines = [f"violations: - [{rule}]{' at ' + pointer if pointer else ''} (gone)" for rule, pointer in sorted(before_rules - after_rules, key=str)]
        lines += [f"violations: + [{v.rule.id}] {v.message}" for v in now.violations if (v.rule.id, v.pointer) in after_rules - before_rules]
        changes.append(Change("violations", lines))
    return changes


def recorded_result(store: HistoryStore, operation: RecordedOperation) -> OperationResult:
    last = recorded_events(operation, store.events(operation.id))[-1]
    if not isinstance(last, OperationCompleted):
        raise CfnrunError(f"operation {operation.id} has no recorded outcome to compare with")
    return last.result


async def replay(store: HistoryStore, project_dir: Path, options: ReplayOptions, observers: List[Observer]) -> ReplayReport:
    operation_id = options.operation_id
    operation = store.get(operation_id)
    settings, notes = replay_settings(operation, project_dir, options)
    prepared = prepare(settings)
    result = await execute(prepared, observers, on_note=notes.append)
    recorded = recorded_result(store, operation)
    same_checks = operation.source == "invoke"
    if not same_checks:
        notes.append(
            "violations are not compared: serve checked each call against that call's request, "
            "replay checks the operation against the first request, as cfnrun invoke does"
        )
    changes = compare(prepared.project.schema, operation_id, recorded, result, violations=same_checks)
    return ReplayReport(operation, result, changes, notes + prepared.notes)
