"""What a local stack holds: its resources, its events, its outputs, as DescribeStacks shows them."""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from cfnrun.events.stack import StackEvent
from cfnrun.model.random_ids import random_uuid
from cfnrun.stacks.statuses import is_settled
from cfnrun.stacks.template.parameters import NO_ECHO_MASK


_no_echo_data_given = False  # has any resource been given NoEcho data (then ``Stack._secret_data`` walks the stack's resources)


class _NoEcho:
    """``StackResource.no_echo``: the first resource ever given NoEcho data (however it is set: made, read back, assigned)
    turns on the walk that finds such data, which a stack without any need not take for every reason it masks."""

    def __get__(self, resource: Optional["StackResource"], owner: Any = None) -> bool:
        return False if resource is None else resource.__dict__.get("_no_echo", False)  # None: the dataclass's default

    def __set__(self, resource: "StackResource", value: bool) -> None:
        global _no_echo_data_given
        if value:
            _no_echo_data_given = True  # before the value is kept: no resource holds NoEcho data while the walk is off
        resource.__dict__["_no_echo"] = value


@dataclass
class StackResource:
    """A resource of the stack as the engine last left it."""

    logical_id: str
    type_name: str
    status: str
    reason: Optional[str] = None
    physical_id: Optional[str] = None
    ref: Any = None  # what Ref answers
    attributes: Dict[str, Any] = field(default_factory=dict)  # what Fn::GetAtt answers, by attribute name
    model: Optional[Dict[str, Any]] = None  # a user type's model as its handler last returned it
    properties: Optional[Dict[str, Any]] = None  # the resolved properties last applied
    updated_at: float = field(default_factory=time.time)
    metadata: Optional[Dict[str, Any]] = None
    no_echo: bool = _NoEcho()  # type: ignore[assignment]  # (False) its attributes are secret (a custom resource answered NoEcho): Fn::GetAtt reads them, nothing shows them

    @property
    def exists(self) -> bool:
        """Has a provider created it (and not deleted it)? Then a rollback or delete must remove it."""
        return self.physical_id is not None and self.status not in ("DELETE_COMPLETE", "DELETE_SKIPPED")


def shown_parameters(parameters: Dict[str, str], no_echo: Tuple[str, ...]) -> Dict[str, str]:
    """Parameter values as the API shows them: NoEcho ones masked."""
    return {key: NO_ECHO_MASK if key in no_echo else value for key, value in parameters.items()}


def _mask(text: str, value: Optional[str]) -> str:
    """``text`` with ``value`` replaced by ****: as it is, and as JSON or a Python repr quote it (an error message may)."""
    if not value:
        return text
    for form in dict.fromkeys((value, json.dumps(value)[1:-1], repr(value)[1:-1])):
        text = text.replace(form, NO_ECHO_MASK)
    return text


def values_mask(values: "Sequence[str]") -> Optional[Callable[[str], str]]:
    """What hides ``values`` in a console line (``mask_values``); None when there is nothing to hide."""
    return (lambda text: mask_values(text, values)) if values else None


def mask_values(text: str, values: "Sequence[Optional[str]]") -> str:
    """``text`` with each of ``values`` replaced by ****, as ``Stack.masked`` replaces a NoEcho parameter's."""
    for value in values:
        text = _mask(text, value)
    return text


def _texts(value: Any) -> List[str]:
    """The non-empty texts in ``value`` (numbers as text), longest first, so a longer secret is masked whole."""
    if isinstance(value, dict):
        found = [text for item in value.values() for text in _texts(item)]
    elif isinstance(value, list):
        found = [text for item in value for text in _texts(item)]
    elif value is None or value == "" or isinstance(value, bool):
        found = []
    else:
        found = [value if isinstance(value, str) else json.dumps(value)]
    return sorted(set(found), key=len, reverse=True)


@dataclass(frozen=True)
class StackOutput:
    key: str
    value: Any
    description: Optional[str] = None
    export_name: Optional[str] = None


@dataclass
class Stack:
    """A stack, for the life of the serve that holds it (or longer, with --state)."""

    stack_id: str
    name: str
    status: str
    template_body: str
    parameters: Dict[str, str]  # the values given or defaulted, as text; NoEcho ones still in clear (masked when shown)
    no_echo: Tuple[str, ...] = ()
    tags: Dict[str, str] = field(default_factory=dict)
    description: Optional[str] = None
    reason: Optional[str] = None
    disable_rollback: bool = False
    delete_on_failure: bool = False  # CreateStack's OnFailure DELETE: a failed create deletes the stack
    capabilities: Tuple[str, ...] = ()
    # what CreateStack, UpdateStack or an executed change set gave and DescribeStacks shows back; none of it acts
    # locally (no SNS topic is told of events, no alarm is watched, no role is assumed, no timeout is kept)
    notification_arns: Tuple[str, ...] = ()
    rollback_configuration: Dict[str, Any] = field(default_factory=dict)
    role_arn: Optional[str] = None
    timeout_in_minutes: Optional[int] = None
    termination_protection: bool = False  # EnableTerminationProtection: DeleteStack is refused while it is on
    deployment_config: Dict[str, Any] = field(default_factory=dict)  # DeploymentConfig as last given (Mode, DisableRollback)
    alias_name: Optional[str] = None  # SetAlias: a second name wherever a call takes StackName (``api/stack_aliases.py``)
    policy_body: Optional[str] = None  # the stack policy (StackPolicyBody) that guards its updates (``stack_policy.py``)
    change_set_id: Optional[str] = None  # the change set its last create or update carried out (CreateStack's and UpdateStack's their own)
    operation_id: Optional[str] = None  # the stack operation running or run last; its events carry it
    operations: List[Tuple[str, str]] = field(default_factory=list)  # (OperationType, OperationId) of each, oldest first
    created_at: float = field(default_factory=time.time)
    updated_at: Optional[float] = None
    deleted_at: Optional[float] = None
    resources: Dict[str, StackResource] = field(default_factory=dict)
    outputs: List[StackOutput] = field(default_factory=list)
    parent_id: Optional[str] = None  # a nested stack's parent and root (app/stacks/nested_stacks.py)
    root_id: Optional[str] = None
    events: List[StackEvent] = field(default_factory=list)
    on_event: Optional[Callable[[StackEvent], None]] = field(default=None, repr=False, compare=False)

    @property
    def settled(self) -> bool:
        return is_settled(self.status)

    def shown_parameters(self) -> Dict[str, str]:
        """The parameters as DescribeStacks shows them: NoEcho values masked."""
        return shown_parameters(self.parameters, self.no_echo)

    def masked(self, text: str) -> str:
        """``text`` with every NoEcho parameter's value, and every NoEcho custom resource's data, replaced by ****."""
        return mask_values(text, self.secrets())

    def secrets(self) -> List[Optional[str]]:
        """What ``masked`` replaces, in its order: found once, for masking many texts (a record written to --state)."""
        return [self.parameters.get(name) for name in self.no_echo] + self._secret_data()

    def masked_data(self, text: str) -> str:
        """``text`` with the data of every custom resource that answered NoEcho replaced by ****: how an output shows it
        (the service shows a NoEcho parameter in an output as it is, but masks NoEcho data read by Fn::GetAtt)."""
        return mask_values(text, self._secret_data())

    def _secret_data(self) -> List[Optional[str]]:
        if not _no_echo_data_given:  # no resource anywhere holds NoEcho data: masking a reason walks no stack (quadratic)
            return []
        return [value for resource in self.resources.values() if resource.no_echo for value in _texts(resource.attributes)]

    def begin(self, operation_type: str) -> str:
        """A new stack operation (CREATE_STACK, UPDATE_STACK, …): its id, which its events carry."""
        self.operation_id = random_uuid()
        self.operations.append((operation_type, self.operation_id))
        return self.operation_id

    def set_status(self, status: str, reason: Optional[str] = None, token: Optional[str] = None, detailed_status: Optional[str] = None) -> None:
        """The stack's own status, with its event (``detailed_status``: the event's DetailedStatus)."""
        self.status, self.reason = status, self.masked(reason) if reason else reason
        self.record(self.name, self.stack_id, "AWS::CloudFormation::Stack", status, reason, token=token, detailed_status=detailed_status)

    def set_resource_status(
        self, resource: StackResource, status: str, reason: Optional[str] = None, properties: Optional[str] = None, token: Optional[str] = None
    ) -> None:
        reason = self.masked(reason) if reason else reason
        resource.status, resource.reason, resource.updated_at = status, reason, time.time()
        self._event(resource.logical_id, resource.physical_id or "", resource.type_name, status, reason, properties, token)

    def record(
        self,
        logical_id: str,
        physical_id: str,
        resource_type: str,
        status: str,
        reason: Optional[str],
        properties: Optional[str] = None,
        token: Optional[str] = None,
        **hook: Optional[str],
    ) -> StackEvent:
        # Every event passes here: no reason (a handler's message, a schema error quoting a value) shows a secret.
        return self._event(logical_id, physical_id, resource_type, status, self.masked(reason) if reason else reason, properties, token, **hook)

    def _event_time(self) -> float:
        """Now, on the millisecond the API shows, and a millisecond after the stack's last event when that is later:
        clients order a stack's events by their Timestamp (CDK's progress display does), so no two may share one. The
        quarter-millisecond keeps the float on its millisecond when it is read back."""
        now = math.floor(time.time() * 1000)
        if self.events:
            now = max(now, math.floor(self.events[-1].timestamp * 1000) + 1)
        return (now + 0.25) / 1000

    def _event(
        self,
        logical_id: str,
        physical_id: str,
        resource_type: str,
        status: str,
        reason: Optional[str],  # masked already
        properties: Optional[str] = None,
        token: Optional[str] = None,
        **hook: Optional[str],
    ) -> StackEvent:
        event = StackEvent(
            event_id=random_uuid(),
            stack_id=self.stack_id,
            stack_name=self.name,
            logical_id=logical_id,
            physical_id=physical_id,
            resource_type=resource_type,
            timestamp=self._event_time(),
            status=status,
            reason=reason,
            properties=properties,
            client_request_token=token,
            operation_id=self.operation_id,
            **hook,
        )
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)
        return event
