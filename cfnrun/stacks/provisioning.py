"""What the engine asks of whoever provisions a resource type, and what it gets back.

The engine knows stacks, not types: the app hands it one ``Provisioner`` per kind of type
(a user's type through the one invoker, an AWS::* type on the AWS endpoint, a custom
resource through a served function). Each call is one resource operation, awaited until it
ends; a failure is ``ProvisioningFailed`` with the reason a stack event shows.
"""
from __future__ import annotations

import enum
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Optional, Protocol, Tuple, runtime_checkable

from cfnrun.stacks.cancellation import Cancellation


def property_problem(logical_id: str, *lines: str) -> str:
    """The service's refusal of a resource's properties: each line a JSON pointer and what is wrong there
    (``#: required key [Name] not found``), below the sentence that names the resource."""
    return f"Properties validation failed for resource {logical_id} with message:\n" + "\n".join(lines)


def required_key(name: str) -> str:
    """The line of ``property_problem`` for a required property the resource lacks."""
    return f"#: required key [{name}] not found"


class ProvisioningFailed(Exception):
    """The resource operation failed; ``reason`` is the ResourceStatusReason. ``physical_id``: the physical resource a
    failed create named all the same (a custom resource's FAILED answer carries one): the resource keeps it, so the
    rollback or DeleteStack sends it a delete, as the service does."""

    def __init__(self, reason: str, error_code: Optional[str] = None, physical_id: Optional[str] = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.error_code = error_code
        self.physical_id = physical_id


class NoProvisioner(Exception):
    """No provisioner serves this type."""


class Replacement(enum.Enum):
    """Whether changing a property replaces the resource (the change set's RequiresRecreation)."""

    NEVER = "Never"
    CONDITIONALLY = "Conditionally"
    ALWAYS = "Always"


@dataclass(frozen=True)
class StackContext:
    """The stack a resource operation is part of."""

    stack_id: str
    stack_name: str
    region: str
    account_id: str
    tags: Dict[str, str] = field(default_factory=dict)
    previous_tags: Optional[Dict[str, str]] = None
    # what no output may show: its NoEcho parameters' values (before and after an update), its NoEcho custom resource data,
    # and the values of its secure dynamic references; the calls made for it mask them in console lines and history records
    secrets: Tuple[str, ...] = ()


@dataclass(frozen=True)
class ResourceWork:
    """One resource operation: what to create, update or delete."""

    stack: StackContext
    logical_id: str
    type_name: str
    properties: Dict[str, Any]
    previous_properties: Optional[Dict[str, Any]] = None
    physical_id: Optional[str] = None
    model: Optional[Dict[str, Any]] = None  # the model the type's handler last returned (update, delete)
    attributes_wanted: FrozenSet[str] = frozenset()  # the Fn::GetAtt names the template uses
    retain: bool = False  # DeletionPolicy Retain: the resource leaves the stack but stays
    client_request_token: Optional[str] = None
    note: Callable[[str], None] = field(default=lambda reason: None, compare=False)  # an IN_PROGRESS reason for the events
    # an IN_PROGRESS answer that names the resource, with its callbackContext (``in_flight.py``): the first one, and only
    # while the stack knows no physical id for it (``in_flight.py`` keeps that one; later answers would change nothing)
    progress: Callable[["Provisioned", Optional[Dict[str, Any]]], None] = field(default=lambda made, context: None, compare=False)
    # the stack operation's (a create's, an update's): once cancelled, the operation makes no handler call after the one in
    # flight and ends with OperationStopped (``cancellation.py``); None: nothing cancels it but serve stopping
    cancellation: Optional[Cancellation] = field(default=None, compare=False)


@dataclass(frozen=True)
class Provisioned:
    """A created or updated resource as the stack keeps it."""

    physical_id: str
    ref: Any
    attributes: Dict[str, Any] = field(default_factory=dict)  # the wanted Fn::GetAtt values, by name ("A.B" for nested)
    model: Optional[Dict[str, Any]] = None
    no_echo: bool = False  # the attributes are secret (a custom resource answered NoEcho): masked wherever shown


class Provisioner(Protocol):
    def validate(self, type_name: str, logical_id: str, properties: Dict[str, Any]) -> Optional[str]:
        """The reason the properties are refused before any call ("Properties validation failed …"), or None."""

    def replacement(self, type_name: str, property_path: str) -> Replacement:
        """Does changing the top-level property ``property_path`` replace the resource?"""

    def shown(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        """The properties as events may show them (writeOnly values masked)."""

    async def create(self, work: ResourceWork) -> Provisioned: ...

    async def update(self, work: ResourceWork) -> Provisioned: ...

    async def delete(self, work: ResourceWork) -> None: ...


@runtime_checkable
class AttributeReader(Protocol):
    """A provisioner that reads an existing resource's attributes again: for an update whose template reads, by
    Fn::GetAtt, an attribute of a resource it leaves unchanged that nothing read when the resource was provisioned."""

    async def read_attributes(self, work: ResourceWork) -> Dict[str, Any]:
        """The values of ``work.attributes_wanted`` the resource has now; its properties are unchanged, its handler not called."""


@runtime_checkable
class AttributeNames(Protocol):
    """A provisioner that knows, from its types' schemas, which Fn::GetAtt attributes a type has (a custom resource's
    provisioner does not: its function answers whatever it likes)."""

    def lacks_attribute(self, type_name: str, attribute: str) -> bool:
        """Is ``attribute`` (``A`` or ``A.B``) surely no attribute of ``type_name``? False when it cannot tell."""

    def attribute_type(self, type_name: str, attribute: str) -> Optional[str]:
        """The JSON type of ``attribute``'s values (``array``, ``string`` ...) as the type's schema gives it; None when it
        cannot tell."""


def forward_methods(wrapper: object, inner: object) -> None:
    """Give ``wrapper`` (a provisioner that changes some calls of ``inner`` and passes the rest on) each public method of
    ``inner`` its own class does not define, bound to ``inner``, as an attribute of its own.

    A ``__getattr__`` that passes them on is not enough: from Python 3.12 on, ``isinstance`` against a runtime-checkable
    protocol (``AttributeNames``, ``AttributeReader``, ``Importer``) looks the protocol's methods up statically, without
    calling ``__getattr__``, so the wrapper would seem to have none of them (imports refused, attribute names not
    checked). Properties are not read here."""
    own = type(wrapper)
    for name in dir(inner):
        if name.startswith("_") or hasattr(own, name):
            continue
        found = inspect.getattr_static(inner, name)
        if inspect.isfunction(found) or inspect.ismethod(found) or isinstance(found, (staticmethod, classmethod)):
            setattr(wrapper, name, getattr(inner, name))


class Provisioners(Protocol):
    def for_type(self, type_name: str) -> Provisioner:
        """The provisioner of ``type_name``; raises NoProvisioner (its message lists the served types)."""
