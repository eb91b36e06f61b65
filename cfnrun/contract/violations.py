"""Contract rules by stable id: severity (MUST → error, SHOULD → warning) and the sentence enforced."""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Dict, Optional


class Severity(str, enum.Enum):
    ERROR = "error"  # a MUST of the handler contract
    WARNING = "warning"  # a SHOULD


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    sentence: str  # what the handler contract (or resource schema guide) says


@dataclass(frozen=True)
class Violation:
    rule: Rule
    message: str  # what happened and how to fix it
    pointer: Optional[str] = None  # JSON pointer into the event or request, when there is one
    invocation: Optional[int] = None

    @property
    def is_error(self) -> bool:
        return self.rule.severity is Severity.ERROR

    def wire(self) -> Dict[str, Any]:
        record: Dict[str, Any] = {"rule": self.rule.id, "severity": self.rule.severity.value, "message": self.message}
        if self.pointer is not None:
            record["pointer"] = self.pointer
        if self.invocation is not None:
            record["invocation"] = self.invocation
        record["contract"] = self.rule.sentence
        return record

    def line(self) -> str:
        where = f" at {self.pointer}" if self.pointer else ""
        return f"[{self.rule.id}] {self.message}{where}"


def _rule(rule_id: str, severity: Severity, sentence: str) -> Rule:
    return Rule(rule_id, severity, sentence)


MUST = Severity.ERROR
SHOULD = Severity.WARNING  # reported and counted, never a failure (not even with --contract strict)

STATUS_VALID = _rule("status-valid", MUST, "OperationStatus is IN_PROGRESS, SUCCESS or FAILED.")
FAILED_ERROR_CODE = _rule(
    "failed-error-code", MUST, "A handler error code MUST be returned whenever a progress event has status FAILED."
)
FAILED_MESSAGE = _rule("failed-message", MUST, "The progress event MUST return an error message and the most applicable error code.")
IN_PROGRESS_NO_ERROR_CODE = _rule("in-progress-no-error-code", MUST, "An IN_PROGRESS event carries no error code.")
IN_PROGRESS_NO_RESOURCE_MODELS = _rule(
    "in-progress-no-resource-models", MUST, "ResourceModels are returned by list operations, not by IN_PROGRESS events."
)
TERMINAL_NO_CALLBACK_DELAY = _rule(
    "terminal-no-callback-delay", MUST, "CallbackDelaySeconds schedules a callback; SUCCESS and FAILED end the operation."
)
READ_NO_IN_PROGRESS = _rule(
    "read-no-in-progress", MUST, "A read handler MUST always return a status of SUCCESS or FAILED; it MUST NOT return IN_PROGRESS."
)
LIST_NO_IN_PROGRESS = _rule(
    "list-no-in-progress", MUST, "A list handler MUST always return a status of SUCCESS or FAILED; it MUST NOT return IN_PROGRESS."
)
LIST_RESOURCE_MODELS = _rule(
    "list-resource-models", MUST, "A list handler MUST return an array of primary identifiers, and an empty array if there are no resources."
)
LIST_PRIMARY_IDENTIFIER = _rule("list-primary-identifier", MUST, "A list handler MUST return an array of primary identifiers.")
DELETE_NO_MODEL = _rule(
    "delete-success-no-model", MUST, "When the delete handler returns SUCCESS, the ProgressEvent object MUST NOT contain a model."
)
PRIMARY_IDENTIFIER = _rule(
    "primary-identifier-present",
    MUST,
    "Every model MUST include the primaryIdentifier. The only exception is if the first progress event is FAILED.",
)
UPDATE_PRIMARY_IDENTIFIER = _rule(
    "update-primary-identifier-unchanged",
    MUST,
    "The primaryIdentifier returned in every progress event must match the primaryIdentifier passed into the request.",
)
MODEL_RETURNED = _rule(
    "model-returned", MUST, "A create or update handler MUST return a model in every ProgressEvent; a read handler MUST return one."
)
MODEL_SHAPE = _rule("model-shape", MUST, "A model returned in a ProgressEvent MUST always conform to the shape of the resource schema.")
SUCCESS_MATCHES_REQUEST = _rule(
    "success-matches-request",
    MUST,
    "All properties specified in the request MUST be present in the model returned, and they MUST match exactly, "
    "with the exception of properties defined as writeOnlyProperties.",
)
READ_ONLY_PRESENT = _rule(
    "read-only-present", MUST, "The model MUST contain all properties that have values, including any readOnlyProperties."
)
NO_NULL_VALUES = _rule("no-null-values", MUST, "The model MUST NOT return any properties that are null or do not have values.")
NO_WRITE_ONLY = _rule(
    "no-write-only-returned", MUST, "writeOnlyProperties are never returned: they cannot be read back from the resource."
)
RESPONSE_BUDGET = _rule(
    "response-within-budget",
    MUST,
    "A create, update or delete handler MUST always return a ProgressEvent within 60 seconds; read and list within 30 seconds.",
)
OPERATION_TIMEOUT = _rule(
    "operation-within-timeout",
    MUST,
    "A handler MUST return FAILED if it cannot reach the desired state within the timeout specified in the resource schema.",
)
LIST_PAGINATION = _rule(
    "list-pagination-progress", MUST, "The NextToken returned MUST be able to be used in a subsequent list request to retrieve the next set of results."
)
REQUEST_VALID = _rule("request-valid", MUST, "The input to a create or update handler MUST be valid against the resource schema.")
REQUEST_NO_READ_ONLY = _rule(
    "request-no-read-only", MUST, "readOnlyProperties are set by the handler; a create request cannot specify them."
)
UPDATE_CREATE_ONLY = _rule(
    "update-create-only-unchanged",
    MUST,
    "Any createOnlyProperties specified in update handler input MUST NOT be different from their previous state.",
)
REQUEST_IDENTIFIER = _rule(
    "request-has-identifier",
    MUST,
    "The input to a read, update or delete handler MUST contain either the primaryIdentifier or an additionalIdentifier.",
)
# A hook's answers (cloudformation-cli's HookClient asserts and the hook contract suite).
HOOK_STATUS_VALID = _rule(
    "hook-status-valid", MUST, "A hook answers a HookProgressEvent whose hookStatus is IN_PROGRESS, SUCCESS or FAILED."
)
HOOK_SUCCESS_CLEAN = _rule(
    "hook-success-clean", MUST, "SUCCESS events should have no error code set and no callback delay."
)
HOOK_IN_PROGRESS_NO_RESULT = _rule("hook-in-progress-no-result", MUST, "IN_PROGRESS events should have no result.")
HOOK_UNSUPPORTED_TARGET = _rule(
    "hook-unsupported-target",
    MUST,
    "A hook handler MUST return FAILED with a UnsupportedTarget error code if the target is not supported.",
)
HOOK_TARGET_MODEL_VALID = _rule(
    "hook-target-model-valid", MUST, "The target model a hook is sent conforms to the target type's schema."
)

IN_PROGRESS_SET_SO_FAR = _rule(
    "in-progress-set-so-far",
    SHOULD,
    "A create or update handler SHOULD return a model containing all properties set so far and nothing more during each "
    "IN_PROGRESS event.",
)

ALL_RULES = [value for value in list(globals().values()) if isinstance(value, Rule)]

CHECKER_FAILED = _rule(
    "checker-failed",
    Severity.WARNING,
    "cfnrun's own check could not run; the handler's answer stands as it was given.",
)

# Rules about the request a handler is sent (the caller's input), not about the handler's answer.
REQUEST_RULES = frozenset({REQUEST_VALID, REQUEST_NO_READ_ONLY, UPDATE_CREATE_ONLY, REQUEST_IDENTIFIER, HOOK_TARGET_MODEL_VALID})
