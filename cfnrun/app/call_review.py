"""What serve does with each call it answered: the contract checks, the history record, the console line.

For every API on serve's port that runs a handler call itself (the Lambda Invoke API today,
``app/lambda_calls.py``). Loaded once serve listens (``app/late_parts.py``): the checker
(jsonschema), the wire models (pydantic) and the history (sqlite3) are not on the way to the
first answer. In warn mode nothing in an answer depends on them, so a call is reviewed once
its answer is on its way; ``--contract strict`` checks before answering, so such a call waits
for this to load.
"""
from __future__ import annotations

import collections
import functools
from typing import Any, Dict, List, Optional, Tuple

from cfnrun.contract.checker import ContractMode, check_call
from cfnrun.contract.shape import ShapeValidator
from cfnrun.contract.violations import REQUEST_RULES, Violation
from cfnrun.history.masking import Masker, call_masker
from cfnrun.history.recorder import CallRecorder
from cfnrun.invoker.request_files import request_file_hint
from cfnrun.model.action import Action
from cfnrun.model.budgets import Budget, Budgets
from cfnrun.model.failure_cause import failure_cause
from cfnrun.model.hook_targets import target_schemas
from cfnrun.model.project import Project
from cfnrun.model.schema import ResourceSchema
from cfnrun.model.seen_call import SeenCall
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.registry import FunctionRegistry, ServedFunction
from cfnrun.ui.console import Console

# Enum members read once: each read off its class (``OutcomeKind.RETURNED``) costs ~900 instructions, a global's ~50.
_RETURNED = OutcomeKind.RETURNED
_CONTRACT_OFF = ContractMode.OFF


def _failed_result(outcome: InvocationOutcome) -> Optional[Dict[str, Any]]:
    result = outcome.result if outcome.kind is _RETURNED and isinstance(outcome.result, dict) else {}
    return result if "FAILED" in (result.get("status"), result.get("hookStatus")) else None


def failed_call_notes(result: Dict[str, Any], logs: str, command: str) -> List[str]:
    """A FAILED answer's (``_failed_result``) cause (the exception in the call's output ``logs``) and what to do: serve's
    console line shows them."""
    message = str(result.get("message") or "")
    cause = failure_cause(logs, message, command)
    if cause is None:
        return []
    shown = cause.line and not (message and cause.line.split(": ", 1)[-1] in message)
    return ([f"cause: {cause.line}"] if shown else []) + ([f"hint: {cause.hint}"] if cause.hint else [])


def failed_answer(result: Dict[str, Any], logs: str) -> str:
    """A FAILED answer (``_failed_result``) in one line, "FAILED Code: message", the raised exception (in the call's
    output ``logs``) standing in for an empty message."""
    message = str(result.get("message") or "")
    if not message:
        cause = failure_cause(logs)
        message = f"(no message; the handler raised {cause.line})" if cause is not None and cause.line else "(no message)"
    return " ".join(["FAILED", str(result.get("errorCode") or ""), message[:200]]).replace("  ", " ")


class CallReview:
    """One serve's review of calls, for every provider it serves: each call is checked against its
    provider's schema and recorded in its provider's history (``histories``, by type name). A plain
    function's call is no handler's: it gets its console line only."""

    def __init__(
        self,
        budgets: Budgets,
        console: Console,
        contract: ContractMode,
        histories: Optional[Dict[str, CallRecorder]] = None,
    ) -> None:
        self.budgets = budgets
        self.console = console
        self.contract = contract
        self.histories = histories or {}
        self.violations_seen: "collections.Counter[str]" = collections.Counter()  # the answers' violation lines, for a summary
        self.requests_seen: "collections.Counter[str]" = collections.Counter()  # the requests' (the caller's input)
        self.failures_seen: "collections.Counter[str]" = collections.Counter()  # FAILED answers: "CREATE → FAILED Code: why"
        self._shapes: Dict[str, ShapeValidator] = {}  # by type name
        self._targets: Dict[str, Tuple[Project, Dict[str, Dict[str, Any]]]] = {}  # a hook project's target schemas, by type name
        self._operations: Dict[Action, Tuple[ResourceSchema, Budget]] = {}  # the operation budget by action, for the schema it was worked out for

    def check(self, function: ServedFunction, call: SeenCall, result: Any, output: str = "") -> List[Violation]:
        if function.type_name is None or call.action is None:
            return []
        return check_call(self._shape_validator(function.registry), call, result, self._target_schemas(function.registry), output)

    def report(
        self,
        function: ServedFunction,
        call: SeenCall,
        outcome: InvocationOutcome,
        notes: List[str],
        limit: Budget,
        violations: Optional[List[Violation]] = None,
    ) -> None:
        """Check the call unless that is done (``violations``), record it, and write its console line (once it is recorded)."""
        action = call.action
        if violations is None and self.contract is not _CONTRACT_OFF and outcome.kind is _RETURNED:
            violations = self.check(function, call, outcome.result, outcome.logs)
        for violation in violations or []:
            line = f"contract {'✗' if violation.is_error else '!'} [{violation.rule.id}]"
            (self.requests_seen if violation.rule in REQUEST_RULES else self.violations_seen)[line] += 1
        failed = _failed_result(outcome)  # None for the usual answer: no FAILED line, no cause to look for
        if failed is not None and action is not None:
            self.failures_seen[f"{action.value} → {failed_answer(failed, outcome.logs)}"] += 1
        hint = request_file_hint(call.payload)
        if hint or violations:
            notes = ([hint] if hint else []) + notes + [f"contract {'✗' if v.is_error else '!'} {v.line()}" for v in violations or []]
        if failed is not None:
            notes = notes + failed_call_notes(failed, outcome.logs, "cfnrun serve")
        history = self.histories.get(function.type_name) if function.type_name is not None else None
        # The call's secrets, found once (the history's record hides them too) and only for a console line that shows more
        # than its head: the usual call, without output or notes, pays nothing for them.
        masker: Optional[Masker] = None
        if function.type_name is not None and (outcome.logs or outcome.faults or notes or outcome.error is not None):
            masker = call_masker(function.registry.project.schema, call)
        mask = masker.masked_output if masker is not None and masker.has_secrets else None
        console_line = functools.partial(self.console.call, function.name, action._value_ if action else None, outcome, notes, mask)
        if history is not None and action is not None:
            budgets = (limit, self._operation_budget(action, function.registry.project.schema))
            history.call(function.spec.logical_id, action, call, outcome, violations or [], budgets, then=console_line, masker=masker)
        else:
            console_line()

    def close(self) -> None:
        for history in self.histories.values():
            history.close()

    def _operation_budget(self, action: Action, schema: ResourceSchema) -> Budget:
        """``Budgets.operation``, worked out once per action and schema (a reload may bring a new schema)."""
        known = self._operations.get(action)
        if known is None or known[0] is not schema:
            known = self._operations[action] = (schema, self.budgets.operation(action, schema))
        return known[1]

    def _shape_validator(self, registry: "FunctionRegistry[Project]") -> ShapeValidator:
        project = registry.project
        schema = project.schema  # a reload may have brought a new one
        shape = self._shapes.get(project.type_name)
        if shape is None or shape.schema is not schema:
            shape = self._shapes[project.type_name] = ShapeValidator(schema)
        return shape

    def _target_schemas(self, registry: "FunctionRegistry[Project]") -> Dict[str, Dict[str, Any]]:
        project = registry.project  # a reload may have brought new target schemas
        if not project.is_hook:
            return {}
        known = self._targets.get(project.type_name)
        if known is None or known[0] is not project:
            known = self._targets[project.type_name] = (project, target_schemas(project.root))
        return known[1]
