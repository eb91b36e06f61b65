"""Wire formats exchanged with a hook (``cfn init --artifact-type HOOK``), in one place.

Names follow ``cloudformation_cli_python_lib`` (``HookInvocationRequest``, ``HookTestEvent``,
``HookProgressEvent``) and cloudformation-cli's ``HookClient.make_request``.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from pydantic import ConfigDict, ValidationError

from cfnrun.model.protocol import (
    Credentials,
    InvalidProgressEvent,
    OperationStatus,
    ProgressEvent,
    WireModel,
    parse_progress_event,
)

# The support library's HandlerErrorCode values a hook may answer with, beyond a resource's.
HOOK_ONLY_ERROR_CODES = ("NonCompliant", "UnsupportedTarget", "Unknown", "HandlerInternalFailure")
TARGET_TYPES = ("RESOURCE", "STACK", "CHANGE_SET")
HOOK_TYPE_VERSION = "00000001"  # the version a hook runs as locally: the first registered one, as the service numbers them

# hookStatus → the operation status the replay loop understands
HOOK_STATUSES = {
    "PENDING": OperationStatus.IN_PROGRESS,
    "IN_PROGRESS": OperationStatus.IN_PROGRESS,
    "SUCCESS": OperationStatus.SUCCESS,
    "CHANGE_SET_SUCCESS_SKIP_STACK_HOOK": OperationStatus.SUCCESS,
    "FAILED": OperationStatus.FAILED,
}


class HookTargetModel(WireModel):
    model_config = ConfigDict(extra="allow")

    resourceProperties: Optional[Dict[str, Any]] = None
    previousResourceProperties: Optional[Dict[str, Any]] = None


class StackLevelTarget(WireModel):
    """A STACK or CHANGE_SET target: the service puts its document (``model``) behind a presigned URL (``payload``)."""

    targetType: str  # STACK or CHANGE_SET
    model: Dict[str, Any]  # template and previousTemplate, or template and changedResources
    payload: Optional[str] = None  # the URL the support library downloads ``model`` from


class HookRequestData(WireModel):
    targetName: str
    targetType: str = "RESOURCE"
    targetLogicalId: str
    targetModel: Optional[HookTargetModel] = None  # a resource's; a stack-level target's document is behind ``payload``
    payload: Optional[str] = None
    callerCredentials: Optional[str] = None  # a JSON string, as the service sends it
    providerCredentials: Optional[str] = None
    providerLogGroupName: Optional[str] = None


class HookRequestContext(WireModel):
    invocation: int = 1
    callbackContext: Optional[Dict[str, Any]] = None


class HookInvocationRequest(WireModel):
    """What CloudFormation sends a hook's production entrypoint (TypeFunction)."""

    clientRequestToken: str
    awsAccountId: str
    stackId: str
    changeSetId: Optional[str] = None
    hookTypeName: str
    hookTypeVersion: str = HOOK_TYPE_VERSION
    actionInvocationPoint: str
    hookModel: Optional[Dict[str, Any]] = None
    requestContext: HookRequestContext
    requestData: HookRequestData

    def wire(self) -> Dict[str, Any]:
        return self.model_dump(exclude_none=True, mode="json")


class HookTestEvent(WireModel):
    """The event a hook's test entrypoint (TestEntrypoint) takes."""

    credentials: Dict[str, str]
    actionInvocationPoint: str
    request: Dict[str, Any]  # clientRequestToken and hookContext
    callbackContext: Optional[Dict[str, Any]] = None
    typeConfiguration: Optional[Dict[str, Any]] = None
    region: Optional[str] = None

    def wire(self) -> Dict[str, Any]:
        return self.model_dump(exclude_none=True, mode="json")


def credentials_string(credentials: Optional[Credentials]) -> Optional[str]:
    return json.dumps(credentials.model_dump()) if credentials is not None else None


def parse_hook_progress_event(payload: Any, status_key: str = "hookStatus") -> ProgressEvent:
    """A hook's answer read as the ProgressEvent the replay loop follows.

    TypeFunction answers a HookProgressEvent (``hookStatus``); the support library's test
    entrypoint answers the handler's own ProgressEvent (``status``), hence ``status_key``.
    ``annotations``, ``result`` and ``hookStatus`` stay on the event as extra fields.
    """
    if not isinstance(payload, dict):
        return parse_progress_event(payload)  # explains what a non-object is
    other = "status" if status_key == "hookStatus" else "hookStatus"
    if status_key not in payload:
        if other in payload and status_key == "hookStatus":
            raise InvalidProgressEvent(
                "a hook answers with a HookProgressEvent ('hookStatus'), not a resource ProgressEvent ('status'): "
                "build the handler with Hook(...) from cloudformation_cli_python_lib, not Resource(...)"
            )
        raise InvalidProgressEvent(f"the response has no '{status_key}' (keys: {', '.join(payload) or 'none'})")
    status = HOOK_STATUSES.get(str(payload[status_key]))
    if status is None:
        raise InvalidProgressEvent(f"{status_key} {payload[status_key]!r} is not one of {', '.join(HOOK_STATUSES)}")
    try:
        return ProgressEvent.model_validate({**payload, "status": status.value})
    except ValidationError as error:
        raise InvalidProgressEvent(str(error)) from None


def hook_annotations(event: ProgressEvent) -> List[Dict[str, Any]]:
    """The annotations of a hook's answer (recent support libraries), if any."""
    value = (event.model_extra or {}).get("annotations")
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def describe_annotation(annotation: Dict[str, Any]) -> str:
    """``BucketEncryption FAILED HIGH: SSEAlgorithm none … → fix: …`` for one annotation."""
    head = " ".join(str(annotation[key]) for key in ("annotationName", "status", "severityLevel") if annotation.get(key))
    text = f"{head}: {annotation['statusMessage']}" if annotation.get("statusMessage") else head
    if annotation.get("remediationMessage"):
        text += f" → fix: {annotation['remediationMessage']}"
    if annotation.get("remediationLink"):
        text += f" ({annotation['remediationLink']})"
    return text
