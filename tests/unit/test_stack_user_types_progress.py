"""A resource operation's IN_PROGRESS answers name the resource to its stack once: at the first that carries its identifier."""
from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional

from cfnrun.app.stacks.user_types import UserTypes
from cfnrun.events.operation import InvocationCompleted, OperationResult
from cfnrun.invoker.clock import RealClock, VirtualClock
from cfnrun.model.endings import EndReason
from cfnrun.model.protocol import Action, OperationStatus, parse_progress_event
from cfnrun.model.schema import ResourceSchema
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.stacks.provisioning import Provisioned, ResourceWork, StackContext

SCHEMA = ResourceSchema({
    "typeName": "Cfnrun::Test::Thing",
    "properties": {"Name": {"type": "string"}, "Id": {"type": "string"}, "Status": {"type": "string"}},
    "readOnlyProperties": ["/properties/Id", "/properties/Status"],
    "primaryIdentifier": ["/properties/Id"],
})
ANSWERS: List[Dict[str, Any]] = [
    {"status": "IN_PROGRESS", "resourceModel": {"Name": "a"}, "callbackContext": {"n": 1}, "callbackDelaySeconds": 1},  # no id yet
    {"status": "IN_PROGRESS", "resourceModel": {"Name": "a", "Id": "t-1", "Status": "MAKING"}, "callbackContext": {"n": 2}, "callbackDelaySeconds": 1},
    {"status": "IN_PROGRESS", "resourceModel": {"Name": "a", "Id": "t-1", "Status": "STILL"}, "callbackContext": {"n": 3}, "callbackDelaySeconds": 1},
    {"status": "SUCCESS", "resourceModel": {"Name": "a", "Id": "t-1", "Status": "DONE"}},
]


class ScriptedOperation:
    def __init__(self, observers: List[Any]) -> None:
        self.observers = observers

    async def run(self) -> OperationResult:
        for number, answer in enumerate(ANSWERS, 1):
            outcome = InvocationOutcome(OutcomeKind.RETURNED, f"r{number}", 1.0, result=answer)
            for observer in self.observers:
                observer(InvocationCompleted(number, outcome, parse_progress_event(answer), None, 0.0))
        return OperationResult(Action.CREATE, OperationStatus.SUCCESS, EndReason.HANDLER, "", len(ANSWERS), 0.0, resource_model=ANSWERS[-1]["resourceModel"])


class Operations:
    def schema(self, type_name: str) -> Optional[ResourceSchema]:
        return SCHEMA

    def new_clock(self) -> RealClock:
        return VirtualClock()

    def operation(self, *args: Any, observers: List[Any], **kwargs: Any) -> ScriptedOperation:
        return ScriptedOperation(observers)


def _told(physical_id: Optional[str]) -> List[Any]:
    told: List[Any] = []
    work = ResourceWork(
        StackContext("stack-id", "stack", "us-east-1", "123456789012"), "Thing", "Cfnrun::Test::Thing", {"Name": "a"},
        physical_id=physical_id, progress=lambda made, context: told.append((made.physical_id, made.model, context)),
    )
    made: Provisioned = asyncio.run(UserTypes(Operations()).create(work))  # type: ignore[arg-type]
    assert made.physical_id == "t-1" and made.model == {"Name": "a", "Id": "t-1", "Status": "DONE"}
    return told


def test_the_first_in_progress_answer_with_an_identifier_names_the_resource_and_the_later_ones_do_not() -> None:
    assert _told(None) == [("t-1", {"Name": "a", "Id": "t-1", "Status": "MAKING"}, {"n": 2})]


def test_a_resource_the_stack_knows_already_is_not_named_again() -> None:
    assert _told("t-0") == []
