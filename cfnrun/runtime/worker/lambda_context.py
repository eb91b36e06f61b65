"""The ``context`` a handler receives, as AWS Lambda's Python runtime builds it.

The sandbox's identity (function name, ARN, memory, log stream) is fixed when the sandbox
loads its handler; only the request id and the deadline change per call. cfnrun computes
the identity and the deadline and sends them in frames; the worker builds the context.
"""
from __future__ import annotations

import time
from typing import Any, Dict


def function_arn(region: str, account_id: str, function_name: str) -> str:
    return f"arn:aws:lambda:{region}:{account_id}:function:{function_name}"


def sandbox_identity(function_name: str, function_arn: str, memory_mb: int, log_stream_name: str) -> Dict[str, Any]:
    """The LambdaContext fields that stay the same for every call a sandbox serves."""
    return {
        "function_name": function_name,
        "invoked_function_arn": function_arn,
        "memory_limit_in_mb": memory_mb,
        "log_group_name": f"/aws/lambda/{function_name}",
        "log_stream_name": log_stream_name,
    }


def deadline_ms(timeout_s: float) -> int:
    """The wall-clock deadline of a call, as get_remaining_time_in_millis counts it."""
    return int((time.time() + timeout_s) * 1000)


class LambdaContext:
    """The context object AWS Lambda's Python runtime hands to a handler."""

    def __init__(self, identity: Dict[str, Any], aws_request_id: str, deadline_ms: int) -> None:
        self.function_name: str = identity["function_name"]
        self.function_version: str = "$LATEST"
        self.invoked_function_arn: str = identity["invoked_function_arn"]
        self.memory_limit_in_mb: str = str(identity["memory_limit_in_mb"])
        self.aws_request_id = aws_request_id
        self.log_group_name: str = identity["log_group_name"]
        self.log_stream_name: str = identity["log_stream_name"]
        self.identity = None
        self.client_context = None
        self._deadline_ms = deadline_ms

    def get_remaining_time_in_millis(self) -> int:
        return max(0, self._deadline_ms - int(time.time() * 1000))
