"""Drive one operation the way CloudFormation does, from the first call to a terminal status.

While the handler answers IN_PROGRESS, wait CallbackDelaySeconds and call again with
the returned callbackContext and model. Cut any call that overruns its response
budget, end the operation at the schema's timeoutInMinutes, follow LIST pages, and
tell observers about every step. A FAILED answer with a retriable error code is sent
again, as the service does (see ``retries.py``).
"""
from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set

from cfnrun.model.budgets import Budget, Budgets
from cfnrun.model.endings import PAGINATION_LOOP_HINT
from cfnrun.invoker.choices import DEFAULT_STALL_LIMIT
from cfnrun.invoker.clock import RealClock
from cfnrun.events.operation import (
    ContractChecked,
    EndReason,
    InvocationCompleted,
    Observer,
    OperationCompleted,
    OperationEvent,
    OperationResult,
    OperationStarted,
    Retrying,
    Waiting,
    WaitTick,
)
from cfnrun.invoker.payloads import OperationRequest
from cfnrun.invoker.retries import RetryPolicy
from cfnrun.invoker.running_call import RunningCall
from cfnrun.model.protocol import Action, InvalidProgressEvent, OperationStatus, ProgressEvent
from cfnrun.model.failure_cause import failure_cause
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.target import Invocable
from cfnrun.model.schema import ResourceSchema

if TYPE_CHECKING:  # the checker (jsonschema) loads only where a contract is checked
    from cfnrun.contract.checker import ContractChecker
    from cfnrun.contract.violations import Violation

EMPTY_INTERNAL_FAILURE_HINT = (
    "FAILED InternalFailure with an empty message is what cloudformation_cli_python_lib "
    "returns when the handler raised an exception or returned a ProgressEvent it could not "
    "serialize (a Python set in the model, for instance, which uniqueItems arrays tempt). "
    "The handler's output above shows which."
)
UNHASHABLE_SET_HINT = (
    "models.py from cfn generate reads a uniqueItems array with set_or_none, i.e. into a Python set, "
    "and a set cannot hold objects (dicts): an array of objects marked uniqueItems in the schema fails "
    "in the support library before the handler runs. Drop uniqueItems from that array (use "
    "insertionOrder: false if order does not matter), or read it as a list in models.py."
)
NO_PROGRESS_HINT = (
    "CloudFormation would keep calling until timeoutInMinutes runs out. A handler that is "
    "waiting on something should return CallbackDelaySeconds (and usually a callbackContext); "
    "one that is done should return SUCCESS or FAILED. The stub DELETE handler that cfn init "
    "writes answers IN_PROGRESS forever until you fill it in. --keep-polling calls on until "
    "the operation times out."
)


class Operation:
    def __init__(
        self,
        target: Invocable,
        request: OperationRequest,
        schema: ResourceSchema,
        function_name: str,
        budgets: Budgets = Budgets(),
        function_timeout_s: Optional[float] = None,
        clock: Optional[RealClock] = None,
        observers: Optional[List[Observer]] = None,
        max_reinvoke: Optional[int] = None,
        checker: Optional[ContractChecker] = None,
        strict: bool = False,
        stall_limit: Optional[int] = DEFAULT_STALL_LIMIT,
        retry: RetryPolicy = RetryPolicy(),
        command: str = "the command",
        live: bool = True,
    ) -> None:
        self.target = target
        # observers shown a call in flight (a tick each second, its output as it comes: ``running_call.py``); serve's
        # observers show neither, so its calls, a thousand queued at once in a wide stack, skip that work
        self.live = live
        self.command = command  # what the user ran: a hint names its flags
        self._last_logs = ""  # the latest invocation's output: where an uncaught exception's traceback is
        self.request = request
        self.action: Action = request.action
        self.schema = schema
        self.function_name = function_name
        self.clock = clock or RealClock()
        self.observers = list(observers or [])
        self.max_reinvoke = max_reinvoke
        self.invocation_budget = budgets.invocation(self.action, function_timeout_s)
        self.operation_budget = budgets.operation(self.action, schema)
        self._started = 0.0
        self._invocations = 0
        self._models: List[Dict[str, Any]] = []
        self._tokens: Set[str] = set()
        self._last_page: Optional[str] = None
        self.checker = checker
        self.strict = strict
        self._violations: List[Violation] = []
        self.stall_limit = stall_limit
        self._last_answer: Optional[str] = None
        self._same_answers = 0
        self.retry = retry
        self._retries = 0  # consecutive retries of the current request
        self._last_progress: Optional[ProgressEvent] = None  # the latest ProgressEvent the handler answered

    def _emit(self, event: OperationEvent) -> None:
        for observer in self.observers:
            observer(event)

    def _elapsed(self) -> float:
        return self.clock.now() - self._started

    async def run(self) -> OperationResult:
        self._started = self.clock.now()
        self._emit(
            OperationStarted(
                action=self.action,
                type_name=self.request.type_name,
                function=self.function_name,
                entrypoint=self.request.entrypoint.value,
                invocation_budget=self.invocation_budget,
                operation_budget=self.operation_budget,
                virtual_clock=self.clock.virtual,
            )
        )
        try:
            result = self._request_rejected() or await self._loop()
        except BaseException as stop:  # noqa: B902 - Ctrl-C, serve stopping, a cancel: said, then passed on
            result = self._interrupted(stop)
            result.violations = list(self._violations)
            self._emit(OperationCompleted(result))
            raise
        if self.checker is not None:
            self._report(None, self.checker.check_ending(result.reason, result.message, result.invocations))
        result.violations = list(self._violations)
        self._emit(OperationCompleted(result))
        return result

    def _report(self, invocation: Optional[int], violations: List[Violation]) -> Optional[Violation]:
        """Tell observers about violations; the first MUST violation when strict."""
        if not violations:
            return None
        self._violations.extend(violations)
        self._emit(ContractChecked(invocation, violations))
        return next((v for v in violations if v.is_error), None) if self.strict else None

    def _request_rejected(self) -> Optional[OperationResult]:
        if self.checker is None:
            return None
        breach = self._report(None, self.checker.check_request())
        if breach is None:
            return None
        return self._result(OperationStatus.FAILED, EndReason.CONTRACT_VIOLATION, f"not invoked: the request breaks the contract: {breach.line()}")

    async def _loop(self) -> OperationResult:
        while True:
            ended = await self._step()
            if ended is not None:
                return ended

    async def _step(self) -> Optional[OperationResult]:
        """One invocation and what its answer asks for: the operation's result, or None to call again."""
        remaining = self.operation_budget.seconds - self._elapsed()
        if remaining <= 0:
            return self._deadline_exceeded()
        limit: Budget = self.invocation_budget if remaining >= self.invocation_budget.seconds else self.operation_budget
        outcome = await self._invoke(min(limit.seconds, remaining))
        progress, problem = self._interpret(outcome)
        self._last_logs = outcome.logs
        self._last_progress = progress or self._last_progress
        self._emit(InvocationCompleted(self._invocations, outcome, progress, problem, self._elapsed()))
        ended = self._strict_breach(outcome) or self._ended_without_event(outcome, problem, limit)
        if ended is not None:
            return ended
        assert progress is not None
        return await self._follow(progress)

    async def _invoke(self, call_limit: float) -> InvocationOutcome:
        if not self.live:
            outcome = await self.target.invoke(self.request.payload(), call_limit)
            self._invocations += 1
            return outcome
        ticker = RunningCall(self._invocations + 1, call_limit, self._emit)
        try:
            outcome = await self.target.invoke(self.request.payload(), call_limit)
        finally:
            ticker.stop()
        self._invocations += 1
        return outcome

    def _strict_breach(self, outcome: InvocationOutcome) -> Optional[OperationResult]:
        """Check the answer (reporting what it breaks); under --contract strict, a MUST it breaks ends the operation."""
        if self.checker is None or outcome.kind is not OutcomeKind.RETURNED:
            return None
        breach = self._report(self._invocations, self.checker.check_event(self._invocations, outcome.result, outcome.logs))
        if breach is None:
            return None
        return self._result(
            OperationStatus.FAILED,
            EndReason.CONTRACT_VIOLATION,
            f"invocation {self._invocations} broke the contract (--contract strict): {breach.line()}",
        )

    async def _follow(self, progress: ProgressEvent) -> Optional[OperationResult]:
        """What a ProgressEvent asks for: retry, the next page, the next callback, or the end."""
        if progress.status is OperationStatus.FAILED:
            return None if await self._retried(progress) else self._handler_failed(progress)
        self._retries = 0
        if progress.status is OperationStatus.SUCCESS:
            if self.action is Action.LIST and progress.nextToken:
                return self._next_page(progress, progress.nextToken)
            return self._succeeded(progress)
        return await self._in_progress(progress)

    def _next_page(self, progress: ProgressEvent, token: str) -> Optional[OperationResult]:
        stop = self._record_page(progress) or self._reinvoke_limit_reached(progress)
        if stop is None:
            self.request.next_page(token)
        return stop

    async def _in_progress(self, progress: ProgressEvent) -> Optional[OperationResult]:
        if not self.action.is_mutating:
            return self._result(
                OperationStatus.FAILED,
                EndReason.IN_PROGRESS_NOT_ALLOWED,
                f"{self.action.value} handlers MUST return SUCCESS or FAILED, never IN_PROGRESS "
                f"(invocation {self._invocations})",
            )
        stop = self._reinvoke_limit_reached(progress) or self._stalled(progress)
        if stop is not None:
            return stop
        delay = max(0, progress.callbackDelaySeconds or 0)
        remaining = self.operation_budget.seconds - self._elapsed()
        await self._wait(min(delay, max(0.0, remaining)))
        self.request.continue_with(progress)
        return None

    def _interpret(self, outcome: InvocationOutcome) -> "tuple[Optional[ProgressEvent], Optional[str]]":
        if outcome.kind is not OutcomeKind.RETURNED:
            return None, None
        try:
            return self.request.read_response(outcome.result), None
        except InvalidProgressEvent as error:
            return None, f"the handler's response is not a ProgressEvent: {error}"

    def _ended_without_event(
        self, outcome: InvocationOutcome, problem: Optional[str], limit: Budget
    ) -> Optional[OperationResult]:
        n = self._invocations
        if outcome.kind is OutcomeKind.TIMED_OUT:
            if limit is self.operation_budget:
                return self._deadline_exceeded(during=n)
            return self._result(
                OperationStatus.FAILED,
                EndReason.INVOCATION_BUDGET,
                f"invocation {n} did not return a ProgressEvent within {limit.describe()}; "
                "the call was cut and its worker replaced",
            )
        if outcome.kind is OutcomeKind.INIT_ERROR:
            return self._result(OperationStatus.FAILED, EndReason.INIT_ERROR, outcome.error_message)
        if outcome.kind is OutcomeKind.WORKER_DIED:
            return self._result(
                OperationStatus.FAILED,
                EndReason.WORKER_DIED,
                f"invocation {n}: the {outcome.error_message} before returning a ProgressEvent "
                "(sys.exit, os._exit or a crash in native code)",
            )
        if outcome.kind is OutcomeKind.FUNCTION_ERROR:
            return self._result(
                OperationStatus.FAILED,
                EndReason.FUNCTION_ERROR,
                f"invocation {n}: the function raised {outcome.error_type}: {outcome.error_message}",
            )
        if problem is not None:
            return self._result(OperationStatus.FAILED, EndReason.INVALID_RESPONSE, f"invocation {n}: {problem}")
        return None

    def _deadline_exceeded(self, during: Optional[int] = None) -> OperationResult:
        where = f" during invocation {during}" if during else ""
        return self._result(
            OperationStatus.FAILED,
            EndReason.OPERATION_TIMEOUT,
            f"the operation did not finish within {self.operation_budget.describe()}; "
            f"it ran out{where} after {self._invocations} invocation(s) and {self._elapsed():.1f} s",
        )

    async def _retried(self, progress: ProgressEvent) -> bool:
        """Wait out the backoff before sending the same request again; False when this answer is final."""
        if not self.retry.retriable(progress.errorCode) or self._retries >= self.retry.retries:
            return False
        remaining = self.operation_budget.seconds - self._elapsed()
        if remaining <= 0:
            return False
        self._retries += 1
        delay = min(self.retry.delay_s(self._retries), remaining)
        self._emit(Retrying(self._invocations + 1, self._retries, self.retry.retries, progress.errorCode or "", delay))
        await self._wait(delay)
        return True

    def _handler_failed(self, progress: ProgressEvent) -> OperationResult:
        hint = None
        if self._retries and self.retry.retriable(progress.errorCode):
            hint = (
                f"{progress.errorCode} is retriable: the same request was sent {self._retries} more time(s) with backoff, "
                "as CloudFormation does, and the last answer still failed (--no-retry: fail at the first answer)"
            )
        elif "unhashable type: 'dict'" in (progress.message or ""):
            hint = UNHASHABLE_SET_HINT
        cause = failure_cause(self._last_logs, progress.message or "", self.command)
        if cause is not None and cause.hint:
            hint = cause.hint if hint is None else f"{hint}; {cause.hint}"
        elif hint is None and progress.errorCode == "InternalFailure" and not progress.message:
            hint = EMPTY_INTERNAL_FAILURE_HINT
        return self._result(
            OperationStatus.FAILED,
            EndReason.HANDLER,
            progress.message or "",
            error_code=progress.errorCode,
            hint=hint,
            resource_model=progress.resourceModel,
            cause=cause.line if cause is not None and cause.line and cause.line not in (progress.message or "") else None,
        )

    def _succeeded(self, progress: ProgressEvent) -> OperationResult:
        if self.action is Action.LIST:
            self._models.extend(progress.resourceModels or [])
            return self._result(OperationStatus.SUCCESS, EndReason.HANDLER, progress.message or "", resource_models=self._models)
        return self._result(
            OperationStatus.SUCCESS, EndReason.HANDLER, progress.message or "", resource_model=progress.resourceModel
        )

    def _record_page(self, progress: ProgressEvent) -> Optional[OperationResult]:
        token = progress.nextToken or ""
        page = json.dumps(progress.resourceModels or [], sort_keys=True)
        if token in self._tokens or page == self._last_page:
            repeated = "nextToken" if token in self._tokens else "page of resourceModels"
            return self._result(
                OperationStatus.FAILED,
                EndReason.PAGINATION_LOOP,
                f"LIST pagination makes no progress: invocation {self._invocations} returned the same "
                f"{repeated} as an earlier call (nextToken {token!r}); stopped instead of looping",
                hint=PAGINATION_LOOP_HINT,
                resource_models=self._models,
            )
        self._tokens.add(token)
        self._last_page = page
        self._models.extend(progress.resourceModels or [])
        return None

    def _reinvoke_limit_reached(self, progress: ProgressEvent) -> Optional[OperationResult]:
        if self.max_reinvoke is None or self._invocations <= self.max_reinvoke:
            return None
        return self._result(
            OperationStatus.IN_PROGRESS,
            EndReason.REINVOKE_LIMIT,
            f"stopped after {self.max_reinvoke} re-invocation(s) (--max-reinvoke); the operation was still "
            f"{progress.status.value}" + (" with more pages" if progress.nextToken else ""),
            resource_model=progress.resourceModel,
            resource_models=self._models or None,
        )

    def _stalled(self, progress: ProgressEvent) -> Optional[OperationResult]:
        """Stop a handler that answers the same IN_PROGRESS, with no delay, ``stall_limit`` times in a row."""
        if progress.callbackDelaySeconds:
            self._last_answer, self._same_answers = None, 0
            return None
        answer = json.dumps(progress.wire(), sort_keys=True, default=str)
        self._same_answers = self._same_answers + 1 if answer == self._last_answer else 1
        self._last_answer = answer
        if self.stall_limit is None or self._same_answers < self.stall_limit:
            return None
        return self._result(
            OperationStatus.IN_PROGRESS,
            EndReason.NO_PROGRESS,
            f"the handler answered the same IN_PROGRESS {self._same_answers} times in a row with no "
            "CallbackDelaySeconds and no change to callbackContext or resourceModel; stopped instead of "
            f"calling it again and again (the operation would time out after {self.operation_budget.describe()})",
            hint=NO_PROGRESS_HINT,
            resource_model=progress.resourceModel,
        )

    def _interrupted(self, stop: BaseException) -> OperationResult:
        """The operation stopped from outside before it ended: where it stood, so the user can resume or clean up."""
        last = self._last_progress
        how = str(stop) or type(stop).__name__
        if isinstance(stop, (asyncio.CancelledError, KeyboardInterrupt)):
            how = "Ctrl-C, or cfnrun stopping"  # asyncio hands Ctrl-C to the operation as a cancellation
        standing = f"the last answer was {last.status.value}" if last is not None else "no answer had come"
        token = self.request.client_request_token
        return self._result(
            OperationStatus.IN_PROGRESS,
            EndReason.INTERRUPTED,
            f"interrupted ({how}) after {self._invocations} invocation(s); {standing}"
            + (f"; clientRequestToken {token}" if token else "")
            + ". What the handler started may be half done: its model so far and callbackContext are kept here",
            resource_model=last.resourceModel if last is not None else None,
            callback_context=last.callbackContext if last is not None else None,
        )

    async def _wait(self, delay: float) -> None:
        self._emit(Waiting(self._invocations + 1, delay, self.clock.virtual))
        if self.clock.virtual or delay <= 0:
            await self.clock.sleep(delay)
            return
        remaining = delay
        while remaining > 0:
            step = min(1.0, remaining)
            await self.clock.sleep(step)
            remaining -= step
            self._emit(WaitTick(remaining))

    def _result(self, status: OperationStatus, reason: EndReason, message: str, **details: Any) -> OperationResult:
        return OperationResult(
            action=self.action,
            status=status,
            reason=reason,
            message=message,
            invocations=self._invocations,
            elapsed_s=self._elapsed(),
            **details,
        )
