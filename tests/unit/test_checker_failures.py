"""A contract check that fails is reported as a warning; the handler's answer stands."""
from __future__ import annotations

from typing import Any, Dict

from fakes import schema

from cfnrun.contract.checker import ContractChecker
from cfnrun.contract.shape import ShapeValidator
from cfnrun.contract.violations import CHECKER_FAILED
from cfnrun.model.protocol import Action


class BrokenShape(ShapeValidator):
    def problems(self, model: Dict[str, Any]) -> Any:
        raise ValueError("the validator broke")


def test_a_failing_check_becomes_a_warning_not_an_exception() -> None:
    checker = ContractChecker(schema(), Action.CREATE, {"Name": "a"}, None, shape=BrokenShape(schema()))
    found = checker.check_event(1, {"status": "SUCCESS", "resourceModel": {"Id": "t", "Name": "a"}})
    assert [(v.rule, v.is_error, v.invocation) for v in found] == [(CHECKER_FAILED, False, 1)]
    assert "ValueError: the validator broke" in found[0].message
