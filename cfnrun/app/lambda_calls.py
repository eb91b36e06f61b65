"""What serve does with each call the Lambda Invoke API hands it (``cfnrun.api.lambda_api.LambdaCalls``).

The call runs on its function's pool, cut at the function's Timeout or, for a known action,
at the contract budget. Its answer may change here, never in the HTTP layer: a LIST that keeps
handing back its own nextToken is stopped (``app/paging.py``), and under ``--contract strict``
an answer that breaks the contract becomes FAILED. Then the call is reviewed
(``app/call_review.py``: checks, history, the console line) with the notes it earned (a
timeout, a paging loop, serve's stop), once its answer is on its way. Serve's stop asks here
for the calls still running, to give them their grace.
"""
from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING, List, Optional

from cfnrun.api import service_errors
from cfnrun.api.lambda_api import LambdaAnswer, LambdaCall
from cfnrun.app.late_parts import LateLoading
from cfnrun.app.paging import PagingWatch
from cfnrun.app.served import Served, UnknownFunction
from cfnrun.contract.mode import ContractMode
from cfnrun.model.action import Action
from cfnrun.model.budgets import Budget
from cfnrun.model.seen_call import SeenCall, call_action, seen_call
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.registry import ServedFunction

if TYPE_CHECKING:
    from cfnrun.app.call_review import CallReview

# Enum members read once: each read off its class (``OutcomeKind.RETURNED``) costs ~900 instructions, a global's ~50.
_RETURNED, _TIMED_OUT = OutcomeKind.RETURNED, OutcomeKind.TIMED_OUT
_STRICT = ContractMode.STRICT
_LIST = Action.LIST


class LambdaCallPolicy:
    """Serve's ``LambdaCalls``: one per server, for every function it serves."""

    def __init__(self, served: Served, contract: ContractMode, late: LateLoading) -> None:
        self.served = served
        self.contract = contract
        self.late = late  # the review of each call arrives with the late parts
        self.paging = PagingWatch()
        self._calls = 0  # calls running: each RequestResponse call, each Event call from when it is taken
        self._idle: Optional["asyncio.Future[None]"] = None  # set when no call runs any more, for ``finish`` waiting for that
        self._grace_expired: Optional[float] = None  # the shutdown grace, once it has run out

    def function(self, name: str) -> ServedFunction:
        try:
            return self.served.function(name)
        except UnknownFunction as unknown:
            if unknown.candidates:
                raise service_errors.ambiguous_function(name, unknown.candidates) from None
            raise service_errors.function_not_found(name, self.served.function_names()) from None

    async def invoke(self, call: LambdaCall, *, event: bool = False) -> LambdaAnswer:
        # One coroutine per call, counted rather than given a future of its own: each frame between the loop and the
        # pool's call is resumed with it, and a future costs the loop's lookup (a getpid() on Python 3.11) and a set's
        # add and discard. ``finish`` waits for the count to reach none (``_idle``). An Event call (``event``) is
        # counted by ``invoke_event``, from when it is taken.
        if not event:
            self._calls += 1
        try:
            function = call.function
            # A plain function's event is no handler's call, whatever its keys: no contract, no budget of an action.
            # Only the action is read before the call (its time limit); the rest of the call (``SeenCall``) is read
            # for the checks and the review, after the answer is written in warn mode.
            handler_call = function.type_name is not None
            action: Optional[Action] = call_action(call.payload) if handler_call else None
            limit = self.served.limit(function, action)
            outcome = await self.served.invoke(function, call.payload, limit, call.request_id, call.payload_json)  # the limit found once
            notes: List[str] = []
            strict = self.contract is _STRICT
            returned = outcome.kind is _RETURNED
            if not returned:
                if outcome.kind is _TIMED_OUT:
                    breach = "contract breach: " if action is not None and limit.is_contract else ""
                    notes.append(f"{breach}no answer within {limit.describe()}; the worker was killed and replaced")
                if self._grace_expired is not None:
                    notes.append(f"serve is stopping: still running after the {self._grace_expired:g} s shutdown grace; answered with Runtime.ExitError")
            elif action is _LIST:
                outcome = self.paging.answer(function.name, call.payload, outcome, notes, strict)
            if strict and returned:
                seen = seen_call(call.payload, handler_call)
                outcome = self._strict(function, seen, outcome, notes, limit, (await self.late.wait()).review)
            else:
                # Warn mode: nothing in the answer depends on the checks, so they run once it is on its way,
                # like Lambda's logs: the caller never waits on the checker or a terminal (nor on the call's parse).
                self.late.then_report(function, call.payload, outcome, notes, limit)
        except Exception:  # noqa: B902 - the pool refuses calls once serve has stopped it
            if self._grace_expired is None:
                raise
            return LambdaAnswer(None, self._grace_expired)
        finally:
            if not event:
                self._calls -= 1
                if not self._calls and self._idle is not None:
                    self._now_idle()
        if self._grace_expired is not None and outcome.kind is not _RETURNED:
            return LambdaAnswer(outcome, self._grace_expired)
        return LambdaAnswer(outcome)

    def invoke_event(self, call: LambdaCall) -> None:
        self._calls += 1  # running from now, before its task starts, until it is done (``_event_done``)
        asyncio.ensure_future(self.invoke(call, event=True)).add_done_callback(self._event_done)

    async def finish(self, grace_s: float, left_s: float) -> int:
        """Let the calls in flight finish, for the ``left_s`` that remain of the ``grace_s`` shutdown grace;
        how many are still running.

        Those still running are then answered with a shutdown error as soon as their worker
        is stopped (``Served.close``), instead of having their connection dropped.
        Refuse new calls first (``LambdaService.refuse_new_calls``).
        """
        await self._until_idle(left_s)
        if self._calls:
            self._grace_expired = grace_s
        return self._calls

    async def ended(self, timeout_s: float) -> None:
        await self._until_idle(timeout_s)

    async def _until_idle(self, timeout_s: float) -> None:
        """Until no call runs, or ``timeout_s``."""
        if not self._calls:
            return
        if self._idle is None or self._idle.done():
            self._idle = asyncio.get_running_loop().create_future()
        await asyncio.wait([self._idle], timeout=timeout_s)

    def _now_idle(self) -> None:
        assert self._idle is not None
        if not self._idle.done():
            self._idle.set_result(None)

    def _event_done(self, task: "asyncio.Future[LambdaAnswer]") -> None:
        self._calls -= 1
        if not self._calls and self._idle is not None:
            self._now_idle()

    def _strict(
        self, function: ServedFunction, seen: SeenCall, outcome: InvocationOutcome, notes: List[str], limit: Budget, review: "CallReview",
    ) -> InvocationOutcome:
        """Under ``--contract strict``: the answer checked before it goes, FAILED when it breaks the contract."""
        violations = review.check(function, seen, outcome.result, outcome.logs)
        asyncio.get_running_loop().call_soon(review.report, function, seen, outcome, notes, limit, violations)
        errors = [v for v in violations if v.is_error]
        if not errors:
            return outcome
        status_key = "hookStatus" if isinstance(outcome.result, dict) and "hookStatus" in outcome.result else "status"
        failed = {
            status_key: "FAILED",
            "errorCode": "InternalFailure",
            "message": f"cfnrun --contract strict: the handler broke the contract: {errors[0].line()}",
        }
        return dataclasses.replace(outcome, result=failed)
