"""The contract's time limits and the flags that shrink them."""
from __future__ import annotations

from fakes import schema

from cfnrun.model.budgets import Budgets
from cfnrun.model.protocol import HOOK_POINTS, RESOURCE_ACTIONS, Action


def test_defaults_are_the_contracts_numbers() -> None:
    budgets = Budgets()
    assert [budgets.invocation(action).seconds for action in RESOURCE_ACTIONS] == [60, 30, 60, 60, 30]
    # a hook's: the Hooks user guide's 30 s per invocation (concepts, "Timeout and retry limits"), not a resource handler's 60 s
    assert [budgets.invocation(point).seconds for point in HOOK_POINTS] == [30, 30, 30]
    assert budgets.invocation(Action.DELETE_PRE_PROVISION).describe() == (
        "the Hooks user guide's 30 s limit per hook invocation, for DELETE_PRE_PROVISION (30 s)"
    )
    assert budgets.operation(Action.CREATE_PRE_PROVISION, schema({"preCreate": {"timeoutInMinutes": 3}})).seconds == 180
    assert budgets.operation(Action.CREATE, schema()).seconds == 120 * 60
    assert budgets.operation(Action.CREATE, schema({"create": {"timeoutInMinutes": 5}})).seconds == 300
    assert budgets.invocation(Action.READ).describe() == "the handler contract's 30 s response budget for READ (30 s)"
    assert budgets.operation(Action.CREATE, schema()).describe() == "handlers.create.timeoutInMinutes = 120 (default, 120 min)"
    hook = budgets.operation(Action.UPDATE_PRE_PROVISION, schema())
    assert (hook.seconds, hook.default) == (120 * 60, True) and "timeoutInMinutes =" not in hook.describe()  # no such key for hooks
    declared = schema({"create": {"timeoutInMinutes": 120}})
    assert budgets.operation(Action.CREATE, declared).describe() == "handlers.create.timeoutInMinutes = 120 (120 min)"


def test_time_scale_shrinks_every_limit_and_says_so() -> None:
    budgets = Budgets(time_scale=0.01)
    assert budgets.invocation(Action.UPDATE).seconds == 0.6
    assert budgets.operation(Action.CREATE, schema()).seconds == 72
    assert "scaled by --time-scale 0.01" in budgets.invocation(Action.UPDATE).describe()


def test_overrides_win_and_are_named() -> None:
    budgets = Budgets(time_scale=0.5, invocation_timeout_s=2, operation_timeout_s=9)
    assert budgets.invocation(Action.CREATE).describe() == "--invocation-timeout (2 s)"
    assert budgets.operation(Action.CREATE, schema()).describe() == "--operation-timeout (9 s)"


def test_a_shorter_function_timeout_is_the_invocation_budget() -> None:
    budgets = Budgets()
    assert budgets.invocation(Action.CREATE, function_timeout_s=20).describe() == "the function's Timeout in template.yml (20 s)"
    assert budgets.invocation(Action.READ, function_timeout_s=900).seconds == 30
