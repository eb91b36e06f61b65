"""Time limits the handler contract sets, and how tests shrink them.

Defaults are exactly the contract's: a ProgressEvent within 60 s for
create/update/delete and 30 s for read/list, and the whole operation within the
schema's ``handlers.<action>.timeoutInMinutes`` (120 when absent).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from cfnrun.model.protocol import Action
from cfnrun.model.schema import ResourceSchema

MUTATING_BUDGET_S = 60.0
READ_LIST_BUDGET_S = 30.0


@dataclass(frozen=True)
class Budget:
    seconds: float
    source: str  # says where the number comes from, for messages

    def describe(self) -> str:
        return f"{self.source} ({_seconds(self.seconds)})"


def _seconds(value: float) -> str:
    if value >= 120 and value % 60 == 0:
        return f"{value / 60:g} min"
    return f"{value:g} s"


@dataclass(frozen=True)
class Budgets:
    time_scale: float = 1.0
    invocation_timeout_s: Optional[float] = None
    operation_timeout_s: Optional[float] = None

    def invocation(self, action: Action, function_timeout_s: Optional[float] = None) -> Budget:
        """How long one invocation may run before it is cut."""
        if self.invocation_timeout_s is not None:
            return Budget(self.invocation_timeout_s, "--invocation-timeout")
        contract = MUTATING_BUDGET_S if action.is_mutating else READ_LIST_BUDGET_S
        budget = Budget(
            contract * self.time_scale,
            f"the handler contract's {contract:g} s response budget for {action.value}"
            + (f" scaled by --time-scale {self.time_scale:g}" if self.time_scale != 1.0 else ""),
        )
        if function_timeout_s is not None and function_timeout_s * self.time_scale < budget.seconds:
            return Budget(function_timeout_s * self.time_scale, "the function's Timeout in template.yml")
        return budget

    def operation(self, action: Action, schema: ResourceSchema) -> Budget:
        """How long the whole operation, re-invocations and waits included, may take."""
        if self.operation_timeout_s is not None:
            return Budget(self.operation_timeout_s, "--operation-timeout")
        minutes = schema.timeout_minutes(action)
        return Budget(
            minutes * 60.0 * self.time_scale,
            f"handlers.{action.schema_handler}.timeoutInMinutes = {minutes}"
            + (f" scaled by --time-scale {self.time_scale:g}" if self.time_scale != 1.0 else ""),
        )
