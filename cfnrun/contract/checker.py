"""The contract checker for one operation: request checks, then every event, then the ending."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Dict, List, Optional

from cfnrun.contract import violations as rules
from cfnrun.contract.mode import ContractMode as ContractMode  # its home is light, for the command line
from cfnrun.contract.event_rules import EventContext, check_event
from cfnrun.contract.hook_rules import check_hook_event, check_hook_request
from cfnrun.contract.request_rules import check_request
from cfnrun.contract.shape import ShapeValidator
from cfnrun.contract.violations import Violation
from cfnrun.contract.write_only import redact
from cfnrun.model.failure_cause import failure_cause
from cfnrun.model.hook_targets import HookTarget, target_names
from cfnrun.model.protocol import Action
from cfnrun.model.endings import EndReason
from cfnrun.model.schema import ResourceSchema
from cfnrun.model.seen_call import SeenCall


# How the invoker's own endings map to contract rules.
ENDING_RULES: Dict[EndReason, rules.Rule] = {
    EndReason.INVOCATION_BUDGET: rules.RESPONSE_BUDGET,
    EndReason.OPERATION_TIMEOUT: rules.OPERATION_TIMEOUT,
    EndReason.PAGINATION_LOOP: rules.LIST_PAGINATION,
}  # IN_PROGRESS where none is allowed is reported on the event itself


class ContractChecker:
    def __init__(
        self,
        schema: ResourceSchema,
        action: Action,
        desired: Dict[str, Any],
        previous: Optional[Dict[str, Any]],
        events_seen: int = 0,  # events of this operation already checked elsewhere
        shape: Optional[ShapeValidator] = None,  # reuse one: building it compiles the schema
        target: Optional[HookTarget] = None,  # for a hook's invocation point: what it is asked about
    ) -> None:
        self.schema = schema
        self.action = action
        self.desired = desired
        self.previous = previous
        self.target = target
        self.shape = shape or ShapeValidator(schema)
        self._events = events_seen
        if action.is_hook and target is None:
            raise ValueError("checking a hook needs its target")

    def check_request(self) -> List[Violation]:
        return _never_raising(lambda: self._check_request(), None)

    def _check_request(self) -> List[Violation]:
        if self.target is not None:
            return _redact_target(self.target, check_hook_request(self.target, self.desired, self.previous), (self.desired, self.previous))
        found = check_request(self.action, self.schema, self.desired, self.previous)
        return redact(self.schema, found, (self.desired, self.previous))

    def check_event(self, invocation: int, event: Any, output: str = "") -> List[Violation]:
        """The answer's violations; ``output`` (the call's logs) names the exception behind a FAILED without a message."""
        self._events += 1
        return _with_raised_exception(_never_raising(lambda: self._check_event(invocation, event), invocation), output)

    def _check_event(self, invocation: int, event: Any) -> List[Violation]:
        if not isinstance(event, dict):
            return []  # not a ProgressEvent at all: the invoker reports that itself
        if self.target is not None:
            return check_hook_event(self.target, event, invocation)
        context = EventContext(self.action, self.schema, self.shape, self.desired, event, invocation, self._events == 1)
        models: List[Any] = event["resourceModels"] if isinstance(event.get("resourceModels"), list) else []
        return redact(self.schema, check_event(context), [self.desired, self.previous, event.get("resourceModel"), *models])

    def check_ending(self, reason: EndReason, message: str, invocations: int) -> List[Violation]:
        rule = ENDING_RULES.get(reason)
        return [Violation(rule, message, None, invocations)] if rule is not None else []


def _with_raised_exception(found: List[Violation], output: str) -> List[Violation]:
    """A FAILED without a message because the handler raised: the exception, rather than a bare failed-message."""
    cause = failure_cause(output) if output and any(v.rule is rules.FAILED_MESSAGE for v in found) else None
    if cause is None or not cause.line:
        return found
    message = (
        f"FAILED without a message: the handler raised {cause.line}, and cloudformation_cli_python_lib answers an "
        "uncaught exception with FAILED InternalFailure and no message; catch it and return ProgressEvent.failed(code, message)"
    )
    return [replace(v, message=message) if v.rule is rules.FAILED_MESSAGE else v for v in found]


def _redact_target(target: HookTarget, found: List[Violation], documents: Any) -> List[Violation]:
    """A target model's writeOnly values (a database password...) stay out of messages, as a resource's do."""
    return redact(ResourceSchema(target.schema), found, documents) if target.schema is not None else found


def _never_raising(check: Callable[[], List[Violation]], invocation: Optional[int]) -> List[Violation]:
    """A check that fails is itself reported (as a warning), never in place of the handler's answer."""
    try:
        return check()
    except Exception as error:  # noqa: B902 - a checker bug must not cost the handler's answer
        message = f"the contract check failed: {type(error).__name__}: {error}; nothing was checked, the answer stands"
        return [Violation(rules.CHECKER_FAILED, message, None, invocation)]


def check_call(
    shape: ShapeValidator, call: SeenCall, result: Any, target_schemas: Optional[Dict[str, Dict[str, Any]]] = None,
    output: str = "",
) -> List[Violation]:
    """Check one call seen by the server: a HandlerRequest, sam-tests event, HookInvocationRequest
    or HookTestEvent, and its answer; ``target_schemas`` are a hook project's.

    A call with a callbackContext continues an operation: its request is the replayed
    model, so only the event is checked.
    """
    if call.action is None:
        return []
    first_call = not call.callback_context
    if call.hook_target is not None:
        name = call.hook_target.name
        target = HookTarget(name, target_names(shape.schema, call.action), (target_schemas or {}).get(name))
        checker = ContractChecker(shape.schema, call.action, call.desired, call.previous, shape=shape, target=target)
    elif call.request_data is not None:
        checker = ContractChecker(
            shape.schema, call.action, call.desired, call.previous, events_seen=0 if first_call else 1, shape=shape
        )
    else:
        return []
    return (checker.check_request() if first_call else []) + checker.check_event(1, result, output)
