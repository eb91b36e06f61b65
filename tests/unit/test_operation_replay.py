"""The Operation's replay logic against a fake target, on the virtual clock: milliseconds per test."""
from __future__ import annotations

import asyncio
import io
from typing import Any, Dict, List, Optional

from fakes import FakeTarget, InstantClock, Script, Takes, error_outcome, request, schema

from cfnrun.invoker.clock import VirtualClock
from cfnrun.events.operation import OperationEvent, OperationResult, Waiting, WaitTick
from cfnrun.model.endings import EndReason
from cfnrun.invoker.operation import EMPTY_INTERNAL_FAILURE_HINT, Operation
from cfnrun.model.endings import PAGINATION_LOOP_HINT
from cfnrun.model.budgets import Budgets
from cfnrun.model.protocol import Action
from cfnrun.runtime.outcome import OutcomeKind
from cfnrun.ui.timeline import TimelineRenderer


def run(
    action: Action,
    answer: Any,
    clock: Optional[VirtualClock] = None,
    budgets: Budgets = Budgets(),
    handlers: Optional[Dict[str, Any]] = None,
    max_reinvoke: Optional[int] = None,
    observers: Optional[List[Any]] = None,
    desired: Optional[Dict[str, Any]] = None,
) -> "tuple[OperationResult, FakeTarget]":
    clock = clock or VirtualClock()
    target = FakeTarget(answer, clock)
    operation = Operation(
        target, request(action, desired), schema(handlers), "TypeFunction", budgets=budgets, clock=clock,
        observers=observers, max_reinvoke=max_reinvoke,
    )
    return asyncio.run(operation.run()), target


def in_progress(context: Dict[str, Any], delay: int, model: Dict[str, Any]) -> Dict[str, Any]:
    return {"status": "IN_PROGRESS", "callbackContext": context, "callbackDelaySeconds": delay, "resourceModel": model}


def test_in_progress_is_replayed_with_the_returned_context_and_model_until_success() -> None:
    answers = Script(
        in_progress({"stage": 1}, 30, {"Name": "a", "Id": "t-1"}),
        in_progress({"stage": 2}, 60, {"Name": "a", "Id": "t-1"}),
        {"status": "SUCCESS", "resourceModel": {"Name": "a", "Id": "t-1"}},
    )
    result, target = run(Action.CREATE, answers, desired={"Name": "a"})
    assert (result.status, result.reason, result.invocations) == ("SUCCESS", EndReason.HANDLER, 3)
    assert result.resource_model == {"Name": "a", "Id": "t-1"}
    assert [e.get("callbackContext") for e in target.events] == [None, {"stage": 1}, {"stage": 2}]
    assert [e["requestData"]["resourceProperties"] for e in target.events] == [
        {"Name": "a"}, {"Name": "a", "Id": "t-1"}, {"Name": "a", "Id": "t-1"}
    ]
    assert 90 <= result.elapsed_s < 91  # the waits were skipped but counted


def test_each_call_gets_the_contracts_response_budget() -> None:
    _, create = run(Action.CREATE, Script({"status": "SUCCESS", "resourceModel": {"Id": "t"}}))
    _, read = run(Action.READ, Script({"status": "SUCCESS", "resourceModel": {"Id": "t"}}))
    assert (create.timeouts, read.timeouts) == ([60.0], [30.0])


def test_a_call_over_its_budget_fails_the_operation_naming_the_budget() -> None:
    result, _ = run(Action.CREATE, Script(Takes(61, {"status": "SUCCESS"})))
    assert (result.status, result.reason) == ("FAILED", EndReason.INVOCATION_BUDGET)
    assert "invocation 1 did not return a ProgressEvent within the handler contract's 60 s response budget for CREATE" in result.message


def test_a_stabilization_that_never_ends_runs_into_the_schemas_timeout() -> None:
    forever = lambda event: in_progress({"n": 1}, 600, {"Id": "t"})  # noqa: E731
    result, target = run(Action.CREATE, forever, handlers={"create": {"permissions": [], "timeoutInMinutes": 30}})
    assert (result.reason, result.invocations) == (EndReason.OPERATION_TIMEOUT, 3)
    assert "handlers.create.timeoutInMinutes = 30" in result.message and result.elapsed_s >= 1800


def test_the_last_call_is_cut_at_what_is_left_of_the_operation() -> None:
    answers = Script(in_progress({"n": 1}, 100, {"Id": "t"}), Takes(50, {"status": "SUCCESS"}))
    result, target = run(Action.CREATE, answers, budgets=Budgets(operation_timeout_s=130))
    assert target.timeouts[0] == 60 and 29 < target.timeouts[1] < 31
    assert result.reason is EndReason.OPERATION_TIMEOUT and "during invocation 2" in result.message


def test_read_and_list_may_not_answer_in_progress() -> None:
    result, _ = run(Action.READ, Script(in_progress({}, 1, {"Id": "t"})))
    assert (result.status, result.reason) == ("FAILED", EndReason.IN_PROGRESS_NOT_ALLOWED)
    assert "READ handlers MUST return SUCCESS or FAILED" in result.message


def test_max_reinvoke_stops_the_replay_still_in_progress() -> None:
    forever = lambda event: in_progress({"n": 1}, 5, {"Id": "t"})  # noqa: E731
    result, target = run(Action.CREATE, forever, max_reinvoke=1)
    assert (result.status, result.reason, result.invocations) == ("IN_PROGRESS", EndReason.REINVOKE_LIMIT, 2)


def test_list_follows_pages_and_stops_a_page_that_repeats() -> None:
    pages = Script(
        {"status": "SUCCESS", "resourceModels": [{"Id": "a"}], "nextToken": "p2"},
        {"status": "SUCCESS", "resourceModels": [{"Id": "b"}]},
    )
    listed, target = run(Action.LIST, pages)
    assert listed.resource_models == [{"Id": "a"}, {"Id": "b"}]
    assert target.events[1]["nextToken"] == "p2"
    same = lambda event: {"status": "SUCCESS", "resourceModels": [{"Id": "a"}], "nextToken": "again"}  # noqa: E731
    looping, _ = run(Action.LIST, same)
    assert (looping.reason, looping.invocations, looping.hint) == (EndReason.PAGINATION_LOOP, 2, PAGINATION_LOOP_HINT)


def test_calls_that_end_without_an_event_fail_with_their_reason() -> None:
    cases = [
        (error_outcome(OutcomeKind.FUNCTION_ERROR, "KeyError", "'x'"), EndReason.FUNCTION_ERROR, "the function raised KeyError: 'x'"),
        (error_outcome(OutcomeKind.WORKER_DIED, "Runtime.ExitError", "worker process exited with status 3"), EndReason.WORKER_DIED,
         "the worker process exited with status 3 before returning a ProgressEvent"),
        (error_outcome(OutcomeKind.INIT_ERROR, "Runtime.ImportModuleError", "no module"), EndReason.INIT_ERROR, "no module"),
        ("not an event", EndReason.INVALID_RESPONSE, "the handler's response is not a ProgressEvent"),
    ]
    for answer, reason, message in cases:
        result, _ = run(Action.CREATE, Script(answer))
        assert (result.status, result.reason) == ("FAILED", reason)
        assert message in result.message


def test_an_empty_internal_failure_gets_the_support_library_hint() -> None:
    result, _ = run(Action.CREATE, Script({"status": "FAILED", "errorCode": "InternalFailure", "message": ""}))
    assert (result.error_code, result.hint) == ("InternalFailure", EMPTY_INTERNAL_FAILURE_HINT)


def test_real_time_waits_count_down_each_second() -> None:
    seen: List[OperationEvent] = []
    answers = Script(in_progress({"n": 1}, 3, {"Id": "t"}), {"status": "SUCCESS", "resourceModel": {"Id": "t"}})
    result, _ = run(Action.CREATE, answers, clock=InstantClock(), observers=[seen.append])
    waits = [e for e in seen if isinstance(e, (Waiting, WaitTick))]
    assert waits == [Waiting(2, 3, False), WaitTick(2.0), WaitTick(1.0), WaitTick(0.0)]
    assert result.status == "SUCCESS" and result.elapsed_s >= 3


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_live_countdown_is_erased_when_the_wait_ends() -> None:
    screen = Terminal()
    renderer = TimelineRenderer(screen, schema(), color=False)

    def answer(event: Dict[str, Any]) -> Any:
        if not event.get("callbackContext"):
            return in_progress({"n": 1}, 2, {"Id": "t"})
        answer.screen_during_call2 = screen.getvalue()  # type: ignore[attr-defined]
        return {"status": "SUCCESS", "resourceModel": {"Id": "t"}}

    run(Action.CREATE, answer, clock=InstantClock(), observers=[renderer])
    during = answer.screen_during_call2  # type: ignore[attr-defined]
    assert "next call in 1 s" in during
    assert during.endswith("\r\033[K")  # whatever call #2 prints starts on a clean line


def test_a_pipe_gets_one_waiting_line_per_wait() -> None:
    out = io.StringIO()
    answers = Script(in_progress({"n": 1}, 2, {"Id": "t"}), in_progress({"n": 2}, 2, {"Id": "t"}), {"status": "SUCCESS", "resourceModel": {"Id": "t"}})
    run(Action.CREATE, answers, clock=InstantClock(), observers=[TimelineRenderer(out, schema(), color=False)])
    assert out.getvalue().count("… waiting 2 s (CallbackDelaySeconds)") == 2
    assert "\r" not in out.getvalue()


def test_the_status_is_an_enum_and_every_view_writes_its_value() -> None:
    from cfnrun.events.encoding import decode, encode
    from cfnrun.events.masking import WriteOnlyMasking
    from cfnrun.events.operation import OperationCompleted
    from cfnrun.model.protocol import OperationStatus
    from cfnrun.ui.ndjson import NdjsonRenderer

    lines, timeline = io.StringIO(), io.StringIO()
    result, _ = run(
        Action.CREATE, Script({"status": "SUCCESS", "resourceModel": {"Id": "t"}}),
        observers=[NdjsonRenderer(lines, schema()), TimelineRenderer(timeline, schema(), color=False)],
    )
    assert result.status is OperationStatus.SUCCESS and result.succeeded
    assert '"status": "SUCCESS"' in lines.getvalue().splitlines()[-1]
    assert "SUCCESS CREATE" in timeline.getvalue() and "OperationStatus" not in timeline.getvalue()
    record = encode(OperationCompleted(result), WriteOnlyMasking(schema()))
    assert record is not None and record["status"] == "SUCCESS"
    decoded = decode(record)
    assert isinstance(decoded, OperationCompleted) and decoded.result.status is OperationStatus.SUCCESS
