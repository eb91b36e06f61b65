"""Lambda's error body (``errorType``, ``errorMessage``, ``stackTrace``...) as one typed value.

Workers, in-process mode and a Lambda Invoke API all produce this body as JSON; the parent
parses it once, here, and everything above reads fields, not dictionary keys. ``wire()`` gives
the body back (for NDJSON, history and serve's answers). The worker package keeps writing
plain dicts: it runs under any interpreter and imports nothing of cfnrun.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple

_KNOWN = ("errorType", "errorMessage", "stackTrace", "location")


@dataclass(frozen=True)
class LambdaError:
    error_type: str
    message: str
    stack_trace: Optional[Tuple[str, ...]] = None  # None: the body carried none
    location: Optional[str] = None  # file:line, for a worker's init errors
    # other keys a remote function's body carried (requestId, say), kept as they came
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_wire(cls, body: Any) -> "LambdaError":
        """Parse an error body; anything but a JSON object is an ``Unhandled`` error with that text."""
        if not isinstance(body, dict):
            return cls("Unhandled", str(body))
        stack = body.get("stackTrace")
        if isinstance(stack, list):
            stack_trace: Optional[Tuple[str, ...]] = tuple(str(line) for line in stack)
        else:
            stack_trace = None if stack is None else (str(stack),)
        location = body.get("location")
        return cls(
            error_type=str(body.get("errorType", "")),
            message=str(body.get("errorMessage", "")),
            stack_trace=stack_trace,
            location=None if location is None else str(location),
            extra={key: value for key, value in body.items() if key not in _KNOWN},
        )

    def wire(self) -> Dict[str, Any]:
        """The JSON body, as Lambda writes it."""
        body: Dict[str, Any] = {"errorType": self.error_type, "errorMessage": self.message}
        if self.stack_trace is not None:
            body["stackTrace"] = list(self.stack_trace)
        if self.location is not None:
            body["location"] = self.location
        body.update(self.extra)
        return body
