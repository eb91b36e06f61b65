"""Rules over a hook's request and answers: pure functions, (context) → violations.

A hook answers a HookProgressEvent (``hookStatus``) from TypeFunction, and the handler's
own ProgressEvent (``status``) from the test entrypoint; both are read here. The rules
are the ones cloudformation-cli's HookClient asserts, plus the target checks of the hook
contract suite: a target outside the handler's ``targetNames`` must be refused with
UnsupportedTarget, and the target model is checked against the target type's schema.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional

from cfnrun.contract import violations as rules
from cfnrun.contract.request_rules import schema_problems
from cfnrun.contract.violations import Violation
from cfnrun.model.hook_protocol import HOOK_ONLY_ERROR_CODES, HOOK_STATUSES
from cfnrun.model.hook_targets import HookTarget
from cfnrun.model.protocol import HandlerErrorCode
from cfnrun.model.schema import ResourceSchema

HOOK_ERROR_CODES = {code.value for code in HandlerErrorCode} | set(HOOK_ONLY_ERROR_CODES)
UNSUPPORTED_TARGET = "UnsupportedTarget"
TARGET_MODEL = "/requestData/targetModel"


@dataclass
class HookEventContext:
    target: HookTarget
    event: Dict[str, Any]  # the raw answer
    invocation: int

    @property
    def status_key(self) -> str:
        return "hookStatus" if "hookStatus" in self.event else "status"

    @property
    def status(self) -> Any:
        return self.event.get(self.status_key)

    def violation(self, rule: rules.Rule, message: str, pointer: Optional[str] = None) -> Violation:
        return Violation(rule, message, pointer, self.invocation)


def _status(c: HookEventContext) -> Iterator[Violation]:
    if c.status not in HOOK_STATUSES:
        yield c.violation(
            rules.HOOK_STATUS_VALID, f"{c.status_key} is {c.status!r}; answer IN_PROGRESS, SUCCESS or FAILED", f"/{c.status_key}"
        )


def _success(c: HookEventContext) -> Iterator[Violation]:
    if c.status not in ("SUCCESS", "CHANGE_SET_SUCCESS_SKIP_STACK_HOOK"):
        return
    if c.event.get("errorCode"):
        yield c.violation(rules.HOOK_SUCCESS_CLEAN, f"SUCCESS carries errorCode {c.event['errorCode']!r}; drop it or answer FAILED", "/errorCode")
    if c.event.get("callbackDelaySeconds"):
        yield c.violation(
            rules.HOOK_SUCCESS_CLEAN,
            f"SUCCESS with callbackDelaySeconds {c.event['callbackDelaySeconds']}: a verdict schedules no callback",
            "/callbackDelaySeconds",
        )


def _failed(c: HookEventContext) -> Iterator[Violation]:
    if c.status != "FAILED":
        return
    code = c.event.get("errorCode")
    if code not in HOOK_ERROR_CODES:
        yield c.violation(
            rules.FAILED_ERROR_CODE,
            f"FAILED with errorCode {code!r}; return one of the HandlerErrorCode values (NonCompliant, UnsupportedTarget, ...)",
            "/errorCode",
        )
    if not c.event.get("message"):
        yield c.violation(rules.FAILED_MESSAGE, "FAILED without a message; say why, e.g. ProgressEvent.failed(HandlerErrorCode.NonCompliant, why)", "/message")
    if c.event.get("callbackDelaySeconds"):
        yield c.violation(
            rules.TERMINAL_NO_CALLBACK_DELAY,
            f"FAILED with callbackDelaySeconds {c.event['callbackDelaySeconds']}: a terminal event schedules no callback",
            "/callbackDelaySeconds",
        )


def _in_progress(c: HookEventContext) -> Iterator[Violation]:
    if c.status not in ("IN_PROGRESS", "PENDING"):
        return
    if c.event.get("errorCode"):
        yield c.violation(rules.IN_PROGRESS_NO_ERROR_CODE, f"{c.status} carries errorCode {c.event['errorCode']!r}; drop it or answer FAILED", "/errorCode")
    if c.event.get("result") is not None:
        yield c.violation(rules.HOOK_IN_PROGRESS_NO_RESULT, f"{c.status} carries a result; give one with the final verdict", "/result")


def _unsupported_target(c: HookEventContext) -> Iterator[Violation]:
    if c.target.supported or c.status not in HOOK_STATUSES or c.status in ("IN_PROGRESS", "PENDING"):
        return
    if c.status != "FAILED" or c.event.get("errorCode") != UNSUPPORTED_TARGET:
        answered = f"{c.status} {c.event.get('errorCode') or ''}".strip()
        yield c.violation(
            rules.HOOK_UNSUPPORTED_TARGET,
            f"{c.target.name} is not among the handler's targetNames ({', '.join(c.target.declared) or 'none'}), but the hook "
            f"answered {answered}; answer ProgressEvent.failed(HandlerErrorCode.UnsupportedTarget, ...)",
            f"/{c.status_key}",
        )


def check_hook_event(target: HookTarget, event: Any, invocation: int) -> List[Violation]:
    if not isinstance(event, dict):
        return []  # not an answer at all: the invoker reports that itself
    context = HookEventContext(target, event, invocation)
    return [violation for check in (_status, _success, _failed, _in_progress, _unsupported_target) for violation in check(context)]


def check_hook_request(target: HookTarget, desired: Dict[str, Any], previous: Optional[Dict[str, Any]]) -> List[Violation]:
    """The target model against the target type's schema (when the project has it, and the target is the hook's)."""
    if target.schema is None or not target.supported:
        return []
    schema = ResourceSchema(target.schema)
    found = schema_problems(schema, desired, rules.HOOK_TARGET_MODEL_VALID, f"{TARGET_MODEL}/resourceProperties", f"the {target.name} target model")
    if previous is not None:
        found += schema_problems(
            schema, previous, rules.HOOK_TARGET_MODEL_VALID, f"{TARGET_MODEL}/previousResourceProperties", f"the previous {target.name} target model"
        )
    return found
