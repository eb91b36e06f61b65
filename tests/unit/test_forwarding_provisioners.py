"""The provisioners that wrap another (dynamic references resolved, inline Lambda functions served) keep what it can do.

The engine asks ``isinstance(provisioner, Importer)`` (and ``AttributeNames``, ``AttributeReader``) before an import,
an output's attribute check or a read of attributes again. From Python 3.12 on, that check looks the protocol's methods
up statically, as ``inspect.getattr_static`` does, without calling ``__getattr__``: a wrapper that only forwarded them by
``__getattr__`` looked like a provisioner that can do none of them, and served types could not be imported. The check
here is the static lookup itself, so it tells the difference on every Python the suite runs on.
"""
from __future__ import annotations

import inspect
from typing import Any, Dict, List, Optional, Type

import pytest

from cfnrun.app.stacks.dynamic_references import EndpointValues, ResolvingProvisioner, ResolvingProvisioners
from cfnrun.app.stacks.stack_functions import LocalLambdas
from cfnrun.stacks.imports import Importer
from cfnrun.stacks.provisioning import AttributeNames, AttributeReader

PROTOCOLS = [Importer, AttributeNames, AttributeReader]


def statically_provides(provisioner: object, protocol: Type[Any]) -> bool:
    """Does ``provisioner`` have each of ``protocol``'s methods when looked up as Python 3.12's isinstance looks them up?"""
    names = [name for name, value in vars(protocol).items() if inspect.isfunction(value) and not name.startswith("_")]
    assert names, protocol
    for name in names:
        try:
            inspect.getattr_static(provisioner, name)
        except AttributeError:
            return False
    return True


class CapableTypes:
    """A provisioner of served types, as ``UserTypes`` is: it imports, knows attribute names and reads attributes again."""

    def __init__(self) -> None:
        self.read_again: List[str] = []

    def primary_identifier(self, type_name: str) -> Optional[List[str]]:
        return ["Id"]

    async def read_for_import(self, work: Any, identifier: Dict[str, str]) -> Any:
        return identifier

    def lacks_attribute(self, type_name: str, attribute: str) -> bool:
        return attribute == "Missing"

    def attribute_type(self, type_name: str, attribute: str) -> Optional[str]:
        return "string"

    async def read_attributes(self, work: Any) -> Dict[str, Any]:
        self.read_again.append(work)
        return {}

    @staticmethod
    def shown(type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        return properties

    @property
    def expensive(self) -> str:
        raise AssertionError("a property of the inner provisioner is read only when asked for")


class PlainTypes:
    """A provisioner that can do none of those (a custom resource's)."""

    async def create(self, work: Any) -> Any:
        return None


def _wrappers(inner: object) -> List[object]:
    return [ResolvingProvisioner(inner, EndpointValues(None, "us-east-1")), LocalLambdas(inner, object())]  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda p: p.__name__)
def test_a_wrapper_of_a_capable_provisioner_provides_what_it_does_as_isinstance_looks_it_up(protocol: Type[Any]) -> None:
    inner = CapableTypes()
    assert statically_provides(inner, protocol)
    for wrapper in _wrappers(inner):
        assert statically_provides(wrapper, protocol), type(wrapper).__name__
        assert isinstance(wrapper, protocol)


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda p: p.__name__)
def test_a_wrapper_of_a_plain_provisioner_provides_nothing_more(protocol: Type[Any]) -> None:
    for wrapper in _wrappers(PlainTypes()):
        assert not statically_provides(wrapper, protocol)
        assert not isinstance(wrapper, protocol)


def test_the_forwarded_methods_are_the_inner_provisioner_s_own_and_the_wrapper_keeps_its_own() -> None:
    inner = CapableTypes()
    resolving, lambdas = _wrappers(inner)
    assert resolving.primary_identifier("Org::Svc::Thing") == ["Id"]  # type: ignore[attr-defined]
    assert lambdas.lacks_attribute("AWS::SNS::Topic", "Missing") is True  # type: ignore[attr-defined]
    assert resolving.shown("Org::Svc::Thing", {"A": 1}) == {"A": 1}  # type: ignore[attr-defined]
    assert type(resolving).create is ResolvingProvisioner.create  # its own create, which resolves the references first
    assert resolving.create.__func__ is ResolvingProvisioner.create  # type: ignore[attr-defined]


def test_one_wrapper_per_inner_provisioner() -> None:
    capable, plain = CapableTypes(), PlainTypes()

    class Router:
        def for_type(self, type_name: str) -> Any:
            return capable if type_name.startswith("Org::") else plain

    router = ResolvingProvisioners(Router(), EndpointValues(None, "us-east-1"))  # type: ignore[arg-type]
    first, second, other = router.for_type("Org::Svc::Thing"), router.for_type("Org::Svc::Other"), router.for_type("Custom::X")
    assert first is second and first is not other
    assert isinstance(first, Importer) and not isinstance(other, Importer)
