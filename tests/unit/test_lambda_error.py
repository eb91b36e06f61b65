"""LambdaError: Lambda's error body parsed once, written back as it came."""
from __future__ import annotations

from typing import Any, Dict

import pytest

from cfnrun.runtime.lambda_endpoint import outcome_kind
from cfnrun.runtime.lambda_error import LambdaError
from cfnrun.runtime.outcome import OutcomeKind


@pytest.mark.parametrize(
    "body",
    [
        {"errorType": "ValueError", "errorMessage": "no", "stackTrace": ["  File \"h.py\", line 1\n"]},
        {"errorType": "Runtime.UserCodeSyntaxError", "errorMessage": "bad", "location": "h.py:2", "stackTrace": []},
        {"errorType": "Runtime.ExitError", "errorMessage": "gone"},
        {"errorType": "Unhandled", "errorMessage": "x", "requestId": "r-1", "cause": {"a": 1}},
    ],
)
def test_a_body_round_trips(body: Dict[str, Any]) -> None:
    assert LambdaError.from_wire(body).wire() == body


def test_anything_but_an_object_is_an_unhandled_error() -> None:
    assert LambdaError.from_wire("boom") == LambdaError("Unhandled", "boom")
    assert LambdaError.from_wire(None).wire() == {"errorType": "Unhandled", "errorMessage": "None"}


def test_fields_are_read_not_keys() -> None:
    error = LambdaError.from_wire({"errorType": "KeyError", "errorMessage": "'k'", "stackTrace": ["a", "b"]})
    assert (error.error_type, error.message, error.stack_trace, error.location) == ("KeyError", "'k'", ("a", "b"), None)


@pytest.mark.parametrize(
    "error_type, message, kind",
    [
        ("Sandbox.Timedout", "", OutcomeKind.TIMED_OUT),
        ("", "2024 r Task timed out after 3.00 seconds", OutcomeKind.TIMED_OUT),
        ("Runtime.ImportModuleError", "", OutcomeKind.INIT_ERROR),
        ("Runtime.InitTimeout", "", OutcomeKind.INIT_ERROR),
        ("Runtime.OutOfMemory", "", OutcomeKind.WORKER_DIED),
        ("ValueError", "", OutcomeKind.FUNCTION_ERROR),
    ],
)
def test_a_remote_error_picks_the_local_outcome(error_type: str, message: str, kind: OutcomeKind) -> None:
    assert outcome_kind(LambdaError(error_type, message)) is kind
