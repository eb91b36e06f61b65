"""A call in flight is followed live (its ticks, its output as it comes) only for observers that show it: serve's don't."""
from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional

from fakes import request, schema

from cfnrun.invoker import running_call
from cfnrun.invoker.clock import VirtualClock
from cfnrun.invoker.operation import Operation
from cfnrun.model.protocol import Action
from cfnrun.runtime.logs import OUTPUT_TAP
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind


class Watching:
    """A target that notes, during each call, whether the call's output is tapped and whether it is ticked."""

    def __init__(self) -> None:
        self.seen: List[Dict[str, Any]] = []

    async def invoke(self, event: Any, timeout_s: float, request_id: Optional[str] = None) -> InvocationOutcome:
        ticked = running_call._ticker()._calls
        self.seen.append({"tapped": OUTPUT_TAP.get() is not None, "ticked": len(ticked)})
        status = "IN_PROGRESS" if len(self.seen) < 2 else "SUCCESS"
        answer = {"status": status, "resourceModel": {"Name": "a", "Id": "t-1"}, "callbackDelaySeconds": 1 if status == "IN_PROGRESS" else 0}
        return InvocationOutcome(OutcomeKind.RETURNED, request_id or "r", 1.0, result=answer)


def _run(live: bool) -> "tuple[Any, Watching]":
    target = Watching()
    operation = Operation(target, request(Action.CREATE, {"Name": "a"}), schema(), "TypeFunction", clock=VirtualClock(), live=live)
    return asyncio.run(operation.run()), target


def test_a_live_operation_taps_and_ticks_each_call_and_one_that_is_not_does_neither_with_the_same_result() -> None:
    followed, live = _run(live=True)
    quiet, not_live = _run(live=False)
    assert live.seen == [{"tapped": True, "ticked": 1}] * 2
    assert not_live.seen == [{"tapped": False, "ticked": 0}] * 2
    assert (quiet.status, quiet.invocations, quiet.resource_model) == (followed.status, followed.invocations, followed.resource_model)
