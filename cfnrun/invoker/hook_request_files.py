"""A hook's request files: what ``cfn invoke hook`` takes, and HookTestEvents for the test entrypoint.

Both become the same OperationInput a resource request file does: the target's properties
as ``desired``/``previous``, the target type as ``target_name``.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from cfnrun.invoker.request_files import (
    OperationInput,
    object_field,
    sam_credentials,
    unknown_keys,
    read_request_document,
)
from cfnrun.model.errors import CfnrunError
from cfnrun.model.protocol import HOOK_POINTS, Action

CFN_INVOKE_HOOK = "cfn-invoke-hook"
HOOK_TEST_EVENT = "hook-test-event"
CFN_INVOKE_HOOK_KEYS = ("targetName", "targetModel")
HOOK_TEST_EVENT_KEYS = ("credentials", "actionInvocationPoint", "request", "callbackContext", "typeConfiguration", "region")
TARGET_MODEL_KEYS = ("resourceProperties", "previousResourceProperties")


def _target(name: Any, model: Any, where: str, source: str) -> Dict[str, Any]:
    if not isinstance(name, str) or not name:
        raise CfnrunError(f"{source}: '{where}targetName' must name the target type, e.g. \"AWS::S3::Bucket\"")
    target_model = object_field(model, f"{where}targetModel", source) or {}
    return target_model


def _from_target_model(target_model: Dict[str, Any], where: str, source: str) -> OperationInput:
    return OperationInput(
        desired=object_field(target_model.get("resourceProperties"), f"{where}targetModel.resourceProperties", source) or {},
        previous=object_field(target_model.get("previousResourceProperties"), f"{where}targetModel.previousResourceProperties", source),
        warnings=unknown_keys(target_model, TARGET_MODEL_KEYS, f"{source}: {where}targetModel"),
    )


def parse_hook_request(document: Any, source: str) -> OperationInput:
    if not isinstance(document, dict):
        raise CfnrunError(f"{source}: expected a JSON object, got {type(document).__name__}")
    if "targetName" in document or "targetModel" in document:
        target_model = _target(document.get("targetName"), document.get("targetModel"), "", source)
        operation = _from_target_model(target_model, "", source)
        operation.target_name = document["targetName"]
        operation.format = CFN_INVOKE_HOOK
        operation.warnings += unknown_keys(document, CFN_INVOKE_HOOK_KEYS, source)
        return operation
    if isinstance(document.get("request"), dict):
        request = document["request"]
        context = object_field(request.get("hookContext"), "request.hookContext", source) or {}
        target_model = _target(context.get("targetName"), context.get("targetModel"), "request.hookContext.", source)
        operation = _from_target_model(target_model, "request.hookContext.", source)
        point = document.get("actionInvocationPoint")
        if point is not None and point not in [p.value for p in HOOK_POINTS]:
            raise CfnrunError(
                f"{source}: actionInvocationPoint '{point}' is not one of {', '.join(p.value for p in HOOK_POINTS)}"
            )
        operation.target_name = context["targetName"]
        operation.logical_resource_id = context.get("targetLogicalId")
        operation.client_request_token = request.get("clientRequestToken")
        operation.callback_context = object_field(document.get("callbackContext"), "callbackContext", source)
        operation.type_configuration = object_field(document.get("typeConfiguration"), "typeConfiguration", source)
        operation.credentials = sam_credentials(document.get("credentials"))
        operation.region = document.get("region")
        operation.action = Action(point) if point else None
        operation.format = HOOK_TEST_EVENT
        operation.warnings += unknown_keys(document, HOOK_TEST_EVENT_KEYS, source)
        return operation
    raise CfnrunError(
        f"{source}: not a hook request file cfnrun knows. Expected what 'cfn invoke hook' takes "
        '({"targetName": "AWS::S3::Bucket", "targetModel": {"resourceProperties": {...}}}) or a HookTestEvent '
        '({"actionInvocationPoint": "CREATE_PRE_PROVISION", "request": {"hookContext": {"targetName": ..., "targetModel": {...}}}})'
    )


def load_hook_request_file(path: str) -> OperationInput:
    """Read a hook request file ('-' for standard input)."""
    source, document = read_request_document(path)
    return parse_hook_request(document, source)


def hook_input(path: Optional[str]) -> OperationInput:
    if path is None:
        raise CfnrunError("a hook needs a request file naming its target: {\"targetName\": \"AWS::S3::Bucket\", \"targetModel\": {...}}")
    return load_hook_request_file(path)
