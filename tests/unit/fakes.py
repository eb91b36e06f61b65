"""Stand-ins for what the fast layer keeps out: worker processes and real time.

``FakeTarget`` speaks the invoke protocol the Operation drives (``invoke(event, timeout_s)``
→ InvocationOutcome). Each call asks a Python function for its answer: a ProgressEvent
dict, an ``InvocationOutcome`` (an error, a crash), or ``Takes(seconds, answer)`` for a
call that runs that long on the operation's clock, cut at its deadline like a worker is.
"""
from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from cfnrun.invoker.clock import VirtualClock
from cfnrun.invoker.payloads import Entrypoint, OperationRequest
from cfnrun.invoker.request_files import OperationInput
from cfnrun.model.protocol import Action
from cfnrun.model.schema import ResourceSchema
from cfnrun.runtime.lambda_error import LambdaError
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind



@dataclass
class Takes:
    """An answer that the handler needs ``seconds`` to give."""

    seconds: float
    answer: Any


class FakeTarget:
    def __init__(self, answer: Callable[[Dict[str, Any]], Any], clock: VirtualClock) -> None:
        self._answer = answer
        self._clock = clock
        self.events: List[Dict[str, Any]] = []  # what each call received
        self.timeouts: List[float] = []  # the deadline each call was given

    async def invoke(self, event: Any, timeout_s: float, request_id: Optional[str] = None) -> InvocationOutcome:
        request_id = request_id or str(uuid.uuid4())
        self.events.append(copy.deepcopy(event))
        self.timeouts.append(timeout_s)
        answer = self._answer(event)
        seconds = 0.0
        if isinstance(answer, Takes):
            seconds, answer = answer.seconds, answer.answer
        if seconds > timeout_s:
            await self._clock.sleep(timeout_s)
            return InvocationOutcome(OutcomeKind.TIMED_OUT, request_id, timeout_s * 1000, timeout_s=timeout_s)
        await self._clock.sleep(seconds)
        if isinstance(answer, InvocationOutcome):
            return answer
        return InvocationOutcome(OutcomeKind.RETURNED, request_id, seconds * 1000, result=answer)


class Script:
    """Answers in order, one per call: the shape of most operations under test."""

    def __init__(self, *answers: Any) -> None:
        self._answers = list(answers)

    def __call__(self, event: Dict[str, Any]) -> Any:
        assert self._answers, f"called more often than scripted; last event: {event}"
        return self._answers.pop(0)


class InstantClock(VirtualClock):
    """Real-time waits (countdown ticks and all) that take no time in the test."""

    virtual = False


def schema(handlers: Optional[Dict[str, Any]] = None) -> ResourceSchema:
    return ResourceSchema(
        {
            "typeName": "Cfnrun::Unit::Thing",
            "properties": {"Id": {"type": "string"}, "Name": {"type": "string"}, "Secret": {"type": "string"}},
            "primaryIdentifier": ["/properties/Id"],
            "readOnlyProperties": ["/properties/Id"],
            "writeOnlyProperties": ["/properties/Secret"],
            "additionalProperties": False,
            "handlers": handlers if handlers is not None else {"create": {"permissions": []}},
        }
    )


def request(action: Action, desired: Optional[Dict[str, Any]] = None, previous: Optional[Dict[str, Any]] = None) -> OperationRequest:
    return OperationRequest(
        action=action,
        type_name="Cfnrun::Unit::Thing",
        region="us-east-1",
        account_id="123456789012",
        entrypoint=Entrypoint.TYPE,
        operation=OperationInput(desired=desired or {}, previous=previous),
    )


def error_outcome(kind: OutcomeKind, error_type: str, message: str) -> InvocationOutcome:
    return InvocationOutcome(kind, "req", 1.0, error=LambdaError(error_type, message, ()))
