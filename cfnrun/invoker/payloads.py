"""The requests CloudFormation would send, built for either entrypoint.

``TYPE`` targets the production entrypoint (TypeFunction) with a HandlerRequest;
``TEST`` targets the test entrypoint (TestEntrypoint) with a sam-tests event. Both
carry the same operation state, which changes as the operation goes on: the
callbackContext and resource model returned by an IN_PROGRESS event, or the
nextToken of a LIST page.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional

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

    def payload(self) -> Dict[str, Any]:
        if self.entrypoint is Entrypoint.TEST:
            return self._test_event()
        return self._handler_request()

    def _properties(self, model: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
        return stringify_primitives(model) if self.string_primitives and model is not None else model

    def _handler_request(self) -> Dict[str, Any]:
        return HandlerRequest(
            action=self.action,
            awsAccountId=self.account_id,
            bearerToken=self.client_request_token,
            region=self.region,
            resourceType=self.type_name,
            stackId=self.stack_id,
            callbackContext=self.callback_context,
            nextToken=self.next_token,
            responseEndpoint=f"https://cloudformation.{self.region}.amazonaws.com",
            resourceTypeVersion=RESOURCE_TYPE_VERSION,
            requestData=RequestData(
                callerCredentials=self.credentials,
                resourceProperties=self._properties(self.resource_properties) or {},
                previousResourceProperties=self._properties(self.operation.previous),
                logicalResourceId=self.logical_resource_id,
                typeConfiguration=self.operation.type_configuration,
                **self.operation.tags,
            ),
        ).wire()

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
                desiredResourceState=self._properties(self.resource_properties),
                previousResourceState=self._properties(self.operation.previous),
                logicalResourceIdentifier=self.logical_resource_id,
                typeConfiguration=self.operation.type_configuration,
                nextToken=self.next_token,
                region=self.region,
                awsAccountId=self.account_id,
                stackId=self.stack_id,
                **self._test_tags(),
            ),
        ).wire()
