"""What one invocation of a function produced, as seen from outside the worker."""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from cfnrun.runtime.lambda_error import LambdaError


class OutcomeKind(str, enum.Enum):
    RETURNED = "returned"  # the handler returned a JSON value
    FUNCTION_ERROR = "function_error"  # the handler raised, or returned something JSON cannot carry
    TIMED_OUT = "timed_out"  # cut at its deadline; the worker was killed
    WORKER_DIED = "worker_died"  # sys.exit, os._exit, a signal: the sandbox is gone
    INIT_ERROR = "init_error"  # the provider could not be imported


@dataclass
class InvocationOutcome:
    kind: OutcomeKind
    request_id: str
    duration_ms: float
    logs: str = ""
    result: Any = None
    error: Optional[LambdaError] = None
    timeout_s: Optional[float] = None
    note: Optional[str] = None  # something the user should know about this call, e.g. a debugger
    # --inject faults that fired during the call: {"rule", "call" (service:Operation), "count", "status"}
    faults: List[Dict[str, Any]] = field(default_factory=list)
    peak_kib: Optional[int] = None  # the worker's peak resident set size so far (its reply says): Max Memory Used

    @property
    def error_type(self) -> str:
        return self.error.error_type if self.error is not None else ""

    @property
    def error_message(self) -> str:
        return self.error.message if self.error is not None else ""

    @property
    def error_body(self) -> Optional[Dict[str, Any]]:
        """The error as Lambda's JSON body, if there is one."""
        return self.error.wire() if self.error is not None else None
