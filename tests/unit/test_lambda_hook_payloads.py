"""A Lambda hook's request and the reading of its function's answer, without a function.

tests/test_lambda_hooks.py runs real functions through serve; here each field is checked fast.
"""
from __future__ import annotations

from typing import Any

import pytest

from cfnrun.app.stacks.lambda_hooks import read_answer
from cfnrun.model.budgets import Budgets
from cfnrun.runtime.lambda_error import LambdaError
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.stacks.hooks import HookedOperation
from cfnrun.stacks.lambda_hook_payloads import (
    InvalidLambdaHookResponse,
    LambdaHookResponse,
    LambdaHookVerdict,
    lambda_hook_request,
    lambda_hook_verdict,
    message_limit,
    read_lambda_hook_response,
)
from cfnrun.stacks.provisioning import StackContext

STACK = StackContext("arn:aws:cloudformation:us-east-1:123456789012:stack/hooked/1", "hooked", "us-east-1", "123456789012", {})
FUNCTION = "arn:aws:lambda:us-east-1:123456789012:function:Policy"


def test_a_create_request_carries_the_documented_fields() -> None:
    target = HookedOperation(STACK, "CREATE", "Bucket", "AWS::S3::Bucket", {"BucketName": "b", "VersioningConfiguration": {"Status": "Suspended"}})
    assert lambda_hook_request(target, "My::Lambda::Hook", FUNCTION, "token-1") == {
        "clientRequestToken": "token-1",
        "awsAccountId": "123456789012",
        "stackId": STACK.stack_id,
        "changeSetId": None,
        "hookTypeName": "My::Lambda::Hook",
        "hookTypeVersion": "00000001",
        "hookModel": {"LambdaFunction": FUNCTION},
        "actionInvocationPoint": "CREATE_PRE_PROVISION",
        "requestData": {
            "targetName": "AWS::S3::Bucket",
            "targetType": "AWS::S3::Bucket",
            "targetLogicalId": "Bucket",
            "targetModel": {"resourceProperties": {"BucketName": "b", "VersioningConfiguration": {"Status": "Suspended"}}},
        },
        "requestContext": {"invocation": 1, "callbackContext": None},
    }


def test_an_update_request_carries_the_previous_properties_and_a_replay_its_callback_context() -> None:
    target = HookedOperation(STACK, "UPDATE", "Bucket", "AWS::S3::Bucket", {"BucketName": "new"}, {"BucketName": "old"})
    request = lambda_hook_request(target, "My::Lambda::Hook", "Policy", "token-2", invocation=3, callback_context={"step": 2})
    assert request["actionInvocationPoint"] == "UPDATE_PRE_PROVISION"
    assert request["requestData"]["targetModel"] == {"resourceProperties": {"BucketName": "new"}, "previousResourceProperties": {"BucketName": "old"}}
    assert request["requestContext"] == {"invocation": 3, "callbackContext": {"step": 2}}
    assert request["hookModel"] == {"LambdaFunction": "Policy"}


def test_a_delete_request_proposes_no_properties_and_gives_the_current_ones_as_previous() -> None:
    target = HookedOperation(STACK, "DELETE", "Bucket", "AWS::S3::Bucket", {"BucketName": "b"})
    request = lambda_hook_request(target, "My::Lambda::Hook", FUNCTION, "token-3")
    assert request["actionInvocationPoint"] == "DELETE_PRE_PROVISION"
    assert request["requestData"]["targetModel"] == {"resourceProperties": {}, "previousResourceProperties": {"BucketName": "b"}}


def test_every_documented_field_of_an_answer_is_read() -> None:
    annotation = {"annotationName": "Versioning", "status": "FAILED", "statusMessage": "off"}
    response = read_lambda_hook_response(
        {
            "hookStatus": "IN_PROGRESS", "errorCode": "NonCompliant", "message": "m", "clientRequestToken": "t",
            "callbackContext": {"a": 1}, "callbackDelaySeconds": 7, "annotations": [annotation],
        }
    )
    assert response == LambdaHookResponse("IN_PROGRESS", "NonCompliant", "m", {"a": 1}, 7, [annotation])


@pytest.mark.parametrize(
    "answer, problem",
    [
        ("yes", "a Lambda hook answers with a JSON object with hookStatus, not str 'yes'"),
        (None, "not NoneType None"),
        ({"status": "SUCCESS"}, "the answer has no hookStatus (keys: status)"),
        ({"hookStatus": "MAYBE"}, "hookStatus 'MAYBE' is not one of SUCCESS, FAILED, IN_PROGRESS"),
        ({"hookStatus": "FAILED", "errorCode": "AccessDenied"}, "errorCode 'AccessDenied' is not one of NonCompliant, InternalFailure"),
        ({"hookStatus": "FAILED", "message": ["no"]}, "message must be a string, not list"),
        ({"hookStatus": "IN_PROGRESS", "callbackContext": "again"}, "callbackContext must be a JSON object, not str"),
        ({"hookStatus": "IN_PROGRESS", "callbackDelaySeconds": -1}, "callbackDelaySeconds must be a whole number of seconds ≥ 0, not -1"),
        ({"hookStatus": "IN_PROGRESS", "callbackDelaySeconds": "5"}, "not '5'"),
        ({"hookStatus": "SUCCESS", "annotations": {"annotationName": "x"}}, "annotations must be a list of objects"),
    ],
)
def test_an_answer_that_is_not_a_lambda_hook_response_says_what_is_wrong(answer: Any, problem: str) -> None:
    with pytest.raises(InvalidLambdaHookResponse) as raised:
        read_lambda_hook_response(answer)
    assert problem in str(raised.value)


@pytest.mark.parametrize(
    "answer, verdict",
    [
        ({"hookStatus": "SUCCESS"}, LambdaHookVerdict("HOOK_COMPLETE_SUCCEEDED")),
        ({"hookStatus": "SUCCESS", "message": "fine"}, LambdaHookVerdict("HOOK_COMPLETE_SUCCEEDED", "fine")),
        ({"hookStatus": "FAILED", "errorCode": "NonCompliant", "message": "off"}, LambdaHookVerdict("HOOK_COMPLETE_FAILED", "off")),
        ({"hookStatus": "FAILED"}, LambdaHookVerdict("HOOK_COMPLETE_FAILED", "Lambda function Policy answered FAILED without a message")),
        (
            {"hookStatus": "FAILED", "errorCode": "InternalFailure", "message": "db down"},
            LambdaHookVerdict("HOOK_FAILED", "Lambda function Policy failed: InternalFailure: db down"),
        ),
        (
            {"hookStatus": "FAILED", "message": "off", "annotations": [{"annotationName": "V", "status": "FAILED", "severityLevel": "HIGH", "remediationMessage": "on"}]},
            LambdaHookVerdict("HOOK_COMPLETE_FAILED", "off Annotations: V FAILED HIGH → fix: on"),
        ),
        ({"hookStatus": "IN_PROGRESS"}, None),
    ],
)
def test_hook_status_and_error_code_make_the_hook_status_of_the_events(answer: Any, verdict: Any) -> None:
    assert lambda_hook_verdict(read_lambda_hook_response(answer), "Policy") == verdict


def test_annotations_are_shown_when_the_answer_has_no_message() -> None:
    response = read_lambda_hook_response({"hookStatus": "SUCCESS", "annotations": [{"annotationName": "V", "status": "PASSED"}]})
    assert lambda_hook_verdict(response, "Policy") == LambdaHookVerdict("HOOK_COMPLETE_SUCCEEDED", "Annotations: V PASSED")


def test_the_message_is_cut_as_the_guide_says_4096_characters_for_cloudformation_1024_for_cloud_control() -> None:
    long = read_lambda_hook_response({"hookStatus": "FAILED", "errorCode": "NonCompliant", "message": "x" * 5000})
    assert lambda_hook_verdict(long, "Policy", message_limit("RESOURCE")) == LambdaHookVerdict("HOOK_COMPLETE_FAILED", "x" * 4096)
    assert lambda_hook_verdict(long, "Policy", message_limit("CLOUD_CONTROL")) == LambdaHookVerdict("HOOK_COMPLETE_FAILED", "x" * 1024)


def test_an_invocation_that_did_not_return_ends_the_run_as_hook_failed() -> None:
    budget = Budgets(time_scale=0.1).lambda_hook()
    assert budget.seconds == pytest.approx(3.0)
    timed_out = InvocationOutcome(OutcomeKind.TIMED_OUT, "r1", 3000.0, timeout_s=3.0)
    assert read_answer(timed_out, "Policy", budget) == LambdaHookVerdict(
        "HOOK_FAILED",
        "Lambda function Policy did not answer within the service's 30 s limit for a Lambda hook's answer scaled by --time-scale 0.1 (3 s)",
    )
    cut_sooner = InvocationOutcome(OutcomeKind.TIMED_OUT, "r0", 1000.0, timeout_s=1.0)
    assert read_answer(cut_sooner, "Policy", budget) == LambdaHookVerdict("HOOK_FAILED", "Lambda function Policy did not answer within its Timeout (1 s)")
    raised = InvocationOutcome(OutcomeKind.FUNCTION_ERROR, "r2", 1.0, error=LambdaError("ValueError", "bad"))
    assert read_answer(raised, "Policy", budget) == LambdaHookVerdict("HOOK_FAILED", "Lambda function Policy raised: ValueError: bad")
    garbage = InvocationOutcome(OutcomeKind.RETURNED, "r3", 1.0, result=[1])
    verdict = read_answer(garbage, "Policy", budget)
    assert isinstance(verdict, LambdaHookVerdict) and verdict.status == "HOOK_FAILED"
    in_progress = InvocationOutcome(OutcomeKind.RETURNED, "r4", 1.0, result={"hookStatus": "IN_PROGRESS", "callbackContext": {"n": 1}})
    assert read_answer(in_progress, "Policy", budget) == LambdaHookResponse("IN_PROGRESS", callback_context={"n": 1})


def test_the_service_waits_exactly_30_s_for_each_answer_by_default() -> None:
    assert Budgets().lambda_hook().seconds == 30.0


def test_stack_and_change_set_targets_send_the_payload_url_and_cloud_control_says_resource() -> None:
    stack = HookedOperation(STACK, "UPDATE", "hooked", "STACK", {}, operation="STACK", model={"template": "{}"})
    data = lambda_hook_request(stack, "My::Lambda::Hook", FUNCTION, "t", payload_url="http://127.0.0.1:1/cfnrun/hook-payloads/x")["requestData"]
    assert data == {"targetName": "STACK", "targetType": "STACK", "targetLogicalId": "hooked", "payload": "http://127.0.0.1:1/cfnrun/hook-payloads/x"}
    change_set = HookedOperation(STACK, "CREATE", "arn:cs", "CHANGE_SET", {}, operation="CHANGE_SET", model={"template": "{}"}, change_set_id="arn:cs")
    request = lambda_hook_request(change_set, "My::Lambda::Hook", FUNCTION, "t", payload_url="http://x")
    assert (request["changeSetId"], request["requestData"]["targetType"]) == ("arn:cs", "CHANGE_SET")
    cloud_control = HookedOperation(StackContext("", "", "us-east-1", "123456789012"), "CREATE", "req", "AWS::S3::Bucket", {"BucketName": "b"}, operation="CLOUD_CONTROL")
    assert lambda_hook_request(cloud_control, "My::Lambda::Hook", FUNCTION, "t")["requestData"]["targetType"] == "RESOURCE"
