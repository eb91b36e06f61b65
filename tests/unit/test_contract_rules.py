"""Every contract rule against the rulebreaker handler called in this process, time virtual.

The same cases as tests/test_contract.py, which runs them in real workers; here each takes
milliseconds. The handler's own sleeps run on the operation's clock.
"""
from __future__ import annotations

import asyncio
from typing import Any, Dict, Optional

import pytest
from fakes import FakeTarget, Takes
from test_contract import CASES, RULEBREAKER, SCHEMA

from cfnrun.contract.checker import ContractChecker
from cfnrun.contract.violations import ALL_RULES
from cfnrun.invoker.clock import VirtualClock
from cfnrun.events.operation import OperationResult
from cfnrun.invoker.operation import Operation
from cfnrun.invoker.payloads import Entrypoint, OperationRequest
from cfnrun.invoker.request_files import OperationInput
from cfnrun.model.budgets import Budgets
from cfnrun.model.protocol import RESOURCE_ACTIONS, Action
from cfnrun.model.schema import ResourceSchema


@pytest.fixture(scope="module")
def rulebreaker() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("unit_rulebreaker", RULEBREAKER / "rulebreaker.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _SleepsOnTheClock:
    """Stands in for the handler's ``time`` module: a sleep is run time the call will report."""

    def __init__(self) -> None:
        self.slept = 0.0

    def sleep(self, seconds: float) -> None:
        self.slept += seconds


def run_case(
    rulebreaker: Any,
    action: Action,
    desired: Dict[str, Any],
    previous: Optional[Dict[str, Any]] = None,
    budgets: Budgets = Budgets(),
    virtual: bool = True,  # CASES ask for the virtual clock; here time is always virtual
    strict: bool = False,
) -> OperationResult:
    schema = ResourceSchema.load(SCHEMA)
    clock = VirtualClock()
    sleeps = _SleepsOnTheClock()
    rulebreaker.time = sleeps

    def answer(event: Dict[str, Any]) -> Any:
        sleeps.slept = 0.0
        progress = rulebreaker.handler(event, None)
        return Takes(sleeps.slept, progress)

    request = OperationRequest(
        action=action,
        type_name=schema.type_name,
        region="us-east-1",
        account_id="123456789012",
        entrypoint=Entrypoint.TYPE,
        operation=OperationInput(desired=desired, previous=previous),
    )
    operation = Operation(
        FakeTarget(answer, clock), request, schema, "TypeFunction", budgets=budgets, clock=clock,
        checker=ContractChecker(schema, action, desired, previous), strict=strict,
    )
    return asyncio.run(operation.run())


@pytest.mark.parametrize("rule, action, desired, previous, extra, where", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_rule_catches_its_misbehaviour(
    rulebreaker: Any, rule: str, action: Action, desired: Dict[str, Any], previous: Optional[Dict[str, Any]], extra: Dict[str, Any], where: str
) -> None:
    result = run_case(rulebreaker, action, desired, previous, **extra)
    caught = [v for v in result.violations if v.rule.id == rule]
    assert caught, f"{rule} not reported; got {[v.line() for v in result.violations]}"
    assert any(where in (v.pointer or "") or where in v.message for v in caught), [v.line() for v in caught]
    assert all(v.message and v.rule.sentence for v in caught)


def test_every_rule_has_a_misbehaving_case() -> None:
    assert {rule.id for rule in ALL_RULES if not rule.id.startswith("hook-")} <= {case[0] for case in CASES}  # hooks: test_hook_contract.py


@pytest.mark.parametrize("action", RESOURCE_ACTIONS)
def test_well_behaved_events_have_no_violations(rulebreaker: Any, action: Action) -> None:
    existing = {"Id": "rb-1", "Name": "ok"}
    desired = {"Name": "a", "Tags": [{"Key": "b"}, {"Key": "a"}]} if action is Action.CREATE else dict(existing)
    result = run_case(rulebreaker, action, desired, existing if action is Action.UPDATE else None)
    assert result.status == "SUCCESS" and result.violations == []


def test_a_should_rule_warns_and_strict_does_not_fail_on_it(rulebreaker: Any) -> None:
    result = run_case(rulebreaker, Action.CREATE, {"Name": "a", "Breaks": "in-progress-set-so-far"}, strict=True)
    assert result.status == "SUCCESS", result.message
    assert [(v.rule.id, v.is_error) for v in result.violations] == [("in-progress-set-so-far", False)]


def test_strict_fails_on_the_first_must_violation_and_rejects_a_bad_request(rulebreaker: Any) -> None:
    result = run_case(rulebreaker, Action.CREATE, {"Name": "a", "Breaks": "success-matches-request"}, strict=True)
    assert (result.status, result.reason.value) == ("FAILED", "contract-violation")
    assert "[success-matches-request] requested \"a\", returned \"other\" at /resourceModel/Name" in result.message
    rejected = run_case(rulebreaker, Action.CREATE, {"Name": "a", "Id": "mine"}, strict=True)
    assert rejected.invocations == 0 and "not invoked" in rejected.message
