"""A guard hook: every S3 bucket must encrypt with the configured SSE algorithm.

preCreate looks twice (one IN_PROGRESS round, as a hook waiting on a lookup would),
preUpdate also refuses a change of algorithm, preDelete refuses buckets tagged
``cfnrun:protected = true``. Any other target type is answered UnsupportedTarget.
"""
import logging
from typing import Any, MutableMapping, Optional

from cloudformation_cli_python_lib import (
    BaseHookHandlerRequest,
    HandlerErrorCode,
    Hook,
    HookInvocationPoint,
    OperationStatus,
    ProgressEvent,
    SessionProxy,
)
from cloudformation_cli_python_lib.interface import HookAnnotation, HookAnnotationSeverityLevel, HookAnnotationStatus

from .models import HookHandlerRequest, TypeConfigurationModel

LOG = logging.getLogger(__name__)
TYPE_NAME = "Cfnrun::Sample::BucketGuard"
DEFAULT_ALGORITHM = "AES256"
TARGET = "AWS::S3::Bucket"
PROTECTED_TAG = "cfnrun:protected"

hook = Hook(TYPE_NAME, TypeConfigurationModel)
test_entrypoint = hook.test_entrypoint


def _algorithm(properties: Optional[MutableMapping[str, Any]]) -> Optional[str]:
    """The SSEAlgorithm of a bucket's first encryption rule, if any."""
    rules = ((properties or {}).get("BucketEncryption") or {}).get("ServerSideEncryptionConfiguration") or []
    for rule in rules:
        default = (rule or {}).get("ServerSideEncryptionByDefault") or {}
        if default.get("SSEAlgorithm"):
            return str(default["SSEAlgorithm"])
    return None


def _required(type_configuration: Optional[TypeConfigurationModel]) -> str:
    if type_configuration and type_configuration.EncryptionAlgorithm:
        return type_configuration.EncryptionAlgorithm
    return DEFAULT_ALGORITHM


def _unsupported(target_name: Optional[str]) -> Optional[ProgressEvent]:
    if target_name == TARGET:
        return None
    return ProgressEvent.failed(HandlerErrorCode.UnsupportedTarget, f"this hook guards {TARGET}, not {target_name}")


def _verdict(name: str, properties: Optional[MutableMapping[str, Any]], required: str) -> ProgressEvent:
    found = _algorithm(properties)
    compliant = found == required
    annotation = HookAnnotation(
        annotationName="BucketEncryption",
        status=HookAnnotationStatus.PASSED if compliant else HookAnnotationStatus.FAILED,
        statusMessage=f"SSEAlgorithm {found or 'none'}, required {required}",
        remediationMessage=None if compliant else f"set BucketEncryption to SSEAlgorithm {required}",
        severityLevel=None if compliant else HookAnnotationSeverityLevel.HIGH,
    )
    if compliant:
        LOG.info("%s encrypts with %s", name, found)
        progress = ProgressEvent(status=OperationStatus.SUCCESS, message=f"{name} encrypts with {found}")
    else:
        LOG.info("%s is non-compliant: SSEAlgorithm %s, expected %s", name, found, required)
        progress = ProgressEvent.failed(
            HandlerErrorCode.NonCompliant, f"{name} must use server-side encryption {required} (found {found or 'none'})"
        )
    progress.annotations = [annotation]
    return progress


@hook.handler(HookInvocationPoint.CREATE_PRE_PROVISION)
def pre_create_handler(
    session: Optional[SessionProxy],
    request: HookHandlerRequest,
    callback_context: MutableMapping[str, Any],
    type_configuration: TypeConfigurationModel,
) -> ProgressEvent:
    context = request.hookContext
    unsupported = _unsupported(context.targetName)
    if unsupported:
        return unsupported
    if not callback_context.get("looked"):
        LOG.info("looking at %s %s", context.targetName, context.targetLogicalId)
        return ProgressEvent(
            status=OperationStatus.IN_PROGRESS,
            message="checking the bucket's encryption",
            callbackContext={"looked": True},
            callbackDelaySeconds=1,
        )
    return _verdict(str(context.targetLogicalId), (context.targetModel or {}).get("resourceProperties"), _required(type_configuration))


@hook.handler(HookInvocationPoint.UPDATE_PRE_PROVISION)
def pre_update_handler(
    session: Optional[SessionProxy],
    request: BaseHookHandlerRequest,
    callback_context: MutableMapping[str, Any],
    type_configuration: TypeConfigurationModel,
) -> ProgressEvent:
    context = request.hookContext
    unsupported = _unsupported(context.targetName)
    if unsupported:
        return unsupported
    model = context.targetModel or {}
    before, after = _algorithm(model.get("previousResourceProperties")), _algorithm(model.get("resourceProperties"))
    if before and after != before:
        return ProgressEvent.failed(
            HandlerErrorCode.NonCompliant, f"the encryption of {context.targetLogicalId} cannot change ({before} → {after or 'none'})"
        )
    return _verdict(str(context.targetLogicalId), model.get("resourceProperties"), _required(type_configuration))


@hook.handler(HookInvocationPoint.DELETE_PRE_PROVISION)
def pre_delete_handler(
    session: Optional[SessionProxy],
    request: BaseHookHandlerRequest,
    callback_context: MutableMapping[str, Any],
    type_configuration: TypeConfigurationModel,
) -> ProgressEvent:
    context = request.hookContext
    unsupported = _unsupported(context.targetName)
    if unsupported:
        return unsupported
    tags = ((context.targetModel or {}).get("resourceProperties") or {}).get("Tags") or []
    if any(tag.get("Key") == PROTECTED_TAG and str(tag.get("Value")).lower() == "true" for tag in tags):
        return ProgressEvent.failed(
            HandlerErrorCode.NonCompliant, f"{context.targetLogicalId} is tagged {PROTECTED_TAG}: remove the tag before deleting it"
        )
    return ProgressEvent(status=OperationStatus.SUCCESS, message=f"{context.targetLogicalId} may be deleted")
