"""What a Lambda hook's function is sent, and what its answer means (the Hooks user guide, "Lambda hooks").

A Lambda hook (an ``AWS::CloudFormation::LambdaHook`` resource, activating ``AWS::Hooks::LambdaHook``) is
a plain function, not a hook project: the service invokes it with the hook invocation request (``clientRequestToken``, ``hookTypeName`` = the
hook's Alias, ``hookModel.LambdaFunction``, ``actionInvocationPoint``, ``requestData`` with the
target's resolved properties, ``requestContext`` with the invocation number and callbackContext)
and reads back ``hookStatus`` (SUCCESS | FAILED | IN_PROGRESS), ``errorCode`` (NonCompliant |
InternalFailure), ``message``, ``callbackContext``, ``callbackDelaySeconds`` and ``annotations``.
The function answers within 30 s (``Budgets.lambda_hook``) and may answer IN_PROGRESS at most 3 times.

A resource's ``targetModel`` is the guide's: ``resourceProperties`` the proposed properties (empty on a
delete), ``previousResourceProperties`` those it has now (an update's and a delete's; none on a create).

For a stack's resource the guide's ``targetType`` is the resource type (``AWS::S3::Bucket``), as
``targetName`` is; RESOURCE is what it says for Cloud Control targets. A STACK or CHANGE_SET target
has no properties: ``targetName`` and ``targetType`` say which, and ``payload`` is the URL of its
document (the template, or the change set's changes), which the function downloads itself.

Outcomes: SUCCESS → HOOK_COMPLETE_SUCCEEDED; FAILED with NonCompliant or without an errorCode (the
function judged the resource) → HOOK_COMPLETE_FAILED; FAILED with InternalFailure, and any answer
that is not a Lambda hook response → HOOK_FAILED. Annotations are kept in the reason the event shows.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from cfnrun.model.errors import CfnrunError
from cfnrun.model.hook_protocol import HOOK_TYPE_VERSION, HookInvocationRequest, HookRequestContext, HookRequestData, HookTargetModel, describe_annotation
from cfnrun.stacks.hooks import INVOCATION_POINT, MAX_IN_PROGRESS, HookedOperation

HOOK_STATUSES = ("SUCCESS", "FAILED", "IN_PROGRESS")
# The guide's ``message``: "truncated to 4096 characters" for a CloudFormation operation, to 1024 for a Cloud Control API one.
MESSAGE_LIMIT = 4096
CLOUD_CONTROL_MESSAGE_LIMIT = 1024
ERROR_CODES = ("NonCompliant", "InternalFailure")


class InvalidLambdaHookResponse(CfnrunError):
    """The function's answer is not a Lambda hook response; the message says what is wrong with it."""


@dataclass(frozen=True)
class LambdaHookResponse:
    """A Lambda hook function's answer, read."""

    hook_status: str  # one of HOOK_STATUSES
    error_code: Optional[str] = None
    message: Optional[str] = None
    callback_context: Optional[Dict[str, Any]] = None
    callback_delay_s: int = 0
    annotations: List[Dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class LambdaHookVerdict:
    """How one Lambda hook run ended: a HookStatus of the stack events and its HookStatusReason."""

    status: str  # HOOK_COMPLETE_SUCCEEDED, HOOK_COMPLETE_FAILED or HOOK_FAILED
    reason: Optional[str] = None


def lambda_hook_request(
    target: HookedOperation,
    hook_type: str,
    lambda_function: str,
    client_request_token: str,
    invocation: int = 1,
    callback_context: Optional[Dict[str, Any]] = None,
    payload_url: Optional[str] = None,
) -> Dict[str, Any]:
    """The payload the function is invoked with for ``target`` (its properties as the service sends them: strings;
    a STACK or CHANGE_SET target's document behind ``payload_url``)."""
    if target.model is not None:
        data = HookRequestData(targetName=target.type_name, targetType=target.target_type, targetLogicalId=target.logical_id, payload=payload_url)
    else:
        data = HookRequestData(
            targetName=target.type_name,
            targetType="RESOURCE" if target.operation == "CLOUD_CONTROL" else target.type_name,
            targetLogicalId=target.logical_id,
            targetModel=_target_model(target),
        )
    request = HookInvocationRequest(
        clientRequestToken=client_request_token,
        awsAccountId=target.stack.account_id,
        stackId=target.stack.stack_id,
        hookTypeName=hook_type,
        hookTypeVersion=HOOK_TYPE_VERSION,
        hookModel={"LambdaFunction": lambda_function},
        actionInvocationPoint=f"{target.action}_{INVOCATION_POINT}",
        requestData=data,
        requestContext=HookRequestContext(invocation=invocation, callbackContext=callback_context),
    )
    payload = request.wire()
    payload["changeSetId"] = target.change_set_id  # the guide's request carries these two even when empty
    payload["requestContext"]["callbackContext"] = callback_context
    return payload


def _target_model(target: HookedOperation) -> HookTargetModel:
    """A resource's properties as the guide gives them: the proposed ones, empty on a delete; the current ones
    (``previousResourceProperties``) on an update or a delete, none on a create."""
    if target.action == "DELETE":
        return HookTargetModel(resourceProperties={}, previousResourceProperties=target.properties)
    return HookTargetModel(resourceProperties=target.properties, previousResourceProperties=target.previous_properties)


def read_lambda_hook_response(answer: Any) -> LambdaHookResponse:
    """The function's return value read as a Lambda hook response; InvalidLambdaHookResponse says why it is not one."""
    if not isinstance(answer, dict):
        raise InvalidLambdaHookResponse(f"a Lambda hook answers with a JSON object with hookStatus, not {type(answer).__name__} {_short(answer)}")
    status = answer.get("hookStatus")
    if status is None:
        raise InvalidLambdaHookResponse(f"the answer has no hookStatus (keys: {', '.join(map(str, answer)) or 'none'})")
    if status not in HOOK_STATUSES:
        raise InvalidLambdaHookResponse(f"hookStatus {status!r} is not one of {', '.join(HOOK_STATUSES)}")
    code = answer.get("errorCode")
    if code is not None and code not in ERROR_CODES:
        raise InvalidLambdaHookResponse(f"errorCode {code!r} is not one of {', '.join(ERROR_CODES)}")
    message = answer.get("message")
    if message is not None and not isinstance(message, str):
        raise InvalidLambdaHookResponse(f"message must be a string, not {type(message).__name__}")
    context = answer.get("callbackContext")
    if context is not None and not isinstance(context, dict):
        raise InvalidLambdaHookResponse(f"callbackContext must be a JSON object, not {type(context).__name__}")
    delay = answer.get("callbackDelaySeconds", 0) or 0
    if isinstance(delay, bool) or not isinstance(delay, int) or delay < 0:
        raise InvalidLambdaHookResponse(f"callbackDelaySeconds must be a whole number of seconds ≥ 0, not {delay!r}")
    annotations = answer.get("annotations") or []
    if not isinstance(annotations, list) or not all(isinstance(item, dict) for item in annotations):
        raise InvalidLambdaHookResponse("annotations must be a list of objects (annotationName, status, statusMessage...)")
    return LambdaHookResponse(str(status), code, message, context, delay, annotations)


def message_limit(operation: str) -> int:
    """How much of a function's ``message`` is kept for a target of this TargetOperation."""
    return CLOUD_CONTROL_MESSAGE_LIMIT if operation == "CLOUD_CONTROL" else MESSAGE_LIMIT


def lambda_hook_verdict(response: LambdaHookResponse, function_name: str, limit: int = MESSAGE_LIMIT) -> Optional[LambdaHookVerdict]:
    """The run's end this answer means, or None when it asks to be invoked again (IN_PROGRESS); its message cut at ``limit``."""
    if response.hook_status == "IN_PROGRESS":
        return None
    if response.message is not None and len(response.message) > limit:
        response = dataclasses.replace(response, message=response.message[:limit])
    if response.hook_status == "SUCCESS":
        return LambdaHookVerdict("HOOK_COMPLETE_SUCCEEDED", _with_annotations(response.message, response))
    if response.error_code == "InternalFailure":
        said = response.message or "no message"
        return LambdaHookVerdict("HOOK_FAILED", _with_annotations(f"Lambda function {function_name} failed: InternalFailure: {said}", response))
    said = response.message or f"Lambda function {function_name} answered FAILED without a message"
    return LambdaHookVerdict("HOOK_COMPLETE_FAILED", _with_annotations(said, response))


def too_many_in_progress(function_name: str) -> LambdaHookVerdict:
    return LambdaHookVerdict(
        "HOOK_FAILED",
        f"Lambda function {function_name} answered IN_PROGRESS more than {MAX_IN_PROGRESS} times "
        f"(a Lambda hook may ask to be invoked again at most {MAX_IN_PROGRESS} times)",
    )


def invalid_answer(function_name: str, problem: str) -> LambdaHookVerdict:
    return LambdaHookVerdict("HOOK_FAILED", f"Lambda function {function_name} did not answer as a Lambda hook: {problem}")


def _with_annotations(text: Optional[str], response: LambdaHookResponse) -> Optional[str]:
    if not response.annotations:
        return text
    shown = "; ".join(describe_annotation(annotation) for annotation in response.annotations)
    return f"{text + ' ' if text else ''}Annotations: {shown}"


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"

