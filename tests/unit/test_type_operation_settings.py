"""The settings a served operation is recorded with (for ``cfnrun replay``) are made once for a stack's many resources,
and made again whenever what they are made of changes."""
from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

from cfnrun.app.type_operations import TypeOperations
from cfnrun.contract.checker import ContractMode
from cfnrun.model.budgets import Budgets
from cfnrun.model.protocol import Action
from cfnrun.runtime.spec import RuntimeSettings
from cfnrun.ui.console import Console


def _operations() -> TypeOperations:
    served: Any = SimpleNamespace(budgets=Budgets())
    return TypeOperations(served, Console(), virtual_clock=True)


def _project(function: str = "TypeFunction") -> Any:
    return SimpleNamespace(type_name="Test::Thing::Resource", type_function=lambda: SimpleNamespace(logical_id=function))


def test_the_settings_of_a_stacks_many_operations_are_made_once() -> None:
    operations, project = _operations(), _project()
    registry: Any = SimpleNamespace(settings=RuntimeSettings(region="eu-west-1"))
    first = operations._ran_with(project, registry, Action.CREATE, True)
    assert all(operations._ran_with(project, registry, Action.CREATE, True) is first for _ in range(50))
    assert (first.action, first.region, first.virtual_clock, first.string_primitives) == (Action.CREATE, "eu-west-1", True, True)


def test_the_settings_are_made_again_when_what_they_are_made_of_changes() -> None:
    operations, project = _operations(), _project()
    registry: Any = SimpleNamespace(settings=RuntimeSettings(region="eu-west-1"))
    first = operations._ran_with(project, registry, Action.CREATE, True)
    assert operations._ran_with(project, registry, Action.DELETE, True).action is Action.DELETE
    assert operations._ran_with(project, registry, Action.CREATE, False).string_primitives is False
    assert operations._ran_with(_project("Other"), registry, Action.CREATE, True).function == "Other"
    registry.settings = replace(registry.settings, region="us-west-2", log_level="DEBUG")  # a reload's new settings
    again = operations._ran_with(project, registry, Action.CREATE, True)
    assert (again.region, again.log_level) == ("us-west-2", "DEBUG")
    operations.contract = ContractMode.STRICT
    assert operations._ran_with(project, registry, Action.CREATE, True).contract is ContractMode.STRICT
    operations.budgets = Budgets(time_scale=2.0)
    assert operations._ran_with(project, registry, Action.CREATE, True).time_scale == 2.0
    assert first.region == "eu-west-1"  # what an earlier operation was recorded with is left as it was


def test_the_record_of_shared_settings_is_worked_out_once_and_each_operation_gets_its_own(monkeypatch: Any) -> None:
    from cfnrun.app import history
    from cfnrun.app.options import to_record

    made: list = []

    def counted(settings: Any) -> Any:
        made.append(settings)
        return to_record(settings)

    monkeypatch.setattr(history, "to_record", counted)
    operations, project = _operations(), _project()
    registry: Any = SimpleNamespace(settings=RuntimeSettings(region="eu-west-1"))
    shared = operations._ran_with(project, registry, Action.CREATE, True)
    records = [history.settings_record(shared) for _ in range(20)]
    assert made == [shared]
    assert all(record == to_record(shared) for record in records)
    records[0]["region"] = "changed"  # each operation's record is its own
    assert history.settings_record(shared)["region"] == "eu-west-1"
    other = operations._ran_with(project, registry, Action.DELETE, True)  # other settings: their own record
    assert history.settings_record(other) == to_record(other) and made == [shared, other]
