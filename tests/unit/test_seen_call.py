"""SeenCall: every payload a served function gets, read once, never raising."""
from __future__ import annotations

from typing import Any

import pytest
from fakes import schema

from cfnrun.app.paging import PagingWatch
from cfnrun.contract.checker import check_call
from cfnrun.contract.shape import ShapeValidator
from cfnrun.model.protocol import Action
from cfnrun.model.seen_call import SeenCall, call_action

HANDLER_REQUEST = {
    "action": "UPDATE",
    "bearerToken": "tok-1",
    "nextToken": None,
    "credentials": None,
    "callbackContext": {"step": 2},
    "requestData": {
        "resourceProperties": {"Name": "b"},
        "previousResourceProperties": {"Name": "a"},
        "callerCredentials": {"accessKeyId": "AKIA"},
        "providerCredentials": None,
    },
}
TEST_EVENT = {
    "action": "LIST",
    "credentials": {"accessKeyId": "AKIB"},
    "request": {"clientRequestToken": "tok-2", "desiredResourceState": {"Name": "c"}, "nextToken": "page-2"},
}


def test_a_handler_request() -> None:
    call = SeenCall.parse(HANDLER_REQUEST)
    assert (call.action, call.test_event, call.client_request_token, call.next_token) == (Action.UPDATE, False, "tok-1", None)
    assert (call.desired, call.previous, call.callback_context) == ({"Name": "b"}, {"Name": "a"}, {"step": 2})
    assert call.models == ({"Name": "b"}, {"Name": "a"}, None, None)
    assert call.credentials == (None, {"accessKeyId": "AKIA"}, None)


def test_a_sam_tests_event() -> None:
    call = SeenCall.parse(TEST_EVENT)
    assert (call.action, call.test_event, call.client_request_token, call.next_token) == (Action.LIST, True, "tok-2", "page-2")
    assert (call.desired, call.previous, call.callback_context) == ({"Name": "c"}, None, None)
    assert call.credentials == ({"accessKeyId": "AKIB"}, None, None)


def test_hook_calls_by_their_invocation_point() -> None:
    type_call = SeenCall.parse({
        "actionInvocationPoint": "UPDATE_PRE_PROVISION",
        "requestContext": {"callbackContext": {"n": 1}},
        "requestData": {"targetName": "AWS::S3::Bucket", "targetModel": {"resourceProperties": {"B": 1}, "previousResourceProperties": {"B": 0}}},
    })
    assert type_call.action is Action.UPDATE_PRE_PROVISION and type_call.callback_context == {"n": 1}
    assert type_call.hook_target is not None and type_call.hook_target.name == "AWS::S3::Bucket"
    assert (type_call.desired, type_call.previous, type_call.models) == ({"B": 1}, {"B": 0}, ())
    test_event = SeenCall.parse({"actionInvocationPoint": "DELETE_PRE_PROVISION", "request": {"clientRequestToken": "t", "hookContext": {}}})
    assert (test_event.action, test_event.client_request_token, test_event.desired, test_event.previous) == (Action.DELETE_PRE_PROVISION, "t", {}, None)


@pytest.mark.parametrize("payload", [None, "CREATE", [1], {}, {"action": "CREATE_PRE_PROVISION"}, {"action": ["CREATE"]}, {"action": "NOPE"}])
def test_anything_else_has_no_action(payload: Any) -> None:
    call = SeenCall.parse(payload)
    assert call.action is None and call.hook_target is None and call.payload is payload


def test_a_call_without_request_data_or_action_is_not_checked() -> None:
    shape = ShapeValidator(schema())
    assert check_call(shape, SeenCall.parse({"action": "CREATE"}), {"status": "SUCCESS"}) == []
    assert check_call(shape, SeenCall.parse({"action": "CREATE_PRE_PROVISION", "requestData": {}}), {"status": "SUCCESS"}) == []


def test_paging_watch_counts_a_token_handed_back() -> None:
    watch = PagingWatch()
    call = SeenCall.parse(TEST_EVENT)
    assert [watch.repeats("F", call.next_token, {"nextToken": "page-2"}) for _ in range(3)] == [1, 2, 3]
    assert watch.repeats("F", call.next_token, {"nextToken": "page-3"}) == 0


def test_an_invocation_point_no_hook_has_leaves_the_call_a_resource_call() -> None:
    call = SeenCall.parse({"actionInvocationPoint": "NOPE", "action": "CREATE", "bearerToken": "", "nextToken": 7, "requestData": {"resourceProperties": {"A": 1}}})
    assert (call.action, call.hook_target, call.client_request_token, call.next_token, call.desired) == (Action.CREATE, None, None, None, {"A": 1})


@pytest.mark.parametrize("payload", [
    HANDLER_REQUEST, TEST_EVENT, None, [], "CREATE", {}, {"action": 7}, {"action": "NOPE"}, {"action": "CREATE"},
    {"actionInvocationPoint": "NOPE", "action": "CREATE"}, {"actionInvocationPoint": 3, "action": "DELETE"},
    {"actionInvocationPoint": "CREATE_PRE_PROVISION", "requestData": {}}, {"actionInvocationPoint": "DELETE_PRE_PROVISION", "action": "CREATE"},
])
def test_the_action_read_before_a_call_is_the_parsed_calls(payload: Any) -> None:
    assert call_action(payload) is SeenCall.parse(payload).action
