"""Stack operations and their events as DescribeEvents shows them, grouped by OperationId.

Every stack operation (CreateStack, UpdateStack, DeleteStack, a change set's execution,
ContinueUpdateRollback) and every change set's creation has an OperationId; each stack event
carries the id of the operation that wrote it, and a pre-deployment validation's failures are
that operation's ``VALIDATION_ERROR`` events. The operation's status is IN_PROGRESS while it runs,
then SUCCEEDED or FAILED.

Inferred rather than read (the API reference names the values, not when each is used): the
stack's own status events are ``STACK_EVENT``s, a resource's are ``PROGRESS_EVENT``s unless they
are failures (``PROVISIONING_ERROR``), a failed hook's are ``HOOK_INVOCATION_ERROR``s; a rollback
is part of the operation that failed; ``FailedEvents`` keeps the errors and the FAILED statuses.
"""
from __future__ import annotations

import time
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional

from cfnrun.events.stack import StackEvent
from cfnrun.stacks.records import Stack
from cfnrun.stacks.validation import ValidationFailure

SUCCEEDED = frozenset({"CREATE_COMPLETE", "UPDATE_COMPLETE", "DELETE_COMPLETE", "IMPORT_COMPLETE"})
ERRORS = frozenset({"VALIDATION_ERROR", "PROVISIONING_ERROR", "HOOK_INVOCATION_ERROR"})


@dataclass(frozen=True)
class ValidationEvent:
    """One failure of an operation's pre-deployment validation."""

    event_id: str
    stack_id: str
    operation_id: str
    operation_type: str
    failure: ValidationFailure
    timestamp: float


@dataclass(frozen=True)
class OperationEvent:
    """One row of DescribeEvents: a stack event or a validation failure, with its operation and the operation's status."""

    operation_type: str
    operation_status: str
    event_type: str
    stack_event: Optional[StackEvent] = None
    validation: Optional[ValidationEvent] = None

    @property
    def timestamp(self) -> float:
        if self.stack_event is not None:
            return self.stack_event.timestamp
        assert self.validation is not None
        return self.validation.timestamp


@dataclass
class OperationLog:
    """The validation events of every operation, and each change set's operation, by id."""

    validations: Dict[str, List[ValidationEvent]] = field(default_factory=dict)  # by operation id
    change_set_operations: Dict[str, str] = field(default_factory=dict)  # change set id → the operation that created it
    kept: Optional[Callable[[str, List[Dict[str, Any]]], None]] = None  # writes a stack's new validation events (--state)

    def validated(self, stack_id: str, operation_id: str, operation_type: str, failures: List[ValidationFailure]) -> None:
        now = time.time()
        events = [ValidationEvent(str(uuid.uuid4()), stack_id, operation_id, operation_type, failure, now) for failure in failures]
        self.validations[operation_id] = events
        if self.kept is not None:
            self.kept(stack_id, [asdict(e) for e in events])

    def restore(self, records: List[Dict[str, Any]]) -> None:
        """Read back the validation events ``kept`` wrote."""
        for record in records:
            event = ValidationEvent(**{**record, "failure": ValidationFailure(**record["failure"])})
            self.validations.setdefault(event.operation_id, []).append(event)

    def of_stack(self, stack: Stack, operation_id: Optional[str] = None) -> List[OperationEvent]:
        """The events of ``stack``'s operations (or of one of them), newest first."""
        found: List[OperationEvent] = []
        for kind, operation in stack.operations:
            if operation_id is not None and operation != operation_id:
                continue
            events = [e for e in stack.events if e.operation_id == operation]
            status = _status(events, operation == stack.operation_id and not stack.settled)
            found += [OperationEvent(kind, status, _event_type(stack, e), stack_event=e) for e in events]
            found += [OperationEvent(kind, status, "VALIDATION_ERROR", validation=v) for v in self.validations.get(operation, [])]
        return sorted(found, key=lambda e: e.timestamp, reverse=True)

    def of_change_set(self, change_set_id: str, status: str) -> List[OperationEvent]:
        """The events of a change set's creation: its validation failures."""
        operation = self.change_set_operations.get(change_set_id)
        if operation is None:
            return []
        shown = "FAILED" if status == "FAILED" else ("SUCCEEDED" if status == "CREATE_COMPLETE" else "IN_PROGRESS")
        return [OperationEvent("CREATE_CHANGESET", shown, "VALIDATION_ERROR", validation=v) for v in self.validations.get(operation, [])]

    def change_set_of(self, operation_id: str) -> Optional[str]:
        """The change set whose creation ``operation_id`` is."""
        return next((c for c, o in self.change_set_operations.items() if o == operation_id), None)


def only_failed(events: List[OperationEvent]) -> List[OperationEvent]:
    """DescribeEvents' FailedEvents filter."""
    return [e for e in events if e.event_type in ERRORS or (e.stack_event is not None and e.stack_event.status.endswith("_FAILED"))]


def _status(events: List[StackEvent], running: bool) -> str:
    if running:
        return "IN_PROGRESS"
    last = next((e for e in reversed(events) if e.resource_type == "AWS::CloudFormation::Stack" and e.logical_id == e.stack_name), None)
    if last is None or last.status.endswith("_IN_PROGRESS"):
        return "IN_PROGRESS" if last is not None else "FAILED"
    return "SUCCEEDED" if last.status in SUCCEEDED else "FAILED"


def _event_type(stack: Stack, event: StackEvent) -> str:
    if event.hook_status in ("HOOK_COMPLETE_FAILED", "HOOK_FAILED"):
        return "HOOK_INVOCATION_ERROR"
    if event.logical_id == stack.name and event.resource_type == "AWS::CloudFormation::Stack":
        return "STACK_EVENT"
    return "PROVISIONING_ERROR" if event.status.endswith("_FAILED") else "PROGRESS_EVENT"
