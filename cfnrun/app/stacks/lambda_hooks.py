"""Lambda hooks: an ``AWS::CloudFormation::LambdaHook`` resource makes a plain served function a hook.

The function is one ``serve --functions TEMPLATE`` serves, named by ``LambdaFunction`` (a name or an
ARN, as a ServiceToken is). Before each operation the hook's configuration targets (a resource, a stack,
a change set, a Cloud Control call), it is
invoked on its warm runtime with the Lambda hook request (``stacks/lambda_hook_payloads.py``), each
answer waited for at most ``Budgets.lambda_hook`` (the service's 30 s, scaled by ``--time-scale``);
IN_PROGRESS re-invokes it with its callbackContext after callbackDelaySeconds (accounted, not spent,
with ``--virtual-clock``), at most 3 times. Whatever the function does (raises, hangs, crashes,
answers garbage) the run ends with a HookOutcome, so a stack never waits on a Lambda hook for ever.
"""
from __future__ import annotations

import dataclasses
import uuid
from typing import Any, Dict, Optional, Union

from cfnrun.app.served import UnknownFunction
from cfnrun.app.stacks.hook_gate import Hook, HookOutcome
from cfnrun.app.stacks.hook_payloads import HookPayloadStore
from cfnrun.app.type_operations import TypeOperations
from cfnrun.invoker.cancellable_clock import CancelRequested, Stopping
from cfnrun.stacks.in_flight import OperationStopped
from cfnrun.model.schema_values import stringify_primitives
from cfnrun.model.budgets import Budget
from cfnrun.model.hook_configuration import HookConfiguration
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.stacks.hooks import MAX_IN_PROGRESS, HookedOperation, managed_hook_model
from cfnrun.stacks.lambda_hook_payloads import (
    InvalidLambdaHookResponse,
    LambdaHookResponse,
    LambdaHookVerdict,
    invalid_answer,
    lambda_hook_request,
    MESSAGE_LIMIT,
    lambda_hook_verdict,
    message_limit,
    read_lambda_hook_response,
    too_many_in_progress,
)
from cfnrun.stacks.provisioning import ProvisioningFailed, property_problem, required_key
from cfnrun.stacks.records import values_mask

LAMBDA_HOOK_TYPE = "AWS::CloudFormation::LambdaHook"


class LambdaHookKind:
    """``HookKind`` of ``AWS::CloudFormation::LambdaHook``: its LambdaFunction must be served."""

    def __init__(self, operations: TypeOperations, payloads: HookPayloadStore, stopping: Optional[Stopping] = None) -> None:
        self.operations = operations
        self.payloads = payloads  # a STACK or CHANGE_SET target's document, served while the function runs
        self.stopping = stopping or Stopping()  # serve stopping ends a hook's waits between invocations at once

    def problem(self, logical_id: str, properties: Dict[str, Any]) -> Optional[str]:
        function = properties.get("LambdaFunction")
        if not isinstance(function, str) or not function:
            return property_problem(logical_id, required_key("LambdaFunction"))
        return self._unserved(function)

    async def build(self, alias: str, properties: Dict[str, Any], configuration: HookConfiguration) -> Hook:
        function = str(properties["LambdaFunction"])
        unserved = self._unserved(function)
        if unserved is not None:  # served when the template was read, gone since (a reload)
            raise ProvisioningFailed(unserved)
        return LambdaHook(alias, function, configuration, self.operations, self.payloads, self.stopping)

    def _unserved(self, function: str) -> Optional[str]:
        try:
            self.operations.served.function(function)
        except UnknownFunction:
            served = ", ".join(self.operations.served.function_names()) or "none"
            return (
                f"Invalid LambdaFunction {function}: cfnrun serves no such function; serve the hook's function with "
                f"--functions TEMPLATE (served: {served})"
            )
        return None


class LambdaHook:
    """``Hook``: a served function asked before each resource operation its configuration targets."""

    def __init__(
        self, hook_type: str, lambda_function: str, configuration: HookConfiguration, operations: TypeOperations, payloads: HookPayloadStore,
        stopping: Optional[Stopping] = None,
    ) -> None:
        self.stopping = stopping or Stopping()
        self.hook_type = hook_type  # the LambdaHook's Alias
        self.original_type_name: Optional[str] = "AWS::Hooks::LambdaHook"  # the public hook its Alias activates, as the Guard hook's
        self.lambda_function = lambda_function  # as the resource names it: a name or an ARN
        self.configuration = configuration
        self.operations = operations
        self.payloads = payloads

    def targets(self, action: str, type_name: str) -> bool:
        return True  # a Lambda hook declares no targets of its own: its TargetFilters (the configuration) say them all

    async def run(self, target: HookedOperation) -> HookOutcome:
        model = managed_hook_model(target)
        if model is None:
            return await self._run(target, None)
        with self.payloads.serving(model) as url:
            return await self._run(target, url)

    async def _run(self, target: HookedOperation, payload_url: Optional[str]) -> HookOutcome:
        served = self.operations.served
        try:
            function = served.function(self.lambda_function)
        except UnknownFunction as error:
            return HookOutcome("HOOK_FAILED", f"Lambda hook {self.hook_type} cannot run: {error}")
        shown = dataclasses.replace(  # as the service sends them: numbers and booleans as strings
            target, properties=stringify_primitives(target.properties), previous_properties=stringify_primitives(target.previous_properties)
        )
        budget = self.operations.budgets.lambda_hook()
        clock = self.operations.new_clock()
        if target.operation != "CLOUD_CONTROL":  # a stack's hook stops with serve (Cloud Control cancels its requests itself)
            clock = self.stopping.clock(clock)
        token = str(uuid.uuid4())
        label = f"lambda hook {self.hook_type} {target.action}_PRE_PROVISION {target.stack.stack_name} {target.logical_id}"
        callback_context: Optional[Dict[str, Any]] = None
        invocation = 1
        while True:
            event = lambda_hook_request(shown, self.hook_type, self.lambda_function, token, invocation, callback_context, payload_url)
            outcome = await served.invoke(function, event, within=budget)
            self.operations.console.call(function.name, label, outcome, mask=values_mask(target.stack.secrets))
            answer = read_answer(outcome, function.name, budget, message_limit(target.operation))
            if isinstance(answer, LambdaHookVerdict):
                return HookOutcome(answer.status, answer.reason)
            if invocation > MAX_IN_PROGRESS:
                verdict = too_many_in_progress(function.name)
                return HookOutcome(verdict.status, verdict.reason)
            callback_context = answer.callback_context
            try:
                await clock.sleep(answer.callback_delay_s)
            except CancelRequested as stopped:
                raise OperationStopped(str(stopped)) from None
            invocation += 1


def read_answer(outcome: InvocationOutcome, function_name: str, budget: Budget, limit: int = MESSAGE_LIMIT) -> Union[LambdaHookVerdict, LambdaHookResponse]:
    """How the run ends after this invocation (a verdict), or the IN_PROGRESS answer to follow."""
    if outcome.kind is OutcomeKind.TIMED_OUT:
        cut = outcome.timeout_s
        waited = f"its Timeout ({cut:g} s)" if cut is not None and cut < budget.seconds else budget.describe()
        return LambdaHookVerdict("HOOK_FAILED", f"Lambda function {function_name} did not answer within {waited}")
    if outcome.kind is not OutcomeKind.RETURNED:
        what = {
            OutcomeKind.FUNCTION_ERROR: "raised",
            OutcomeKind.WORKER_DIED: "crashed",
            OutcomeKind.INIT_ERROR: "could not start",
        }[outcome.kind]
        detail = ": ".join(part for part in (outcome.error_type, outcome.error_message) if part) or "no detail"
        return LambdaHookVerdict("HOOK_FAILED", f"Lambda function {function_name} {what}: {detail}")
    try:
        response = read_lambda_hook_response(outcome.result)
    except InvalidLambdaHookResponse as error:
        return invalid_answer(function_name, str(error))
    return lambda_hook_verdict(response, function_name, limit) or response
