"""The CloudFormation API's operations on the local stacks: parsed input in, botocore-shaped output out.

``cfnrun.api.cloudformation`` reads the query protocol into each operation's input shape and
writes the output shape as XML; this module is what each operation means here. Input and
output member names are botocore's (``cloudformation`` 2010-05-15).
"""
from __future__ import annotations

import datetime
import json
from typing import Any, Awaitable, Callable, Dict, FrozenSet, List, Optional

from cfnrun.app.stacks import STACK_OPERATIONS
from cfnrun.app.stacks.drift_checks import DriftChecks
from cfnrun.app.stacks.hook_gate import HookGate
from cfnrun.app.stacks.hook_results import HookResult
from cfnrun.model.hook_protocol import HOOK_TYPE_VERSION
from cfnrun.stacks.blueprint import Blueprint
from cfnrun.stacks.changes import ResourceChange
from cfnrun.stacks.hooks import CHANGE_ACTIONS
from cfnrun.events.stack import StackEvent
from cfnrun.stacks.drift import DriftDetection, PropertyDifference, ResourceDrift
from cfnrun.stacks.records import Stack, StackResource, shown_parameters
from cfnrun.stacks.store import ChangeSet, StackError, StackStore
from cfnrun.stacks.template.loading import processed_body

PAGE_SIZE = 100
ANNOTATION_KEYS = ("annotationName", "status", "statusMessage", "remediationMessage", "remediationLink", "severityLevel")
Operation = Callable[[Dict[str, Any]], Awaitable[Dict[str, Any]]]


def _time(seconds: Optional[float]) -> Optional[datetime.datetime]:
    return datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc) if seconds is not None else None


def _present(shape: Dict[str, Any]) -> Dict[str, Any]:
    """Members with a value: botocore omits the rest."""
    return {key: value for key, value in shape.items() if value is not None}


def _given_parameters(params: Dict[str, Any]) -> Dict[str, Optional[str]]:
    given: Dict[str, Optional[str]] = {}
    for parameter in params.get("Parameters") or []:
        key = parameter.get("ParameterKey")
        if key is None:
            raise StackError("A Parameters member has no ParameterKey")
        given[key] = None if parameter.get("UsePreviousValue") else parameter.get("ParameterValue", "")
    return given


def _tags(params: Dict[str, Any]) -> Optional[Dict[str, str]]:
    tags = params.get("Tags")
    return None if tags is None else {tag["Key"]: tag.get("Value", "") for tag in tags}


def _page(items: List[Any], params: Dict[str, Any], size: int = PAGE_SIZE) -> "tuple[List[Any], Optional[str]]":
    start = int(params.get("NextToken") or 0)
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)


def _template_body(params: Dict[str, Any], required: bool = True) -> Optional[str]:
    if params.get("TemplateURL"):
        raise StackError("TemplateURL is not supported by cfnrun's local stacks: pass the template as TemplateBody (aws cloudformation --template-body file://…)")
    body = params.get("TemplateBody")
    if body is None and required and not params.get("UsePreviousTemplate"):
        raise StackError("Either Template URL or Template Body must be specified.")
    return body


class StackCalls:
    """``cfnrun.api.cloudformation.StackCalls``: each supported operation, by name."""

    def __init__(
        self,
        store: StackStore,
        describe_type: Callable[[str], Optional[Dict[str, Any]]],
        summarize: Callable[[str], Dict[str, Any]],
        configure_type: Callable[[str, Dict[str, Any]], str],
        drift: DriftChecks,
        hooks: HookGate,
    ) -> None:
        self.store = store
        self.hooks = hooks  # which hooks a change set's execution would run, and every hook's verdict
        self.drift = drift
        self.configure_type = configure_type  # a served type's configuration (SetTypeConfiguration) → its ConfigurationArn
        self.describe_type_of = describe_type  # a served type's DescribeType output, or None
        self.summarize = summarize  # a template body → ValidateTemplate's/GetTemplateSummary's Parameters, Description, …
        self._operations: Dict[str, Operation] = {
            "CreateStack": self.create_stack,
            "UpdateStack": self.update_stack,
            "DeleteStack": self.delete_stack,
            "DescribeStacks": self.describe_stacks,
            "ListStacks": self.list_stacks,
            "DescribeStackEvents": self.describe_stack_events,
            "DescribeStackResource": self.describe_stack_resource,
            "DescribeStackResources": self.describe_stack_resources,
            "ListStackResources": self.list_stack_resources,
            "GetTemplate": self.get_template,
            "GetTemplateSummary": self.get_template_summary,
            "ValidateTemplate": self.validate_template,
            "CreateChangeSet": self.create_change_set,
            "DescribeChangeSet": self.describe_change_set,
            "ExecuteChangeSet": self.execute_change_set,
            "DeleteChangeSet": self.delete_change_set,
            "ListChangeSets": self.list_change_sets,
            "ListExports": self.list_exports,
            "ListImports": self.list_imports,
            "DescribeType": self.describe_type,
            "CancelUpdateStack": self.cancel_update_stack,
            "ContinueUpdateRollback": self.continue_update_rollback,
            "SetTypeConfiguration": self.set_type_configuration,
            "DetectStackDrift": self.detect_stack_drift,
            "DescribeStackDriftDetectionStatus": self.describe_stack_drift_detection_status,
            "DescribeStackResourceDrifts": self.describe_stack_resource_drifts,
            "DetectStackResourceDrift": self.detect_stack_resource_drift,
            "DescribeChangeSetHooks": self.describe_change_set_hooks,
            "ListHookResults": self.list_hook_results,
            "GetHookResult": self.get_hook_result,
        }
        assert frozenset(self._operations) == STACK_OPERATIONS, "app/stacks/__init__.py names every operation answered"

    def operations(self) -> FrozenSet[str]:
        return STACK_OPERATIONS

    async def call(self, operation: str, params: Dict[str, Any]) -> Dict[str, Any]:
        return await self._operations[operation](params)

    # -- stacks ----------------------------------------------------------------------------

    async def create_stack(self, params: Dict[str, Any]) -> Dict[str, Any]:
        on_failure = params.get("OnFailure")
        disable_rollback = bool(params.get("DisableRollback")) or on_failure == "DO_NOTHING"
        stack = self.store.create_stack(
            params["StackName"],
            _template_body(params) or "",
            _given_parameters(params),
            _tags(params) or {},
            disable_rollback,
            params.get("ClientRequestToken"),
        )
        return {"StackId": stack.stack_id}

    async def update_stack(self, params: Dict[str, Any]) -> Dict[str, Any]:
        stack = self.store.update_stack(
            params["StackName"], _template_body(params), _given_parameters(params), _tags(params), params.get("ClientRequestToken")
        )
        return {"StackId": stack.stack_id}

    async def delete_stack(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.store.delete_stack(params["StackName"], tuple(params.get("RetainResources") or ()), params.get("ClientRequestToken"))
        return {}

    async def cancel_update_stack(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.store.cancel_update(params["StackName"])
        return {}

    async def continue_update_rollback(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.store.continue_update_rollback(params["StackName"], tuple(params.get("ResourcesToSkip") or ()))
        return {}

    async def describe_stacks(self, params: Dict[str, Any]) -> Dict[str, Any]:
        name = params.get("StackName")
        if name:
            stacks = [self.store.get(name)]
        else:
            stacks = [s for s in self.store.stacks.values() if s.status != "DELETE_COMPLETE"]
        page, token = _page(stacks, params)
        return _present({"Stacks": [self._stack(s) for s in page], "NextToken": token})

    def _stack(self, stack: Stack) -> Dict[str, Any]:
        return _present(
            {
                "StackId": stack.stack_id,
                "StackName": stack.name,
                "Description": stack.description,
                "Parameters": [{"ParameterKey": k, "ParameterValue": v} for k, v in stack.shown_parameters().items()],
                "CreationTime": _time(stack.created_at),
                "LastUpdatedTime": _time(stack.updated_at),
                "DeletionTime": _time(stack.deleted_at),
                "StackStatus": stack.status,
                "StackStatusReason": stack.reason,
                "DisableRollback": stack.disable_rollback,
                "Outputs": [
                    _present({"OutputKey": o.key, "OutputValue": stack.masked_data(str(o.value)), "Description": o.description, "ExportName": o.export_name})
                    for o in stack.outputs
                ],
                "Tags": [{"Key": k, "Value": v} for k, v in stack.tags.items()],
                "Capabilities": list(stack.capabilities),
                "EnableTerminationProtection": False,
                "DriftInformation": self._stack_drift(stack),
            }
        )

    def _stack_drift(self, stack: Stack) -> Dict[str, Any]:
        status, checked_at = self.drift.stack_information(stack)
        return _present({"StackDriftStatus": status, "LastCheckTimestamp": _time(checked_at)})

    def _resource_drift(self, stack: Stack, resource: StackResource) -> Dict[str, Any]:
        status, checked_at = self.drift.resource_information(stack, resource.logical_id)
        return _present({"StackResourceDriftStatus": status, "LastCheckTimestamp": _time(checked_at)})

    async def list_stacks(self, params: Dict[str, Any]) -> Dict[str, Any]:
        wanted = set(params.get("StackStatusFilter") or ())
        stacks = [s for s in self.store.stacks.values() if not wanted or s.status in wanted]
        page, token = _page(stacks, params)
        summaries = [
            _present(
                {
                    "StackId": s.stack_id,
                    "StackName": s.name,
                    "TemplateDescription": s.description,
                    "CreationTime": _time(s.created_at),
                    "LastUpdatedTime": _time(s.updated_at),
                    "DeletionTime": _time(s.deleted_at),
                    "StackStatus": s.status,
                    "StackStatusReason": s.reason,
                    "DriftInformation": self._stack_drift(s),
                }
            )
            for s in page
        ]
        return _present({"StackSummaries": summaries, "NextToken": token})

    async def describe_stack_events(self, params: Dict[str, Any]) -> Dict[str, Any]:
        stack = self.store.get(params["StackName"])
        page, token = _page(list(reversed(stack.events)), params)
        return _present({"StackEvents": [_event(e) for e in page], "NextToken": token})

    # -- resources -------------------------------------------------------------------------

    async def describe_stack_resource(self, params: Dict[str, Any]) -> Dict[str, Any]:
        stack = self.store.get(params["StackName"])
        resource = _resource(stack, params["LogicalResourceId"])
        detail = {**_resource_shape(stack, resource, "LastUpdatedTimestamp"), "DriftInformation": self._resource_drift(stack, resource),
                  "ModuleInfo": self._module_info(stack).get(resource.logical_id)}
        detail["Metadata"] = json.dumps(resource.metadata) if resource.metadata else None
        return {"StackResourceDetail": _present(detail)}

    async def describe_stack_resources(self, params: Dict[str, Any]) -> Dict[str, Any]:
        if params.get("StackName"):
            stack = self.store.get(params["StackName"])
        elif params.get("PhysicalResourceId"):
            physical = params["PhysicalResourceId"]
            found = [s for s in self.store.stacks.values() if any(r.physical_id == physical for r in s.resources.values())]
            if not found:
                raise StackError(f"Stack for {physical} does not exist")
            stack = found[-1]
        else:
            raise StackError("Either StackName or PhysicalResourceId must be specified.")
        resources = [r for r in stack.resources.values() if params.get("LogicalResourceId") in (None, r.logical_id)]
        modules = self._module_info(stack)
        shapes = [{**_resource_shape(stack, r, "Timestamp"), "DriftInformation": self._resource_drift(stack, r),
                   "ModuleInfo": modules.get(r.logical_id)} for r in resources]
        return {"StackResources": [_present(shape) for shape in shapes]}

    def _module_info(self, stack: Stack) -> Dict[str, Dict[str, str]]:
        """The ModuleInfo of the stack's resources that modules made, by logical id (its current template's)."""
        blueprint = self.store.engine.blueprints.get(stack.stack_id)
        return blueprint.template.module_info if blueprint is not None else {}

    async def list_stack_resources(self, params: Dict[str, Any]) -> Dict[str, Any]:
        stack = self.store.get(params["StackName"])
        page, token = _page(list(stack.resources.values()), params)
        summaries = [
            _present(
                {
                    "LogicalResourceId": r.logical_id,
                    "PhysicalResourceId": r.physical_id,
                    "ResourceType": r.type_name,
                    "LastUpdatedTimestamp": _time(r.updated_at),
                    "ResourceStatus": r.status,
                    "ResourceStatusReason": r.reason,
                    "DriftInformation": self._resource_drift(stack, r),
                }
            )
            for r in page
        ]
        return _present({"StackResourceSummaries": summaries, "NextToken": token})

    # -- drift -----------------------------------------------------------------------------

    async def detect_stack_drift(self, params: Dict[str, Any]) -> Dict[str, Any]:
        detection = self.drift.detect_stack(params["StackName"], tuple(params.get("LogicalResourceIds") or ()))
        return {"StackDriftDetectionId": detection.detection_id}

    async def describe_stack_drift_detection_status(self, params: Dict[str, Any]) -> Dict[str, Any]:
        detection: DriftDetection = self.drift.detection(params["StackDriftDetectionId"])
        return _present(
            {
                "StackId": detection.stack_id,
                "StackDriftDetectionId": detection.detection_id,
                "StackDriftStatus": detection.stack_status,
                "DetectionStatus": detection.status,
                "DetectionStatusReason": detection.reason,
                "DriftedStackResourceCount": detection.drifted_count,
                "Timestamp": _time(detection.started_at),
            }
        )

    async def describe_stack_resource_drifts(self, params: Dict[str, Any]) -> Dict[str, Any]:
        wanted = set(params.get("StackResourceDriftStatusFilters") or ())
        drifts = [d for d in self.drift.resource_drifts(params["StackName"]) if not wanted or d.status in wanted]
        page, token = _page(drifts, params, int(params.get("MaxResults") or PAGE_SIZE))
        return _present({"StackResourceDrifts": [_resource_drift_shape(d) for d in page], "NextToken": token})

    async def detect_stack_resource_drift(self, params: Dict[str, Any]) -> Dict[str, Any]:
        drift = await self.drift.detect_resource(params["StackName"], params["LogicalResourceId"])
        return {"StackResourceDrift": _resource_drift_shape(drift)}

    # -- templates -------------------------------------------------------------------------

    async def get_template(self, params: Dict[str, Any]) -> Dict[str, Any]:
        blueprint: Optional[Blueprint]
        if params.get("ChangeSetName"):
            change_set = self.store.change_set(params["ChangeSetName"], params.get("StackName"))
            body, blueprint = change_set.blueprint.template_body, change_set.blueprint
        else:
            stack = self.store.get(params["StackName"])
            body, blueprint = stack.template_body, self.store.engine.blueprints.get(stack.stack_id)
        if params.get("TemplateStage") == "Processed" and blueprint is not None:
            body = processed_body(body, blueprint.template.document)
        return {"TemplateBody": body, "StagesAvailable": ["Original", "Processed"]}

    async def get_template_summary(self, params: Dict[str, Any]) -> Dict[str, Any]:
        if params.get("StackName"):
            body = self.store.get(params["StackName"]).template_body
        else:
            body = _template_body(params) or ""
        return self.summarize(body)

    async def validate_template(self, params: Dict[str, Any]) -> Dict[str, Any]:
        summary = self.summarize(_template_body(params) or "")
        keep = ("Parameters", "Description", "Capabilities", "CapabilitiesReason", "DeclaredTransforms")
        parameters = [
            _present({k: p.get(k) for k in ("ParameterKey", "DefaultValue", "NoEcho", "Description")}) for p in summary.get("Parameters", [])
        ]
        return _present({**{k: summary.get(k) for k in keep}, "Parameters": parameters})

    # -- change sets -----------------------------------------------------------------------

    async def create_change_set(self, params: Dict[str, Any]) -> Dict[str, Any]:
        change_set = self.store.create_change_set(
            params["StackName"],
            params["ChangeSetName"],
            params.get("ChangeSetType") or "UPDATE",
            _template_body(params, required=params.get("ChangeSetType") == "CREATE"),
            _given_parameters(params),
            _tags(params),
            params.get("Description"),
        )
        return {"Id": change_set.change_set_id, "StackId": change_set.stack_id}

    async def describe_change_set(self, params: Dict[str, Any]) -> Dict[str, Any]:
        change_set = self.store.change_set(params["ChangeSetName"], params.get("StackName"))
        stack = self.store.stacks[change_set.stack_id]
        shown = shown_parameters(change_set.parameters, change_set.blueprint.no_echo)
        return _present(
            {
                "ChangeSetName": change_set.name,
                "ChangeSetId": change_set.change_set_id,
                "StackId": stack.stack_id,
                "StackName": stack.name,
                "Description": change_set.description,
                "Parameters": [{"ParameterKey": k, "ParameterValue": v} for k, v in shown.items()],
                "CreationTime": _time(change_set.created_at),
                "ExecutionStatus": change_set.execution_status,
                "Status": change_set.status,
                "StatusReason": change_set.status_reason,
                "Changes": [{"Type": "Resource", "ResourceChange": _change(c)} for c in change_set.changes],
                "Tags": [{"Key": k, "Value": v} for k, v in change_set.tags.items()],
            }
        )

    async def execute_change_set(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.store.execute_change_set(params["ChangeSetName"], params.get("StackName"), params.get("ClientRequestToken"))
        return {}

    async def delete_change_set(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.store.delete_change_set(params["ChangeSetName"], params.get("StackName"))
        return {}

    # -- hooks -----------------------------------------------------------------------------

    async def describe_change_set_hooks(self, params: Dict[str, Any]) -> Dict[str, Any]:
        """The RESOURCE hooks the change set's execution would run, one entry per hook and changed resource."""
        change_set = self.store.change_set(params["ChangeSetName"], params.get("StackName"))
        stack = self.store.stacks[change_set.stack_id]
        wanted = params.get("LogicalResourceId")
        planned = []
        for change in change_set.changes:
            if wanted is not None and change.logical_id != wanted:
                continue
            action = CHANGE_ACTIONS[change.action]
            for hook in self.hooks.applicable("RESOURCE", action, change.resource_type, stack.name):
                details = {"LogicalResourceId": change.logical_id, "ResourceType": change.resource_type, "ResourceAction": change.action}
                planned.append(
                    {
                        "InvocationPoint": "PRE_PROVISION",
                        "FailureMode": hook.configuration.failure_mode,
                        "TypeName": hook.hook_type,
                        "TypeVersionId": HOOK_TYPE_VERSION,
                        "TargetDetails": {"TargetType": "RESOURCE", "ResourceTargetDetails": details},
                    }
                )
        page, token = _page(planned, params)
        status = "UNAVAILABLE" if change_set.status == "FAILED" else "PLANNED"
        shape = {"ChangeSetId": change_set.change_set_id, "ChangeSetName": change_set.name, "Hooks": page, "Status": status}
        return _present({**shape, "NextToken": token, "StackId": stack.stack_id, "StackName": stack.name})


    async def list_hook_results(self, params: Dict[str, Any]) -> Dict[str, Any]:
        found = self.hooks.results.matching(params)
        page, token = _page(found, params)
        filtered = params.get("TargetId") is not None
        results = [_hook_result_summary(r, filtered) for r in page]
        return _present({"TargetType": params.get("TargetType"), "TargetId": params.get("TargetId"), "HookResults": results, "NextToken": token})

    async def get_hook_result(self, params: Dict[str, Any]) -> Dict[str, Any]:
        result = self.hooks.results.get(params["HookResultId"])
        target = {"TargetType": result.target.operation, "TargetTypeName": result.target.type_name, "TargetId": result.target_id, "Action": result.target.action}
        annotations = [_annotation(a) for a in result.annotations]
        return _present(
            {**_hook_result(result), "TypeArn": result.type_arn, "InvokedAt": _time(result.invoked_at), "Target": target, "Annotations": annotations or None}
        )

    async def list_change_sets(self, params: Dict[str, Any]) -> Dict[str, Any]:
        stack = self.store.get(params["StackName"])
        return {"Summaries": [_change_set_summary(stack, c) for c in self.store.change_sets_of(params["StackName"])]}

    # -- exports and types -----------------------------------------------------------------

    async def list_exports(self, params: Dict[str, Any]) -> Dict[str, Any]:
        exports = self.store.engine.exports.all()
        page, token = _page(exports, params)
        return _present({"Exports": [{"ExportingStackId": e.stack_id, "Name": e.name, "Value": e.value} for e in page], "NextToken": token})

    async def list_imports(self, params: Dict[str, Any]) -> Dict[str, Any]:
        name = params["ExportName"]
        importers = self.store.engine.exports.importers(name)
        if not importers:
            raise StackError(f"Export '{name}' is not imported by any stack.")
        return {"Imports": importers}

    async def set_type_configuration(self, params: Dict[str, Any]) -> Dict[str, Any]:
        type_name = _type_name(params)
        try:
            configuration = json.loads(params["Configuration"])
        except ValueError as error:
            raise StackError(f"Configuration is not valid JSON: {error}") from None
        if not isinstance(configuration, dict):
            raise StackError("Configuration must be a JSON object")
        return {"ConfigurationArn": self.configure_type(type_name, configuration)}

    async def describe_type(self, params: Dict[str, Any]) -> Dict[str, Any]:
        type_name = _type_name(params)
        described = self.describe_type_of(type_name)
        if described is None:
            raise StackError(f"The type '{type_name}' cannot be found.", "TypeNotFoundException", 404)
        return described


def _type_name(params: Dict[str, Any]) -> str:
    """The TypeName, or the one a TypeArn (…:type/resource/Org-Service-Type) names."""
    if params.get("TypeName"):
        return str(params["TypeName"])
    arn = str(params.get("TypeArn") or "")
    if "/" not in arn:
        raise StackError("TypeName or TypeArn must be specified.")
    return arn.rsplit("/", 1)[-1].replace("-", "::")


def _event(event: StackEvent) -> Dict[str, Any]:
    return _present(
        {
            "StackId": event.stack_id,
            "EventId": event.event_id,
            "StackName": event.stack_name,
            "LogicalResourceId": event.logical_id,
            "PhysicalResourceId": event.physical_id,
            "ResourceType": event.resource_type,
            "Timestamp": _time(event.timestamp),
            "ResourceStatus": event.status,
            "ResourceStatusReason": event.reason,
            "ResourceProperties": event.properties,
            "ClientRequestToken": event.client_request_token,
            "HookType": event.hook_type,
            "HookStatus": event.hook_status,
            "HookStatusReason": event.hook_status_reason,
            "HookInvocationPoint": event.hook_invocation_point,
            "HookFailureMode": event.hook_failure_mode,
        }
    )


def _resource(stack: Stack, logical_id: str) -> StackResource:
    resource = stack.resources.get(logical_id)
    if resource is None:
        raise StackError(f"Resource {logical_id} does not exist for stack {stack.name}")
    return resource


def _resource_shape(stack: Stack, resource: StackResource, time_key: str) -> Dict[str, Any]:
    return {
        "StackName": stack.name,
        "StackId": stack.stack_id,
        "LogicalResourceId": resource.logical_id,
        "PhysicalResourceId": resource.physical_id,
        "ResourceType": resource.type_name,
        time_key: _time(resource.updated_at),
        "ResourceStatus": resource.status,
        "ResourceStatusReason": resource.reason,
    }


def _resource_drift_shape(drift: ResourceDrift) -> Dict[str, Any]:
    return _present(
        {
            "StackId": drift.stack_id,
            "LogicalResourceId": drift.logical_id,
            "PhysicalResourceId": drift.physical_id,
            "ResourceType": drift.resource_type,
            "ExpectedProperties": drift.expected_properties,
            "ActualProperties": drift.actual_properties,
            "PropertyDifferences": [_property_difference(d) for d in drift.differences] if drift.differences else None,
            "StackResourceDriftStatus": drift.status,
            "Timestamp": _time(drift.timestamp),
            "DriftStatusReason": drift.reason,
        }
    )


def _property_difference(difference: PropertyDifference) -> Dict[str, Any]:
    return {
        "PropertyPath": difference.path,
        "ExpectedValue": difference.expected,
        "ActualValue": difference.actual,
        "DifferenceType": difference.kind,
    }


def _change(change: ResourceChange) -> Dict[str, Any]:
    return _present(
        {
            "Action": change.action,
            "LogicalResourceId": change.logical_id,
            "PhysicalResourceId": change.physical_id,
            "ResourceType": change.resource_type,
            "Replacement": change.replacement,
            "Scope": list(change.scope),
            "Details": [
                {
                    "Target": {"Attribute": "Properties", "Name": d.name, "RequiresRecreation": d.requires_recreation},
                    "Evaluation": d.evaluation,
                    "ChangeSource": d.change_source,
                }
                for d in change.details
            ],
        }
    )


def _change_set_summary(stack: Stack, change_set: ChangeSet) -> Dict[str, Any]:
    return _present(
        {
            "StackId": stack.stack_id,
            "StackName": stack.name,
            "ChangeSetId": change_set.change_set_id,
            "ChangeSetName": change_set.name,
            "ExecutionStatus": change_set.execution_status,
            "Status": change_set.status,
            "StatusReason": change_set.status_reason,
            "CreationTime": _time(change_set.created_at),
            "Description": change_set.description,
        }
    )


def _hook_result(result: HookResult) -> Dict[str, Any]:
    return {
        "HookResultId": result.result_id,
        "InvocationPoint": "PRE_PROVISION",
        "FailureMode": result.failure_mode,
        "TypeName": result.hook_type,
        "TypeVersionId": HOOK_TYPE_VERSION,
        "Status": result.status,
        "HookStatusReason": result.reason,
    }


def _hook_result_summary(result: HookResult, filtered: bool) -> Dict[str, Any]:
    shape = {**_hook_result(result), "TargetType": result.target.operation, "TargetId": result.target_id, "TypeArn": result.type_arn}
    if not filtered:  # as the service: when the call named no target
        shape.update({"InvokedAt": _time(result.invoked_at), "HookExecutionTarget": result.execution_target})
    return _present(shape)


def _annotation(annotation: Dict[str, Any]) -> Dict[str, Any]:
    """A hook's annotation (the support library's camelCase) as GetHookResult's Annotation."""
    return _present({key[0].upper() + key[1:]: annotation.get(key) for key in ANNOTATION_KEYS})

