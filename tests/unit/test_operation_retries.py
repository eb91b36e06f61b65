"""Retriable error codes: the same request again, with bounded backoff, on the operation's clock."""
from __future__ import annotations

import asyncio
import io
from typing import Any, List

import pytest
from fakes import FakeTarget, Script, request, schema

from cfnrun.invoker.clock import VirtualClock
from cfnrun.events.operation import OperationEvent, Retrying
from cfnrun.model.endings import EndReason
from cfnrun.invoker.operation import Operation
from cfnrun.invoker.retries import NO_RETRY, RetryPolicy
from cfnrun.model.budgets import Budgets
from cfnrun.model.protocol import Action
from cfnrun.ui.ndjson import NdjsonRenderer
from cfnrun.ui.timeline import TimelineRenderer


def failed(code: str) -> dict:
    return {"status": "FAILED", "errorCode": code, "message": f"{code} from the service"}


def run(answers: Any, retry: RetryPolicy = RetryPolicy(), budgets: Budgets = Budgets(), observers: Any = None) -> Any:
    clock = VirtualClock()
    target = FakeTarget(answers, clock)
    seen: List[OperationEvent] = []
    operation = Operation(
        target, request(Action.CREATE, {"Name": "a"}), schema(), "TypeFunction", budgets=budgets, clock=clock,
        observers=[seen.append, *(observers or [])], retry=retry,
    )
    return asyncio.run(operation.run()), target, seen


def test_a_retriable_failure_is_sent_again_unchanged_with_growing_backoff() -> None:
    answers = Script(failed("Throttling"), failed("NetworkFailure"), {"status": "SUCCESS", "resourceModel": {"Id": "t", "Name": "a"}})
    result, target, seen = run(answers)
    assert (result.status, result.invocations) == ("SUCCESS", 3)
    assert target.events[0] == target.events[1] == target.events[2]  # the same request, token and all
    retries = [e for e in seen if isinstance(e, Retrying)]
    assert [(r.retry, r.error_code, r.delay_s) for r in retries] == [(1, "Throttling", 1.0), (2, "NetworkFailure", 2.0)]
    assert 3.0 <= result.elapsed_s < 3.5  # the backoff counts on the virtual clock, without being waited


def test_when_retries_run_out_the_last_answer_ends_the_operation() -> None:
    result, target, _ = run(lambda event: failed("ServiceInternalError"))
    assert (result.status, result.error_code, result.invocations) == ("FAILED", "ServiceInternalError", 4)
    assert "sent 3 more time(s) with backoff" in (result.hint or "")


def test_terminal_codes_and_no_retry_fail_at_the_first_answer() -> None:
    for code in ("NotStabilized", "AlreadyExists", "InternalFailure"):
        result, _, _ = run(Script(failed(code)))
        assert (result.status, result.invocations, result.reason) == ("FAILED", 1, EndReason.HANDLER)
    result, _, seen = run(Script(failed("ResourceConflict")), retry=NO_RETRY)
    assert (result.invocations, result.hint) == (1, None)
    assert not [e for e in seen if isinstance(e, Retrying)]


def test_backoff_stops_at_the_operation_timeout() -> None:
    budgets = Budgets(operation_timeout_s=2.5)
    result, _, seen = run(lambda event: failed("Throttling"), budgets=budgets)
    delays = [r.delay_s for r in seen if isinstance(r, Retrying)]
    assert delays == [1.0, pytest.approx(1.5, abs=0.05)]  # the second wait is cut to what is left
    assert (result.status, result.reason, result.invocations) == ("FAILED", EndReason.OPERATION_TIMEOUT, 2)


def test_retries_show_in_the_timeline_and_the_json_stream() -> None:
    timeline, stream = io.StringIO(), io.StringIO()
    answers = Script(failed("Throttling"), {"status": "SUCCESS", "resourceModel": {"Id": "t", "Name": "a"}})
    run(answers, observers=[TimelineRenderer(timeline, schema()), NdjsonRenderer(stream, schema())])
    assert "↻ Throttling is retriable: retry 1/3 as #2, the same request after 1 s" in timeline.getvalue()
    assert '"event": "retry", "next": 2, "retry": 1, "retries": 3, "errorCode": "Throttling", "delaySeconds": 1.0' in stream.getvalue()
