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
from typing import Any, Dict, List, Optional, Tuple

from cfnrun.contract.checker import ContractMode, check_call
from cfnrun.contract.shape import ShapeValidator
from cfnrun.contract.violations import Violation
from cfnrun.history.recorder import CallRecorder
from cfnrun.invoker.request_files import request_file_hint
from cfnrun.model.budgets import Budget, Budgets
from cfnrun.model.hook_targets import target_schemas
from cfnrun.model.project import Project
from cfnrun.model.seen_call import SeenCall
from cfnrun.model.template import FunctionSpec
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.registry import FunctionRegistry
from cfnrun.ui.console import Console


class CallReview:
    def __init__(
        self,
        registry: FunctionRegistry,
        budgets: Budgets,
        console: Console,
        contract: ContractMode,
        history: Optional[CallRecorder] = None,
    ) -> None:
        self.registry = registry
        self.budgets = budgets
        self.console = console
        self.contract = contract
        self.history = history
        self.violations_seen: "collections.Counter[str]" = collections.Counter()  # violation lines, for a summary
        self._shape: Optional[ShapeValidator] = None
        self._targets: Optional[Tuple[Project, Dict[str, Dict[str, Any]]]] = None  # a hook project's target schemas

    def check(self, call: SeenCall, result: Any) -> List[Violation]:
        return check_call(self._shape_validator(), call, result, self._target_schemas())

    def report(
        self,
        function: FunctionSpec,
        call: SeenCall,
        outcome: InvocationOutcome,
        notes: List[str],
        limit: Budget,
        violations: Optional[List[Violation]] = None,
    ) -> None:
        """Check the call unless that is done (``violations``), record it, and write its console line."""
        action = call.action
        if violations is None and self.contract is not ContractMode.OFF and outcome.kind is OutcomeKind.RETURNED:
            violations = self.check(call, outcome.result)
        lines = [f"contract {'✗' if v.is_error else '!'} [{v.rule.id}]" for v in violations or []]
        self.violations_seen.update(lines)
        hint = request_file_hint(call.payload)
        notes = ([hint] if hint else []) + notes + [f"contract {'✗' if v.is_error else '!'} {v.line()}" for v in violations or []]
        if self.history is not None and action is not None:
            self.history.call(function.logical_id, action, call, outcome, violations or [], (limit, self.budgets.operation(action, self.registry.project.schema)))
        self.console.call(function.logical_id, action.value if action else None, outcome, notes)

    def close(self) -> None:
        if self.history is not None:
            self.history.close()

    def _shape_validator(self) -> ShapeValidator:
        schema = self.registry.project.schema  # a reload may have brought a new one
        if self._shape is None or self._shape.schema is not schema:
            self._shape = ShapeValidator(schema)
        return self._shape

    def _target_schemas(self) -> Dict[str, Dict[str, Any]]:
        project = self.registry.project  # a reload may have brought new target schemas
        if not project.is_hook:
            return {}
        if self._targets is None or self._targets[0] is not project:
            self._targets = (project, target_schemas(project.root))
        return self._targets[1]
