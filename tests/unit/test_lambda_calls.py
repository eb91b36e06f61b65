"""Serve's Lambda call policy without HTTP or workers: what it answers, what it notes, when it reviews."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

from cfnrun.api.lambda_api import LambdaAnswer, LambdaCall
from cfnrun.api.service_errors import ServiceError
from cfnrun.app.lambda_calls import LambdaCallPolicy
from cfnrun.app.late_parts import LateLoading, LateParts
from cfnrun.app.served import Served
from cfnrun.contract import violations as rules
from cfnrun.contract.mode import ContractMode
from cfnrun.contract.violations import Violation
from cfnrun.model.budgets import Budgets
from cfnrun.model.action import Action
from cfnrun.model.seen_call import SeenCall
from cfnrun.model.template import FunctionSpec
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.registry import ServedFunction
from cfnrun.runtime.spec import RuntimeSettings

FUNCTION = FunctionSpec("TypeFunction", "handlers.resource")  # no Timeout: the contract budget cuts a call first
LIST_PAGE_2 = {"action": "LIST", "request": {"clientRequestToken": "t", "desiredResourceState": {}, "nextToken": "page-2"}}
CREATE = {"action": "CREATE", "request": {"clientRequestToken": "t", "desiredResourceState": {}}}


Answer = Callable[[Any, float, str], Any]  # an InvocationOutcome, or a coroutine for one


class FakePool:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer

    async def invoke(self, payload: Any, timeout_s: float, request_id: str, payload_json: Optional[bytes] = None) -> InvocationOutcome:
        await asyncio.sleep(0)
        outcome = self.answer(payload, timeout_s, request_id)
        return await outcome if asyncio.iscoroutine(outcome) else outcome


@dataclass
class FakeRegistry:
    fake_pool: FakePool

    def pool(self, function: FunctionSpec) -> FakePool:
        return self.fake_pool


@dataclass
class FakeReview:
    """Records what it was asked to report; ``violations`` are what its checks find."""

    violations: List[Violation] = field(default_factory=list)
    reported: List[Tuple[Any, List[str], Optional[List[Violation]]]] = field(default_factory=list)

    def check(self, function: ServedFunction, call: Any, result: Any, output: str = "") -> List[Violation]:
        return list(self.violations)

    def report(self, function: ServedFunction, call: Any, outcome: InvocationOutcome, notes: List[str], limit: Any, violations: Optional[List[Violation]] = None) -> None:
        self.reported.append((outcome.result if outcome.kind is OutcomeKind.RETURNED else outcome.kind, list(notes), violations))


def returns(result: Dict[str, Any]) -> Callable[[Any, float, str], InvocationOutcome]:
    return lambda payload, timeout_s, request_id: InvocationOutcome(OutcomeKind.RETURNED, request_id, 1.0, result=result)


class FakeCalls(LambdaCallPolicy):
    """The policy, and the fake registry its calls' function runs on."""

    def __init__(self, answer: Answer, contract: ContractMode, late: LateLoading) -> None:
        super().__init__(Served([], [], RuntimeSettings(), Budgets()), contract, late)
        self.fake_registry = FakeRegistry(FakePool(answer))


def policy(answer: Answer, contract: ContractMode = ContractMode.WARN, review: Optional[FakeReview] = None) -> Tuple[FakeCalls, LateLoading]:
    late = LateLoading()
    if review is not None:
        late.parts = LateParts(review, None, {}, None)  # type: ignore[arg-type]
    return FakeCalls(answer, contract, late), late


def call(calls: FakeCalls, payload: Any, request_id: str = "r-1") -> LambdaCall:
    """A call of the type's TypeFunction, run by the fake pool of ``calls``."""
    function = ServedFunction("TypeFunction", FUNCTION, calls.fake_registry, "Cfnrun::Sample::Note")  # type: ignore[arg-type]
    return LambdaCall(function, payload, None, request_id)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_list_handing_back_its_token_is_noted_then_stopped_at_the_limit() -> None:
    async def scenario() -> List[LambdaAnswer]:
        calls, _ = policy(returns({"status": "SUCCESS", "resourceModels": [], "nextToken": "page-2"}), review=review)
        answers = [await calls.invoke(call(calls, LIST_PAGE_2)) for _ in range(3)]
        await settle()
        return answers

    review = FakeReview()
    answers = asyncio.run(scenario())
    assert [a.outcome.result["status"] for a in answers if a.outcome] == ["SUCCESS", "SUCCESS", "FAILED"]
    assert [notes[0].split(" ")[0] for _, notes, _ in review.reported] == ["LOOP?", "LOOP?", "LOOP"]
    assert answers[2].outcome is not None and answers[2].outcome.result["message"].startswith("cfnrun stopped a paging loop")


def test_strict_answers_failed_when_the_handler_breaks_the_contract() -> None:
    broken = Violation(rules.STATUS_VALID, "status is DONE")
    review = FakeReview([broken])

    async def scenario() -> LambdaAnswer:
        calls, _ = policy(returns({"status": "DONE"}), ContractMode.STRICT, review)
        answer = await calls.invoke(call(calls, CREATE))
        await settle()
        return answer

    answer = asyncio.run(scenario())
    assert answer.outcome is not None and answer.outcome.result["status"] == "FAILED"
    assert answer.outcome.result["message"] == f"cfnrun --contract strict: the handler broke the contract: {broken.line()}"
    assert review.reported == [({"status": "DONE"}, [], [broken])]  # reviewed with the handler's own answer


def test_a_timed_out_call_is_noted_as_a_contract_breach() -> None:
    review = FakeReview()

    async def scenario() -> None:
        calls, _ = policy(lambda payload, timeout_s, request_id: InvocationOutcome(OutcomeKind.TIMED_OUT, request_id, 1.0, timeout_s=timeout_s), review=review)
        await calls.invoke(call(calls, CREATE))
        await settle()

    asyncio.run(scenario())
    [(_, notes, _)] = review.reported
    assert notes[0].startswith("contract breach: no answer within") and notes[0].endswith("the worker was killed and replaced")


def test_calls_answered_before_the_review_loads_are_reviewed_once_it_has_in_order() -> None:
    review = FakeReview()

    async def scenario() -> Tuple[List[Any], List[Any]]:
        calls, late = policy(lambda payload, timeout_s, request_id: InvocationOutcome(OutcomeKind.RETURNED, request_id, 1.0, result={"n": payload["n"]}))
        loading: "asyncio.Future[LateParts]" = asyncio.get_running_loop().create_future()
        late.task = loading  # type: ignore[assignment]
        for n in range(3):
            await calls.invoke(call(calls, {"n": n}, f"r-{n}"))
        await settle()
        before = list(review.reported)
        late.parts = LateParts(review, None, {}, None)  # type: ignore[arg-type]
        loading.set_result(late.parts)
        await settle()
        return before, review.reported

    before, after = asyncio.run(scenario())
    assert before == []
    assert [result for result, _, _ in after] == [{"n": 0}, {"n": 1}, {"n": 2}]


def test_a_strict_call_waiting_for_the_checker_is_told_serve_stops_when_it_never_loads() -> None:
    async def scenario() -> ServiceError:
        calls, late = policy(returns({"status": "SUCCESS"}), ContractMode.STRICT)
        late.task = asyncio.ensure_future(asyncio.sleep(60))  # type: ignore[assignment]
        waiting = asyncio.ensure_future(calls.invoke(call(calls, CREATE)))
        await settle()
        await late.finish(0.0)
        with pytest.raises(ServiceError) as raised:
            await waiting
        return raised.value

    error = asyncio.run(scenario())
    assert (error.status, error.message) == (503, "cfnrun serve is stopping: it stopped before its contract checks loaded")


def test_a_call_still_running_after_the_grace_is_answered_with_the_shutdown() -> None:
    review = FakeReview()

    async def scenario() -> Tuple[int, LambdaAnswer]:
        release = asyncio.Event()

        async def died(payload: Any, timeout_s: float, request_id: str) -> InvocationOutcome:
            await release.wait()
            return InvocationOutcome(OutcomeKind.WORKER_DIED, request_id, 1.0)

        calls, _ = policy(died, review=review)
        running = asyncio.ensure_future(calls.invoke(call(calls, CREATE)))
        await settle()
        still = await calls.finish(10.0, 0.0)
        release.set()  # its worker is stopped: the call ends
        answer = await running
        await settle()
        return still, answer

    still, answer = asyncio.run(scenario())
    assert still == 1 and answer.shutdown_grace_s == 10.0
    [(_, notes, _)] = review.reported
    assert notes == ["serve is stopping: still running after the 10 s shutdown grace; answered with Runtime.ExitError"]


def test_calls_answered_in_one_turn_are_reviewed_after_it_by_one_callback_in_order_even_when_one_review_fails() -> None:
    class FailingOnce(FakeReview):
        def report(self, function: ServedFunction, call: Any, outcome: InvocationOutcome, notes: List[str], limit: Any, violations: Optional[List[Violation]] = None) -> None:
            if outcome.result == {"n": 1}:
                raise RuntimeError("a fault in one review")
            super().report(function, call, outcome, notes, limit, violations)

    review = FailingOnce()
    failures: List[str] = []

    async def scenario() -> Tuple[int, List[Any]]:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _, context: failures.append(str(context.get("exception"))))
        answer = asyncio.Event()

        async def together(payload: Any, timeout_s: float, request_id: str) -> InvocationOutcome:
            await answer.wait()
            return InvocationOutcome(OutcomeKind.RETURNED, request_id, 1.0, result={"n": payload["n"]})

        calls, _ = policy(together, review=review)
        running = [asyncio.ensure_future(calls.invoke(call(calls, {"n": n}, f"r-{n}"))) for n in range(3)]
        await settle()
        reviews_scheduled = 0
        call_soon = loop.call_soon

        def counted(callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            nonlocal reviews_scheduled
            reviews_scheduled += "report" in getattr(callback, "__name__", "")
            return call_soon(callback, *args, **kwargs)

        loop.call_soon = counted  # type: ignore[method-assign]
        answer.set()  # each call's waiter is woken in this turn; the calls end in the next, together
        await asyncio.wait(running)
        loop.call_soon = call_soon  # type: ignore[method-assign]
        await settle()
        return reviews_scheduled, review.reported

    reviews_scheduled, reported = asyncio.run(scenario())
    assert [result for result, _, _ in reported] == [{"n": 0}, {"n": 2}]
    assert failures == ["a fault in one review"]
    assert reviews_scheduled == 2  # one for the three, one more for the call after the review that failed


def test_an_event_call_runs_until_it_ends_for_the_shutdown_grace() -> None:
    review = FakeReview()

    async def scenario() -> Tuple[int, int]:
        release = asyncio.Event()

        async def slow(payload: Any, timeout_s: float, request_id: str) -> InvocationOutcome:
            await release.wait()
            return InvocationOutcome(OutcomeKind.RETURNED, request_id, 1.0, result={"status": "SUCCESS"})

        calls, _ = policy(slow, review=review)
        calls.invoke_event(call(calls, CREATE))
        still_before_it_starts = await calls.finish(10.0, 0.0)
        calls._grace_expired = None  # the test asks twice
        release.set()
        still_after = await calls.finish(10.0, 5.0)  # it ends within the grace: the wait returns when it has
        return still_before_it_starts, still_after

    before, after = asyncio.run(scenario())
    assert (before, after) == (1, 0)


def test_a_warn_call_is_answered_before_it_is_parsed_and_reviewed_as_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: List[Any] = []
    parse = SeenCall.parse.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(SeenCall, "parse", classmethod(lambda cls, payload: parsed.append(payload) or parse(cls, payload)))
    seen: List[SeenCall] = []

    class Review(FakeReview):
        def report(self, function: ServedFunction, call: Any, outcome: InvocationOutcome, notes: List[str], limit: Any, violations: Optional[List[Violation]] = None) -> None:
            seen.append(call)

    async def scenario() -> Tuple[List[int], List[Optional[Dict[str, Any]]]]:
        calls, _ = policy(returns({"status": "SUCCESS", "resourceModels": []}), review=Review())
        parsed_when_answered, answers = [], []
        for payload in (LIST_PAGE_2, CREATE):
            answers.append(await calls.invoke(call(calls, payload)))
            parsed_when_answered.append(len(parsed))  # the review of the call before runs while this one waits for its worker
        await settle()
        return parsed_when_answered, [answer.outcome.result if answer.outcome else None for answer in answers]

    parsed_when_answered, results = asyncio.run(scenario())
    assert parsed_when_answered == [0, 1] and results == [{"status": "SUCCESS", "resourceModels": []}] * 2
    assert seen == [SeenCall.parse(LIST_PAGE_2), SeenCall.parse(CREATE)]
    assert seen[0].next_token == "page-2" and seen[1].action is Action.CREATE


def test_a_list_handing_back_another_token_makes_progress() -> None:
    review = FakeReview()

    async def scenario() -> List[LambdaAnswer]:
        calls, _ = policy(returns({"status": "SUCCESS", "resourceModels": [], "nextToken": "page-3"}), review=review)
        answers = [await calls.invoke(call(calls, LIST_PAGE_2)) for _ in range(4)]
        await settle()
        return answers

    answers = asyncio.run(scenario())
    assert [a.outcome.result["status"] for a in answers if a.outcome] == ["SUCCESS"] * 4
    assert [notes for _, notes, _ in review.reported] == [[]] * 4


def test_a_call_is_cut_at_its_actions_budget_looked_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    looked_up: List[Optional[Action]] = []
    limit = Served.limit
    monkeypatch.setattr(Served, "limit", lambda self, function, action: looked_up.append(action) or limit(self, function, action))
    timeouts: List[float] = []

    def answer(payload: Any, timeout_s: float, request_id: str) -> InvocationOutcome:
        timeouts.append(timeout_s)
        return InvocationOutcome(OutcomeKind.RETURNED, request_id, 1.0, result={"status": "SUCCESS"})

    async def scenario() -> None:
        calls, _ = policy(answer, review=FakeReview())
        await calls.invoke(call(calls, CREATE))
        await settle()

    asyncio.run(scenario())
    assert looked_up == [Action.CREATE] and timeouts == [Budgets().call(Action.CREATE, None).seconds]
