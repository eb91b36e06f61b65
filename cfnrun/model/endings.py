"""Why an operation ended: the invoker decides, the contract maps some endings to rules, views explain them."""
from __future__ import annotations

import enum


class EndReason(str, enum.Enum):
    """Why an operation ended; ``HANDLER`` means the handler's own terminal event."""

    HANDLER = "handler"
    INVOCATION_BUDGET = "invocation-budget-exceeded"
    OPERATION_TIMEOUT = "operation-timeout"
    FUNCTION_ERROR = "function-error"
    WORKER_DIED = "worker-died"
    INIT_ERROR = "init-error"
    INVALID_RESPONSE = "invalid-progress-event"
    IN_PROGRESS_NOT_ALLOWED = "in-progress-not-allowed"
    PAGINATION_LOOP = "list-pagination-loop"
    REINVOKE_LIMIT = "reinvoke-limit"
    NO_PROGRESS = "no-progress"  # the same IN_PROGRESS, with no delay, again and again
    CONTRACT_VIOLATION = "contract-violation"  # --contract strict
    INTERRUPTED = "interrupted"  # stopped from outside (Ctrl-C, serve stopping) while the operation went on


# What a LIST that hands back the token it was called with means: the invoker and serve both say it.
PAGINATION_LOOP_HINT = (
    "cloudformation_cli_python_lib's production entrypoint (Resource.__call__) does not pass "
    "the request's nextToken to the handler, so a LIST handler that pages gets the first "
    "page again on every call. Return all models with nextToken null, or read the token "
    "through the test entrypoint."
)
