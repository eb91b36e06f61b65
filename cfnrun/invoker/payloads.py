"""The requests CloudFormation would send, built for either entrypoint.

``TYPE`` targets the production entrypoint (TypeFunction) with a HandlerRequest;
``TEST`` targets the test entrypoint (TestEntrypoint) with a sam-tests event. Both
carry the same operation state, which changes as the operation goes on: the
callbackContext and resource model returned by an IN_PROGRESS event, or the
nextToken of a LIST page.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional

from cfnrun.invoker.choices import Entrypoint
from cfnrun.invoker.credentials import PLACEHOLDER
from cfnrun.invoker.request_files import OperationInput
from cfnrun.model.protocol import (
    Action,
    Credentials,
    HandlerRequest,
    ProgressEvent,
    RequestData,
    TestEvent,
    TestRequest,
    parse_progress_event,
)
from cfnrun.model.schema_values import stringify_primitives
from cfnrun.model.json_copy import json_copy
from cfnrun.model.random_ids import random_uuid

DEFAULT_LOGICAL_ID = "MyResource"
RESOURCE_TYPE_VERSION = "00000001"  # the first registered version, as the service numbers them


@dataclass
class OperationRequest:
    action: Action
    type_name: str
    region: str
    account_id: str
    entrypoint: Entrypoint
    operation: OperationInput
    credentials: Optional[Credentials] = None
    client_request_token: str = field(default_factory=random_uuid)
    stack_id: str = ""
    next_token: Optional[str] = None
    string_primitives: bool = False  # send numbers and booleans as strings, as template-driven calls do
    # What the next call sends; the operation moves them on as the handler answers.
    resource_properties: Dict[str, Any] = field(init=False)
    callback_context: Optional[Dict[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        self.resource_properties = json_copy(self.operation.desired)
        self.callback_context = self.operation.callback_context
        if self.operation.client_request_token:
            self.client_request_token = self.operation.client_request_token
        if not self.stack_id:
            self.stack_id = (
                f"arn:aws:cloudformation:{self.region}:{self.account_id}:stack/cfnrun-local/{random_uuid()}"
            )

    @property
    def logical_resource_id(self) -> str:
        return self.operation.logical_resource_id or DEFAULT_LOGICAL_ID

    def read_response(self, payload: Any) -> ProgressEvent:
        """The handler's answer as a ProgressEvent; raises InvalidProgressEvent saying what is wrong."""
        return parse_progress_event(payload)

    def continue_with(self, event: ProgressEvent) -> None:
        """Carry an IN_PROGRESS event's callbackContext and model into the next call."""
        self.callback_context = event.callbackContext
        if event.resourceModel is not None:
            self.resource_properties = event.resourceModel

    def next_page(self, token: str) -> None:
        self.next_token = token

    def payload(self) -> Mapping[str, Any]:
        if self.entrypoint is Entrypoint.TEST:
            return self._test_event()
        return self._handler_request()

    def _handler_request(self) -> HandlerRequest:
        """The HandlerRequest, each value a copy of its own (a handler run in this process may change what it is given)."""
        data: RequestData = {}
        if self.credentials is not None:
            data["callerCredentials"] = dict(self.credentials)
        data["resourceProperties"] = self._sent(self.resource_properties) or {}
        previous = self._sent(self.operation.previous)
        if previous is not None:
            data["previousResourceProperties"] = previous
        data["logicalResourceId"] = self.logical_resource_id
        if self.operation.type_configuration is not None:
            data["typeConfiguration"] = json_copy(self.operation.type_configuration)
        for key, tags in self.operation.tags.items():
            if tags is not None:
                data[key] = dict(tags)  # type: ignore[literal-required]  # stackTags, systemTags or their previous*
        request: HandlerRequest = {
            "action": self.action.value,
            "awsAccountId": self.account_id,
            "bearerToken": self.client_request_token,
            "region": self.region,
            "resourceType": self.type_name,
            "requestData": data,
            "stackId": self.stack_id,
        }
        if self.callback_context is not None:
            request["callbackContext"] = json_copy(self.callback_context)
        if self.next_token is not None:
            request["nextToken"] = self.next_token
        request["responseEndpoint"] = f"https://cloudformation.{self.region}.amazonaws.com"
        request["resourceTypeVersion"] = RESOURCE_TYPE_VERSION
        return request

    def _sent(self, model: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
        """A model as the request carries it: its own copy, numbers and booleans as text where template values are sent."""
        if model is None:
            return None
        return stringify_primitives(model) if self.string_primitives else json_copy(model)

    def _test_tags(self) -> Dict[str, Any]:
        """The request's tags under the names the test entrypoint's request uses."""
        names = {"stackTags": "desiredResourceTags", "previousStackTags": "previousResourceTags"}
        return {names.get(key, key): value for key, value in self.operation.tags.items()}

    def _test_event(self) -> Dict[str, Any]:
        return TestEvent(
            credentials=self.credentials or PLACEHOLDER,
            action=self.action,
            region=self.region,
            callbackContext=self.callback_context,
            request=TestRequest(
                clientRequestToken=self.client_request_token,
                desiredResourceState=self._sent(self.resource_properties),
                previousResourceState=self._sent(self.operation.previous),
                logicalResourceIdentifier=self.logical_resource_id,
                typeConfiguration=self.operation.type_configuration,
                nextToken=self.next_token,
                region=self.region,
                awsAccountId=self.account_id,
                stackId=self.stack_id,
                **self._test_tags(),
            ),
        ).wire()
