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
from typing import Any, Dict, List, Optional, Set, Tuple

from cfnrun.api.lambda_api import LambdaAnswer, LambdaCall
from cfnrun.app.late_parts import LateLoading
from cfnrun.app.paging import PagingWatch
from cfnrun.contract.mode import ContractMode
from cfnrun.model.action import Action
from cfnrun.model.budgets import Budget, Budgets
from cfnrun.model.seen_call import SeenCall
from cfnrun.model.template import FunctionSpec
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.registry import FunctionRegistry


class LambdaCallPolicy:
    """Serve's ``LambdaCalls``: one per server, for every function of the project."""

    def __init__(self, registry: FunctionRegistry, budgets: Budgets, contract: ContractMode, late: LateLoading) -> None:
        self.registry = registry
        self.budgets = budgets
        self.contract = contract
        self.late = late  # the review of each call arrives with the late parts
        self.paging = PagingWatch()
        self._limits: Dict[Tuple[str, Optional[float], Optional[Action]], Budget] = {}
        self._running: Set["asyncio.Future[Any]"] = set()  # one future per call, an Event call's task
        self._grace_expired: Optional[float] = None  # the shutdown grace, once it has run out

    def function(self, name: str) -> Optional[FunctionSpec]:
        return self.registry.resolve(name)

    def function_names(self) -> List[str]:
        return self.registry.project.function_names()

    async def invoke(self, call: LambdaCall) -> LambdaAnswer:
        running: "asyncio.Future[None]" = asyncio.get_running_loop().create_future()
        self._running.add(running)
        try:
            outcome = await self._run(call)
        except Exception:  # noqa: B902 - the pool refuses calls once serve has stopped it
            if self._grace_expired is None:
                raise
            return LambdaAnswer(None, self._grace_expired)
        finally:
            self._running.discard(running)
            running.set_result(None)
        if self._grace_expired is not None and outcome.kind is not OutcomeKind.RETURNED:
            return LambdaAnswer(outcome, self._grace_expired)
        return LambdaAnswer(outcome)

    def invoke_event(self, call: LambdaCall) -> None:
        task = asyncio.ensure_future(self._run(call))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def finish(self, grace_s: float, left_s: float) -> int:
        """Let the calls in flight finish, for the ``left_s`` that remain of the ``grace_s`` shutdown grace;
        how many are still running.

        Those still running are then answered with a shutdown error as soon as their worker
        is stopped (``FunctionRegistry.close``), instead of having their connection dropped.
        Refuse new calls first (``LambdaService.refuse_new_calls``).
        """
        if self._running:
            await asyncio.wait(set(self._running), timeout=left_s)
        if self._running:
            self._grace_expired = grace_s
        return len(self._running)

    async def ended(self, timeout_s: float) -> None:
        if self._running:
            await asyncio.wait(set(self._running), timeout=timeout_s)

    def _limit(self, function: FunctionSpec, action: Optional[Action]) -> Budget:
        """Cut a call at its function Timeout, and for a known action at the contract budget."""
        key = (function.logical_id, function.timeout_s, action)
        limit = self._limits.get(key)
        if limit is None:
            limit = self._limits[key] = self.budgets.call(action, function.timeout_s)
        return limit

    async def _run(self, call: LambdaCall) -> InvocationOutcome:
        function = call.function
        seen = SeenCall.parse(call.payload)
        action = seen.action
        limit = self._limit(function, action)
        outcome = await self.registry.pool(function).invoke(call.payload, limit.seconds, call.request_id, call.payload_json)
        notes: List[str] = []
        if outcome.kind is OutcomeKind.TIMED_OUT:
            breach = "contract breach: " if action is not None and limit.is_contract else ""
            notes.append(f"{breach}no answer within {limit.describe()}; the worker was killed and replaced")
        if self._grace_expired is not None and outcome.kind is not OutcomeKind.RETURNED:
            notes.append(f"serve is stopping: still running after the {self._grace_expired:g} s shutdown grace; answered with Runtime.ExitError")
        strict = self.contract is ContractMode.STRICT
        if action is Action.LIST and outcome.kind is OutcomeKind.RETURNED:
            outcome = self.paging.answer(function.logical_id, seen, outcome, notes, strict)
        if strict and outcome.kind is OutcomeKind.RETURNED:
            review = (await self.late.wait()).review
            violations = review.check(seen, outcome.result)
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
        # Warn mode: nothing in the answer depends on the checks, so they run once it is on its way,
        # like Lambda's logs: the caller never waits on the checker or a terminal.
        self.late.then(lambda parts: parts.review.report(function, seen, outcome, notes, limit))
        return outcome
