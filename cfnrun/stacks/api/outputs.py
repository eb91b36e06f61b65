"""Writing the CloudFormation API's output shapes: events, resources, drifts, change-set summaries, hook results."""
from __future__ import annotations

import datetime
from typing import Any, Dict, List, Optional

from cfnrun.events.stack import StackEvent
from cfnrun.model.hook_protocol import HOOK_TYPE_VERSION
from cfnrun.stacks.drift import PropertyDifference, ResourceDrift
from cfnrun.stacks.hook_results import HookResult
from cfnrun.stacks.operation_events import OperationEvent
from cfnrun.stacks.records import Stack, StackResource
from cfnrun.stacks.change_sets import ChangeSet

ANNOTATION_KEYS = ("annotationName", "status", "statusMessage", "remediationMessage", "remediationLink", "severityLevel")


def timestamp(seconds: Optional[float]) -> Optional[datetime.datetime]:
    return datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc) if seconds is not None else None


def present(shape: Dict[str, Any]) -> Dict[str, Any]:
    """Members with a value: botocore omits the rest."""
    return {key: value for key, value in shape.items() if value is not None}


def event_shape(event: StackEvent) -> Dict[str, Any]:
    return present(
        {
            "StackId": event.stack_id,
            "EventId": event.event_id,
            "StackName": event.stack_name,
            "LogicalResourceId": event.logical_id,
            "PhysicalResourceId": event.physical_id,
            "ResourceType": event.resource_type,
            "Timestamp": timestamp(event.timestamp),
            "ResourceStatus": event.status,
            "ResourceStatusReason": event.reason,
            "ResourceProperties": event.properties,
            "ClientRequestToken": event.client_request_token,
            "HookType": event.hook_type,
            "HookStatus": event.hook_status,
            "HookStatusReason": event.hook_status_reason,
            "HookInvocationPoint": event.hook_invocation_point,
            "HookFailureMode": event.hook_failure_mode,
            "HookInvocationId": event.hook_invocation_id,
            "OperationId": event.operation_id,
            "DetailedStatus": event.detailed_status,
        }
    )


def operation_event_shape(event: OperationEvent) -> Dict[str, Any]:
    """One of DescribeEvents' OperationEvents: a stack event, or a validation failure, with its operation."""
    shape: Dict[str, Any] = {"OperationType": event.operation_type, "OperationStatus": event.operation_status, "EventType": event.event_type}
    if event.stack_event is not None:
        stack_event = event_shape(event.stack_event)
        shape.update({k: v for k, v in stack_event.items() if k not in ("StackName", "HookInvocationId")})  # OperationEvent has neither
        return present(shape)
    validation = event.validation
    assert validation is not None
    failure = validation.failure
    shape.update(
        {
            "EventId": validation.event_id,
            "StackId": validation.stack_id,
            "OperationId": validation.operation_id,
            "LogicalResourceId": failure.logical_id,
            "ResourceType": failure.resource_type,
            "Timestamp": timestamp(validation.timestamp),
            "ValidationFailureMode": failure.failure_mode,
            "ValidationName": failure.name,
            "ValidationStatus": "FAILED",
            "ValidationStatusReason": failure.reason,
            "ValidationPath": failure.path,
        }
    )
    return present(shape)


def last_operations(stack: Stack) -> List[Dict[str, str]]:
    """The stack's operations, the most recent first (how many the service lists is not documented: all are)."""
    return [{"OperationType": kind, "OperationId": operation} for kind, operation in reversed(stack.operations)]


def resource_shape(stack: Stack, resource: StackResource, time_key: str) -> Dict[str, Any]:
    return {
        "StackName": stack.name,
        "StackId": stack.stack_id,
        "LogicalResourceId": resource.logical_id,
        "PhysicalResourceId": resource.physical_id,
        "ResourceType": resource.type_name,
        time_key: timestamp(resource.updated_at),
        "ResourceStatus": resource.status,
        "ResourceStatusReason": resource.reason,
    }


def resource_drift_shape(drift: ResourceDrift) -> Dict[str, Any]:
    return present(
        {
            "StackId": drift.stack_id,
            "LogicalResourceId": drift.logical_id,
            "PhysicalResourceId": drift.physical_id,
            "ResourceType": drift.resource_type,
            "ExpectedProperties": drift.expected_properties,
            "ActualProperties": drift.actual_properties,
            "PropertyDifferences": [property_difference_shape(d) for d in drift.differences] if drift.differences else None,
            "StackResourceDriftStatus": drift.status,
            "Timestamp": timestamp(drift.timestamp),
            "DriftStatusReason": drift.reason,
        }
    )


def property_difference_shape(difference: PropertyDifference) -> Dict[str, Any]:
    return {
        "PropertyPath": difference.path,
        "ExpectedValue": difference.expected,
        "ActualValue": difference.actual,
        "DifferenceType": difference.kind,
    }


def change_set_summary(stack: Stack, change_set: ChangeSet) -> Dict[str, Any]:
    return present(
        {
            "StackId": stack.stack_id,
            "StackName": stack.name,
            "ChangeSetId": change_set.change_set_id,
            "ChangeSetName": change_set.name,
            "ExecutionStatus": change_set.execution_status,
            "Status": change_set.status,
            "StatusReason": change_set.status_reason,
            "CreationTime": timestamp(change_set.created_at),
            "Description": change_set.description,
            "IncludeNestedStacks": change_set.include_nested_stacks,
            "ParentChangeSetId": change_set.parent_change_set_id,
            "RootChangeSetId": change_set.root_change_set_id,
            "ImportExistingResources": change_set.import_existing_resources or None,
        }
    )


def hook_result_shape(result: HookResult) -> Dict[str, Any]:
    return {
        "HookResultId": result.result_id,
        "InvocationPoint": "PRE_PROVISION",
        "FailureMode": result.failure_mode,
        "TypeName": result.hook_type,
        "TypeVersionId": HOOK_TYPE_VERSION,
        "Status": result.status,
        "HookStatusReason": result.reason,
    }


def hook_result_summary(result: HookResult, filtered: bool) -> Dict[str, Any]:
    shape = {**hook_result_shape(result), "TargetType": result.target.operation, "TargetId": result.target_id, "TypeArn": result.type_arn}
    if not filtered:  # as the service: when the call named no target
        shape.update({"InvokedAt": timestamp(result.invoked_at), "HookExecutionTarget": result.execution_target})
    return present(shape)


def annotation_shape(annotation: Dict[str, Any]) -> Dict[str, Any]:
    """A hook's annotation (the support library's camelCase) as GetHookResult's Annotation."""
    return present({key[0].upper() + key[1:]: annotation.get(key) for key in ANNOTATION_KEYS})
