"""An invocation's outcome as AWS Lambda's Invoke API answers it."""
from __future__ import annotations

import base64
import json
from datetime import datetime, timezone
from typing import Any, Dict, Tuple

from cfnrun.model.json_text import JsonWriter
from cfnrun.runtime.lambda_error import LambdaError
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind

TAIL_BYTES = 4096
MAX_RESPONSE_BYTES = 6291556  # Lambda's synchronous response limit (6 MB)
FUNCTION_ERROR = {"X-Amz-Function-Error": "Unhandled"}
_ANSWER = JsonWriter()  # json.dumps's text, its encoder made once: every call's answer is written with it
_RETURNED = OutcomeKind.RETURNED  # read once: read off its class, an enum's member costs ~900 instructions


def function_payload(outcome: InvocationOutcome) -> Tuple[bytes, Dict[str, str]]:
    """The response body and headers; function errors carry ``X-Amz-Function-Error``.

    A result over Lambda's 6 MB turns ``outcome`` into the error the caller gets, so that the call's review, which
    reads the outcome after this turn of the loop (``app/late_parts.py``), prints and records that error too."""
    if outcome.kind is _RETURNED:
        body = _ANSWER.text(outcome.result).encode("utf-8")
        if len(body) <= MAX_RESPONSE_BYTES:
            return body, {}
        error = LambdaError(
            "Function.ResponseSizeTooLarge",
            f"Response payload size ({len(body)} bytes) exceeded maximum allowed payload size ({MAX_RESPONSE_BYTES} bytes).",
        )
        outcome.kind, outcome.result, outcome.error = OutcomeKind.FUNCTION_ERROR, None, error
        return json.dumps(error.wire()).encode("utf-8"), dict(FUNCTION_ERROR)
    return json.dumps(function_error(outcome)).encode("utf-8"), dict(FUNCTION_ERROR)


def shutdown_payload(request_id: str, grace_s: float) -> Tuple[bytes, Dict[str, str]]:
    """The answer to a call still running when serve's shutdown grace ran out."""
    error = LambdaError(
        "Runtime.ExitError",
        f"RequestId: {request_id} Error: cfnrun serve is stopping: the call was still running "
        f"after the {grace_s:g} s shutdown grace, so its worker was stopped",
    )
    return json.dumps(error.wire()).encode("utf-8"), dict(FUNCTION_ERROR)


def function_error(outcome: InvocationOutcome) -> Dict[str, Any]:
    request = outcome.request_id
    if outcome.kind is OutcomeKind.TIMED_OUT:
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        return LambdaError("Sandbox.Timedout", f"{stamp} {request} Task timed out after {outcome.timeout_s or 0:.2f} seconds").wire()
    if outcome.kind is OutcomeKind.WORKER_DIED:
        return LambdaError(
            outcome.error_type or "Runtime.ExitError",  # Runtime.OutOfMemory, say
            f"RequestId: {request} Error: Runtime exited: {outcome.error_message}",
        ).wire()
    error = outcome.error_body or {}
    error.pop("location", None)
    error.setdefault("stackTrace", [])
    error["requestId"] = request
    return error


def max_memory_used(outcome: InvocationOutcome) -> str:
    """The REPORT line's ``Max Memory Used: N MB`` and its tab (the worker's peak so far, in MB rounded up); empty when not known."""
    peak_kib = outcome.peak_kib
    return "" if peak_kib is None else f"Max Memory Used: {-(-peak_kib // 1024)} MB\t"


def tail_log(outcome: InvocationOutcome, memory_mb: int) -> str:
    """``X-Amz-Log-Result``: base64 of the last 4 KB of the call's log, framed like Lambda's."""
    request = outcome.request_id
    logs = outcome.logs if outcome.logs.endswith("\n") or not outcome.logs else outcome.logs + "\n"
    text = (
        f"START RequestId: {request} Version: $LATEST\n"
        f"{logs}"
        f"END RequestId: {request}\n"
        f"REPORT RequestId: {request}\tDuration: {outcome.duration_ms:.2f} ms\t"
        f"Billed Duration: {int(outcome.duration_ms) + 1} ms\tMemory Size: {memory_mb} MB\t{max_memory_used(outcome)}\n"
    )
    return base64.b64encode(text.encode("utf-8")[-TAIL_BYTES:]).decode("ascii")
