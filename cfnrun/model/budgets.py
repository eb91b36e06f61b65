"""Time limits the handler contract sets, and how tests shrink them.

Defaults are exactly the contract's: a ProgressEvent within 60 s for
create/update/delete and 30 s for read/list, and the whole operation within the
schema's ``handlers.<action>.timeoutInMinutes`` (120 when absent). A hook's invocation
points have 30 s each: the Hooks user guide's limit per invocation, for every kind of hook.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

from cfnrun.model.action import Action  # not protocol: the wire models (pydantic) are not needed to know the budgets
from cfnrun.model.schema import ResourceSchema

MUTATING_BUDGET_S = 60.0
READ_LIST_BUDGET_S = 30.0
LAMBDA_MAX_TIMEOUT_S = 900.0  # a function without a Timeout may run this long on Lambda
HOOK_BUDGET_S = 30.0  # the Hooks user guide (concepts): "a 30-second timeout limit per invocation", for hooks of every kind
LAMBDA_HOOK_BUDGET_S = HOOK_BUDGET_S  # the service waits this long for each answer of a Lambda hook's function
GUARD_HOOK_BUDGET_S = HOOK_BUDGET_S  # one Guard evaluation


class BudgetKind(str, enum.Enum):
    """Where a time limit comes from."""

    CONTRACT = "contract"  # the handler contract's 60 s / 30 s response budget
    FUNCTION_TIMEOUT = "function-timeout"  # the function's Timeout in template.yml
    SCHEMA = "schema"  # handlers.<action>.timeoutInMinutes
    OVERRIDE = "override"  # --invocation-timeout / --operation-timeout


@dataclass(frozen=True)
class Budget:
    seconds: float
    source: str  # says where the number comes from, for messages
    kind: BudgetKind
    default: bool = False  # the number is a documented default, not something the schema or a flag set

    @property
    def is_contract(self) -> bool:
        """Is exceeding it a breach of the handler contract (not just of a local setting)?"""
        return self.kind is BudgetKind.CONTRACT

    def describe(self) -> str:
        return f"{self.source} ({'default, ' if self.default else ''}{_seconds(self.seconds)})"


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
            return Budget(self.invocation_timeout_s, "--invocation-timeout", BudgetKind.OVERRIDE)
        if action.is_hook:
            contract, source = HOOK_BUDGET_S, f"the Hooks user guide's {HOOK_BUDGET_S:g} s limit per hook invocation, for {action.value}"
        else:
            contract = MUTATING_BUDGET_S if action.is_mutating else READ_LIST_BUDGET_S
            source = f"the handler contract's {contract:g} s response budget for {action.value}"
        budget = Budget(contract * self.time_scale, source + self._scaled(), BudgetKind.CONTRACT)
        if function_timeout_s is not None and function_timeout_s * self.time_scale < budget.seconds:
            return self._function_timeout(function_timeout_s)
        return budget

    def call(self, action: Optional[Action], function_timeout_s: Optional[float]) -> Budget:
        """How long a call served on the Invoke API may run: the function's Timeout, and for
        a HandlerRequest or sam-tests event (a known ``action``) the contract budget too."""
        timeout = function_timeout_s if function_timeout_s is not None else LAMBDA_MAX_TIMEOUT_S
        if action is not None:
            return self.invocation(action, timeout)
        if self.invocation_timeout_s is not None:
            return Budget(self.invocation_timeout_s, "--invocation-timeout", BudgetKind.OVERRIDE)
        return self._function_timeout(timeout)

    def lambda_hook(self) -> Budget:
        """How long the service waits for each answer of a Lambda hook's function (the Hooks user guide's 30 s)."""
        return Budget(
            LAMBDA_HOOK_BUDGET_S * self.time_scale,
            f"the service's {LAMBDA_HOOK_BUDGET_S:g} s limit for a Lambda hook's answer" + self._scaled(),
            BudgetKind.CONTRACT,
        )

    def guard_hook(self) -> Budget:
        """How long one evaluation of a Guard hook's rules may run (the Hooks user guide's 30 s per hook invocation)."""
        return Budget(
            GUARD_HOOK_BUDGET_S * self.time_scale,
            f"cfnrun's {GUARD_HOOK_BUDGET_S:g} s limit for a Guard hook's evaluation" + self._scaled(),
            BudgetKind.SCHEMA,
            default=True,
        )

    def _scaled(self) -> str:
        return f" scaled by --time-scale {self.time_scale:g}" if self.time_scale != 1.0 else ""

    def _function_timeout(self, seconds: float) -> Budget:
        return Budget(seconds * self.time_scale, "the function's Timeout in template.yml", BudgetKind.FUNCTION_TIMEOUT)

    def operation(self, action: Action, schema: ResourceSchema) -> Budget:
        """How long the whole operation, re-invocations and waits included, may take."""
        if self.operation_timeout_s is not None:
            return Budget(self.operation_timeout_s, "--operation-timeout", BudgetKind.OVERRIDE)
        minutes = schema.timeout_minutes(action)
        declared = "timeoutInMinutes" in (schema.handler(action) or {})
        if action.is_hook and not declared:  # a hook's handlers take only targetNames and permissions: no key to name
            return Budget(
                minutes * 60.0 * self.time_scale,
                "cfnrun's limit for a hook invocation point (hook schemas set no timeoutInMinutes)" + self._scaled(),
                BudgetKind.SCHEMA,
                default=True,
            )
        return Budget(
            minutes * 60.0 * self.time_scale,
            f"handlers.{action.schema_handler}.timeoutInMinutes = {minutes}" + self._scaled(),
            BudgetKind.SCHEMA,
            default=not declared,
        )
