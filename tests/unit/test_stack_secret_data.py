"""A reason masked in a stack with no NoEcho data walks none of its resources; NoEcho data, however given, is masked."""
from __future__ import annotations

import copy
from dataclasses import asdict
from typing import Any, Dict

import pytest

from cfnrun.stacks import records
from cfnrun.stacks.records import Stack, StackResource

SECRET = "hunter2-the-password"


class CountedResources(Dict[str, StackResource]):
    """A stack's resources that count how often they are walked."""

    walks = 0

    def values(self) -> Any:
        CountedResources.walks += 1
        return super().values()


def _stack(count: int) -> Stack:
    stack = Stack("arn:stack/s/1", "s", "CREATE_IN_PROGRESS", "{}", {})
    stack.resources = CountedResources({f"C{i}": StackResource(f"C{i}", "Test::Thing::Resource", "CREATE_COMPLETE", attributes={"Arn": f"arn:{i}"}) for i in range(count)})
    return stack


@pytest.fixture
def no_echo_data_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a serve where no custom resource has answered NoEcho yet."""
    monkeypatch.setattr(records, "_no_echo_data_given", False)
    CountedResources.walks = 0


def test_masking_reasons_in_a_stack_without_no_echo_data_walks_no_resources(no_echo_data_yet: None) -> None:
    stack = _stack(200)
    for index in range(200):
        stack.set_resource_status(stack.resources[f"C{index}"], "CREATE_IN_PROGRESS", "Resource creation Initiated")
    assert stack.masked(f"arn:7 and {SECRET}") == f"arn:7 and {SECRET}"
    assert CountedResources.walks == 0


@pytest.mark.parametrize(
    "given",
    [
        lambda stack: setattr(stack.resources["C3"], "no_echo", True),  # the engine keeps a custom resource's NoEcho answer
        lambda stack: stack.resources.__setitem__(
            "C3", StackResource(**{**asdict(stack.resources["C3"]), "no_echo": True})  # read back from --state
        ),
    ],
    ids=["assigned", "constructed"],
)
def test_no_echo_data_however_given_is_masked_from_then_on(no_echo_data_yet: None, given: Any) -> None:
    stack = _stack(5)
    stack.resources["C3"].attributes = {"Password": SECRET}
    assert stack.masked(f"it failed: {SECRET}") == f"it failed: {SECRET}"  # not NoEcho data yet
    given(stack)
    assert stack.masked(f"it failed: {SECRET}") == "it failed: ****"
    assert stack.masked_data(f"output {SECRET}") == "output ****"
    event = stack.record("C3", "p", "Custom::Thing", "CREATE_FAILED", f"bad {SECRET!r}")
    assert event.reason == "bad '****'"
    assert CountedResources.walks > 0


def test_a_resource_keeps_its_no_echo_flag_through_copies_and_records(no_echo_data_yet: None) -> None:
    resource = StackResource("C", "Custom::Thing", "CREATE_COMPLETE", no_echo=True)
    assert resource.no_echo and asdict(resource)["no_echo"] is True
    assert copy.deepcopy(resource).no_echo and copy.deepcopy(resource) == resource
    assert not StackResource("D", "Custom::Thing", "CREATE_COMPLETE").no_echo
    assert "no_echo=True" in repr(resource)
