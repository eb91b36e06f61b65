"""Custom resources (``Custom::*``, ``AWS::CloudFormation::CustomResource``) backed by served functions.

The service sends a custom-resource request to the function its ServiceToken names and waits
(up to an hour) for the function to PUT its answer to the request's ResponseURL. Here the
function is one ``serve --functions`` serves, invoked on the same warm runtime; the ResponseURL
is serve's own (``cfnrun.api.cloudformation``'s response route), so the standard
``cfn-response`` pattern works unchanged. With the virtual clock, a function that returned
without answering ends the wait at once, the hour accounted but not spent. Serve stopping ends the wait at once too:
the resource stays in flight, recorded as its create left it (``stacks/in_flight.py``), as a type's resources do.
"""
from __future__ import annotations

import asyncio
import uuid
from typing import Any, Dict, Optional, Protocol, Sequence, Tuple

from cfnrun.api.cloudformation.custom_resource_responses import CustomResourceResponse, response_url
from cfnrun.app.served import Served, UnknownFunction
from cfnrun.invoker.cancellable_clock import CancelRequested, Stopping
from cfnrun.invoker.clock import RealClock
from cfnrun.runtime.outcome import OutcomeKind
from cfnrun.ui.console import Console
from cfnrun.model.schema_values import stringify_primitives
from cfnrun.stacks.in_flight import OperationStopped
from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, Replacement, ResourceWork, property_problem, required_key
from cfnrun.stacks.records import values_mask

CUSTOM_RESOURCE_WAIT_S = 3600.0  # the service waits an hour for a custom resource's response
NO_RESPONSE = (
    "CloudFormation did not receive a response from your Custom Resource. Please check your custom resource in order to "
    "proceed. (cfnrun waited {waited})"
)


class ServedFunctions(Protocol):
    def knows(self, service_token: str) -> bool:
        """Does serve serve the function this ServiceToken (an ARN or a name) names?"""

    def names(self) -> str:
        """The served functions' names, for an error."""

    async def invoke(self, service_token: str, event: Dict[str, Any], secrets: Sequence[str] = ()) -> Optional[str]:
        """Invoke it with ``event``; what went wrong (the function raised, timed out, crashed), or None. ``secrets``: the
        stack's, masked in what the call shows."""


class PendingResponses:
    """The answers serve's ResponseURL route receives (``CustomResourceResponses``), each to the request waiting on it."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url  # serve's: where its ResponseURL route listens
        self._waiting: Dict[str, "asyncio.Future[CustomResourceResponse]"] = {}

    def expect(self, request_id: str) -> Tuple[str, "asyncio.Future[CustomResourceResponse]"]:
        answer: "asyncio.Future[CustomResourceResponse]" = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = answer
        return response_url(self.base_url, request_id), answer

    def forget(self, request_id: str) -> None:
        self._waiting.pop(request_id, None)

    async def respond(self, token: str, response: CustomResourceResponse) -> bool:
        answer = self._waiting.get(token)
        if answer is None or answer.done():
            return False
        answer.set_result(response)
        return True

    async def reject(self, token: str, reason: str) -> bool:
        answer = self._waiting.get(token)
        if answer is None or answer.done():
            return False
        answer.set_exception(ProvisioningFailed(reason))  # "Invalid response object: …", or the service's "Response object is too long."
        return True


class CustomResources:
    """The ``Provisioner`` of custom resources."""

    def __init__(
        self, functions: ServedFunctions, responses: PendingResponses, virtual_clock: bool, wait_s: float = CUSTOM_RESOURCE_WAIT_S,
        stopping: Optional[Stopping] = None,
    ) -> None:
        self.functions = functions
        self.responses = responses
        self.virtual_clock = virtual_clock
        self.wait_s = wait_s
        self.stopping = stopping or Stopping()  # serve stopping ends the wait for a response at once (the resource stays in flight)

    def validate(self, type_name: str, logical_id: str, properties: Dict[str, Any]) -> Optional[str]:
        token = properties.get("ServiceToken")
        if not isinstance(token, str) or not token:
            return property_problem(logical_id, required_key("ServiceToken"))
        if not self.functions.knows(token):
            return (
                f"Invalid service token {token}: cfnrun serves no such function; serve the function with "
                f"--functions TEMPLATE, or declare it in a stack as an AWS::Lambda::Function with inline Python "
                f"(Code.ZipFile) (served: {self.functions.names()})"
            )
        return None

    def shown(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        return properties

    def replacement(self, type_name: str, property_path: str) -> Replacement:
        return Replacement.ALWAYS if property_path == "ServiceToken" else Replacement.CONDITIONALLY

    async def create(self, work: ResourceWork) -> Provisioned:
        return self._provisioned(await self._request(work, "Create"), work)

    async def update(self, work: ResourceWork) -> Provisioned:
        return self._provisioned(await self._request(work, "Update"), work)

    async def delete(self, work: ResourceWork) -> None:
        await self._request(work, "Delete")

    async def _request(self, work: ResourceWork, request_type: str) -> CustomResourceResponse:
        request_id = str(uuid.uuid4())
        url, answer = self.responses.expect(request_id)
        properties = stringify_primitives(work.properties)
        event: Dict[str, Any] = {
            "RequestType": request_type,
            "ServiceToken": properties.get("ServiceToken"),
            "ResponseURL": url,
            "StackId": work.stack.stack_id,
            "RequestId": request_id,
            "LogicalResourceId": work.logical_id,
            "ResourceType": work.type_name,
            "ResourceProperties": properties,
        }
        if request_type != "Create":
            event["PhysicalResourceId"] = work.physical_id
        if request_type == "Update":
            event["OldResourceProperties"] = stringify_primitives(work.previous_properties or {})
        clock = self.stopping.clock(RealClock())
        try:
            failure = await self.functions.invoke(str(properties.get("ServiceToken")), event, work.stack.secrets)
            if answer.done():
                body = answer.result()
            elif failure is not None:
                raise ProvisioningFailed(f"{NO_RESPONSE.format(waited='no longer: the function failed')}: {failure}")
            elif self.virtual_clock:
                raise ProvisioningFailed(NO_RESPONSE.format(waited="on the virtual clock: the function returned without answering"))
            else:
                body = await clock.wait_for(asyncio.shield(answer), timeout=self.wait_s)
        except asyncio.TimeoutError:
            raise ProvisioningFailed(NO_RESPONSE.format(waited=f"{self.wait_s:g} s")) from None
        except CancelRequested as stopped:
            raise OperationStopped(str(stopped)) from None
        finally:
            self.responses.forget(request_id)
        if body.status != "SUCCESS":
            reason = body.reason or "See the details in CloudWatch Log Stream"
            message = f"Received response status [FAILED] from custom resource. Message returned: {reason} (RequestId: {request_id})"
            # A failed Create's PhysicalResourceId is kept: the rollback sends it a Delete (cfn-response names the log stream)
            raise ProvisioningFailed(message, physical_id=body.physical_resource_id if request_type == "Create" else None)
        return body

    @staticmethod
    def _provisioned(body: CustomResourceResponse, work: ResourceWork) -> Provisioned:
        physical_id = body.physical_resource_id or work.physical_id or ""
        return Provisioned(physical_id, physical_id, dict(body.data), None, no_echo=body.no_echo)


class FunctionCalls:
    """``ServedFunctions`` on serve's functions: the ServiceToken names one (name, qualified name or ARN)."""

    def __init__(self, served: Served, console: Console) -> None:
        self.served = served
        self.console = console

    def knows(self, service_token: str) -> bool:
        try:
            self.served.function(service_token)
        except UnknownFunction:
            return False
        return True

    def names(self) -> str:
        return ", ".join(self.served.function_names()) or "none"

    async def invoke(self, service_token: str, event: Dict[str, Any], secrets: Sequence[str] = ()) -> Optional[str]:
        function = self.served.function(service_token)
        outcome = await self.served.invoke(function, event)
        self.console.call(function.name, f"custom resource {event['RequestType']} {event['LogicalResourceId']}", outcome, mask=values_mask(secrets))
        if outcome.kind is OutcomeKind.RETURNED:
            return None
        return f"{outcome.error_type}: {outcome.error_message}"
