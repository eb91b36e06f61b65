"""The requests CloudFormation sends a hook, built for either entrypoint.

``TYPE`` sends TypeFunction a HookInvocationRequest; ``TEST`` sends TestEntrypoint a
HookTestEvent. The replay loop is the resources' one: this request only changes what
goes on the wire (a STACK or CHANGE_SET target's document behind the ``payload`` URL, as
the service hands it: the support library downloads it), how an answer is read
(``hookStatus``), and how an IN_PROGRESS is carried on (the callbackContext, and
``requestContext.invocation`` counted up, as the service does; the target model never changes).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional

from cfnrun.invoker.credentials import PLACEHOLDER
from cfnrun.invoker.payloads import Entrypoint, OperationRequest
from cfnrun.model.hook_protocol import (
    HOOK_TYPE_VERSION,
    HookInvocationRequest,
    HookRequestContext,
    HookRequestData,
    HookTargetModel,
    HookTestEvent,
    credentials_string,
    parse_hook_progress_event,
)
from cfnrun.model.protocol import ProgressEvent

DEFAULT_TARGET_LOGICAL_ID = "MyBucket"


@dataclass
class HookOperationRequest(OperationRequest):
    invocation: int = 1

    @property
    def target_name(self) -> str:
        return self.operation.target_name or ""

    def read_response(self, payload: Any) -> ProgressEvent:
        return parse_hook_progress_event(payload, "status" if self.entrypoint is Entrypoint.TEST else "hookStatus")

    def continue_with(self, event: ProgressEvent) -> None:
        self.callback_context = event.callbackContext
        self.invocation += 1

    def _target_model(self) -> Dict[str, Any]:
        if self.operation.stack_level is not None:
            return dict(self.operation.stack_level.model)  # the test entrypoint downloads nothing: the document itself
        return HookTargetModel(
            resourceProperties=self._sent(self.operation.desired),
            previousResourceProperties=self._sent(self.operation.previous),
        ).model_dump(exclude_none=True)

    @property
    def target_logical_id(self) -> str:
        return self.operation.logical_resource_id or DEFAULT_TARGET_LOGICAL_ID

    def payload(self) -> Dict[str, Any]:
        if self.entrypoint is Entrypoint.TEST:
            return self._hook_test_event()
        return self._hook_invocation_request()

    def _hook_invocation_request(self) -> Dict[str, Any]:
        stack_level = self.operation.stack_level
        return HookInvocationRequest(
            clientRequestToken=self.client_request_token,
            awsAccountId=self.account_id,
            stackId=self.stack_id,
            hookTypeName=self.type_name,
            actionInvocationPoint=self.action.value,
            hookModel=self.operation.type_configuration,
            requestContext=HookRequestContext(invocation=self.invocation, callbackContext=self.callback_context),
            changeSetId=self.operation.change_set_id,
            requestData=HookRequestData(
                targetName=self.target_name,
                targetType=stack_level.targetType if stack_level else "RESOURCE",
                targetLogicalId=self.target_logical_id,
                targetModel=None if stack_level and stack_level.payload else HookTargetModel.model_validate(self._target_model()),
                payload=stack_level.payload if stack_level else None,
                callerCredentials=credentials_string(self.credentials),
            ),
        ).wire()

    def _hook_test_event(self) -> Dict[str, Any]:
        credentials: Optional[Any] = self.credentials or PLACEHOLDER
        return HookTestEvent(
            credentials=credentials.model_dump() if credentials is not None else {},
            actionInvocationPoint=self.action.value,
            region=self.region,
            callbackContext=self.callback_context,
            typeConfiguration=self.operation.type_configuration,
            request={
                "clientRequestToken": self.client_request_token,
                "hookContext": {
                    "awsAccountId": self.account_id,
                    "stackId": self.stack_id,
                    **({"changeSetId": self.operation.change_set_id} if self.operation.change_set_id else {}),
                    "hookTypeName": self.type_name,
                    "hookTypeVersion": HOOK_TYPE_VERSION,
                    "invocationPoint": self.action.value,
                    "targetName": self.target_name,
                    "targetType": self.operation.stack_level.targetType if self.operation.stack_level else "RESOURCE",
                    "targetLogicalId": self.target_logical_id,
                    "targetModel": self._target_model(),
                },
            },
        ).wire()
