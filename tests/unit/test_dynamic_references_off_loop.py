"""A resource's properties go through a thread only when a dynamic reference there asks the endpoint for a value."""
from __future__ import annotations

import asyncio
import threading
from typing import Any, Dict, List

import pytest

from cfnrun.app.stacks.dynamic_references import ResolvingProvisioner, refers
from cfnrun.stacks.provisioning import Provisioned, ResourceWork, StackContext


class Values:
    def __init__(self) -> None:
        self.read_on: List[str] = []

    def value(self, service: str, key: str) -> str:
        self.read_on.append(threading.current_thread().name)
        return f"{service}:{key}"


class Kept:
    def __init__(self) -> None:
        self.works: List[ResourceWork] = []

    async def create(self, work: ResourceWork) -> Provisioned:
        self.works.append(work)
        return Provisioned("id", "id")

    async def update(self, work: ResourceWork) -> Provisioned:
        self.works.append(work)
        return Provisioned("id", "id")


def _work(properties: Dict[str, Any], previous: Any = None) -> ResourceWork:
    return ResourceWork(StackContext("stack-id", "stack", "us-east-1", "123456789012"), "R", "Cfnrun::Test::Thing", properties, previous)


def test_properties_without_a_reference_are_handed_on_as_a_copy_without_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_thread(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("went to a thread")

    monkeypatch.setattr(asyncio, "to_thread", no_thread)
    inner, values = Kept(), Values()
    properties = {"Name": "a", "Tags": [{"Key": "k", "Value": "resolve: not one"}], "Count": 2}
    previous = {"Name": "b"}
    provisioner = ResolvingProvisioner(inner, values)  # type: ignore[arg-type]
    asyncio.run(provisioner.create(_work(properties)))
    asyncio.run(provisioner.update(_work(properties, previous)))
    assert [w.properties for w in inner.works] == [properties, properties] and inner.works[1].previous_properties == previous
    assert inner.works[0].properties is not properties and inner.works[0].properties["Tags"] is not properties["Tags"]
    assert values.read_on == []


def test_a_reference_is_read_off_the_event_loop_and_replaced() -> None:
    inner, values = Kept(), Values()
    provisioner = ResolvingProvisioner(inner, values)  # type: ignore[arg-type]
    asyncio.run(provisioner.create(_work({"Name": "{{resolve:ssm:/app/name}}", "Other": ["x"]})))
    assert inner.works[0].properties == {"Name": "ssm:/app/name", "Other": ["x"]}
    assert values.read_on and threading.main_thread().name not in values.read_on


def test_a_reference_is_found_in_any_string_value_and_nowhere_else() -> None:
    assert refers({"A": [{"B": "x {{resolve:ssm:p}} y"}]})
    assert not refers({"{{resolve:ssm:p}}": "key, not a value"}) and not refers(["{resolve:ssm:p}", 1, None, True])
