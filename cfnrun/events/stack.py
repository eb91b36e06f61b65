"""What a stack reports as it moves (``StackEvent``, one line of DescribeStackEvents), what ``cfnrun stack
test`` reports around those events (its steps and its verdict), and their JSON records.

The stack engine (``stacks/``) writes StackEvents; the terminal timeline and ``--json`` (``ui/``)
read them: so the event lives here, below both. The records follow the operation events'
conventions (``events/encoding.py``): an ``event`` key naming the kind, camelCase keys,
durations with at most three decimals; docs/reference/json-events.md lists the keys. What
arrives here is already masked: the engine writes NoEcho parameters and writeOnly properties as
``****`` in an event's reason and properties, and a step's parameters come with NoEcho values masked.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Union

from cfnrun.contract.violations import Violation
from cfnrun.events.encoding import DECIMALS


@dataclass(frozen=True)
class StackEvent:
    """One line of DescribeStackEvents."""

    event_id: str
    stack_id: str
    stack_name: str
    logical_id: str
    physical_id: str
    resource_type: str
    timestamp: float
    status: str
    reason: Optional[str] = None
    properties: Optional[str] = None  # ResourceProperties as JSON text, masked
    client_request_token: Optional[str] = None
    hook_type: Optional[str] = None  # a hook's event: the hook, its HookStatus, reason, invocation point and failure mode
    hook_status: Optional[str] = None
    hook_status_reason: Optional[str] = None
    hook_invocation_point: Optional[str] = None
    hook_failure_mode: Optional[str] = None
    hook_invocation_id: Optional[str] = None  # one hook invocation's events share it; its hook result's HookResultId
    operation_id: Optional[str] = None  # the stack operation it belongs to (DescribeEvents groups by it)
    detailed_status: Optional[str] = None  # VALIDATION_FAILED: the template was refused as the operation started, its reason says where


@dataclass(frozen=True)
class StackTestStarted:
    stack_name: str
    template: str
    steps: List[str]  # each step described: "create", "update NodeCount=2", "delete"
    virtual_clock: bool
    aws_endpoint: Optional[str] = None


@dataclass(frozen=True)
class StepStarted:
    number: int  # from 1
    total: int
    kind: str  # create | update | delete
    parameters: Dict[str, str]  # what the step sets (all of them for create, the changed ones for an update); NoEcho masked


@dataclass(frozen=True)
class StepProgress:
    """Live only (no record): the resources whose handlers are still at work, while a step runs."""

    number: int
    in_progress: List[str]  # "LogicalResourceId STATUS"
    elapsed_s: float


@dataclass(frozen=True)
class StepCompleted:
    number: int
    kind: str
    status: str  # the stack's status once the step settled (DELETE_COMPLETE for a delete)
    ok: bool
    elapsed_s: float
    reason: Optional[str] = None  # the stack's status reason, or why the step was refused


@dataclass(frozen=True)
class ResourceViolation:
    """A contract violation the checks found in one of the stack's handler calls."""

    logical_id: str
    type_name: str
    action: str
    violation: Violation

    @property
    def is_error(self) -> bool:
        return self.violation.is_error

    def line(self) -> str:
        return f"{self.logical_id} ({self.type_name}) {self.action}: {self.violation.line()}"


@dataclass(frozen=True)
class Leftover:
    """A resource the stack made that is still there once it should not be."""

    logical_id: str
    type_name: str
    physical_id: str
    reason: str  # how it was found: "READ still answers SUCCESS", "its stack on the AWS endpoint is DELETE_FAILED"

    def line(self) -> str:
        return f"{self.logical_id} ({self.type_name}) {self.physical_id}: {self.reason}"


@dataclass(frozen=True)
class StackTestCompleted:
    stack_name: str
    steps_run: int
    steps_total: int
    steps_failed: List[str]  # "update Folder=archive: UPDATE_ROLLBACK_COMPLETE"
    resources: int  # physical resources the stack made, replacements included
    checked_gone: int  # deleted resources confirmed gone (READ NotFound, the endpoint's stack deleted)
    unchecked: List[str]  # deleted resources nothing can look up (custom resources)
    violations: List[ResourceViolation]
    failing_violations: int  # those that fail the run (MUST, with --contract strict)
    leftovers: List[Leftover]
    kept: List[str]  # --keep: what the stack still holds, "LogicalResourceId (Type) PhysicalResourceId"
    elapsed_s: float
    problems: List[str] = field(default_factory=list)  # everything that failed the run, one line each
    kept_in: Optional[str] = None  # --state: the folder that keeps the stack (with --keep, ``cfnrun serve --state`` serves it again)

    @property
    def failed(self) -> bool:
        return bool(self.problems)


StackTestEvent = Union[StackTestStarted, StepStarted, StackEvent, StepProgress, StepCompleted, StackTestCompleted]
StackTestObserver = Callable[[StackTestEvent], None]


def encode_stack_event(event: StackEvent) -> Dict[str, Any]:
    """A stack event's record: DescribeStackEvents' fields, in its words."""
    record: Dict[str, Any] = {
        "event": "stackEvent",
        "eventId": event.event_id,
        "stackName": event.stack_name,
        "stackId": event.stack_id,
        "logicalResourceId": event.logical_id,
        "physicalResourceId": event.physical_id,
        "resourceType": event.resource_type,
        "timestamp": round(event.timestamp, DECIMALS),
        "resourceStatus": event.status,
    }
    optional = {
        "resourceStatusReason": event.reason,
        "resourceProperties": event.properties,
        "clientRequestToken": event.client_request_token,
        "hookType": event.hook_type,
        "hookStatus": event.hook_status,
        "hookStatusReason": event.hook_status_reason,
        "hookInvocationPoint": event.hook_invocation_point,
        "hookFailureMode": event.hook_failure_mode,
        "hookInvocationId": event.hook_invocation_id,
        "detailedStatus": event.detailed_status,
    }
    record.update({key: value for key, value in optional.items() if value})
    return record


def encode_stack_test(event: StackTestEvent) -> Optional[Dict[str, Any]]:
    """The JSON record of a ``cfnrun stack test`` event; None for the live-only ones."""
    if isinstance(event, StackEvent):
        return encode_stack_event(event)
    if isinstance(event, StackTestStarted):
        return {
            "event": "stackTestStart",
            "stackName": event.stack_name,
            "template": event.template,
            "steps": event.steps,
            "virtualClock": event.virtual_clock,
            "awsEndpoint": event.aws_endpoint,
        }
    if isinstance(event, StepStarted):
        return {"event": "stackStep", "n": event.number, "of": event.total, "kind": event.kind, "parameters": event.parameters}
    if isinstance(event, StepCompleted):
        return {
            "event": "stackStepResult",
            "n": event.number,
            "kind": event.kind,
            "ok": event.ok,
            "stackStatus": event.status,
            "reason": event.reason,
            "elapsedSeconds": round(event.elapsed_s, DECIMALS),
        }
    if isinstance(event, StackTestCompleted):
        return {
            "event": "stackTestResult",
            "failed": event.failed,
            "stackName": event.stack_name,
            "stepsRun": event.steps_run,
            "stepsTotal": event.steps_total,
            "stepsFailed": event.steps_failed,
            "resources": event.resources,
            "checkedGone": event.checked_gone,
            "unchecked": event.unchecked,
            "violations": [_violation(v) for v in event.violations],
            "failingViolations": event.failing_violations,
            "leftovers": [_leftover(each) for each in event.leftovers],
            "kept": event.kept,
            "keptIn": event.kept_in,
            "problems": event.problems,
            "elapsedSeconds": round(event.elapsed_s, DECIMALS),
        }
    return None


def _violation(violation: ResourceViolation) -> Dict[str, Any]:
    return {"logicalResourceId": violation.logical_id, "resourceType": violation.type_name, "action": violation.action, **violation.violation.wire()}


def _leftover(leftover: Leftover) -> Dict[str, Any]:
    return {
        "logicalResourceId": leftover.logical_id,
        "resourceType": leftover.type_name,
        "physicalResourceId": leftover.physical_id,
        "reason": leftover.reason,
    }
