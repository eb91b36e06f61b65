"""What an operation reports while it runs: the events renderers, the history and checkers observe.

They live below the feature packages (invoker emits them; ui, history and app read them),
so a reader of events never has to import the code that produces them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Union

from cfnrun.contract.violations import Violation
from cfnrun.model.budgets import Budget
from cfnrun.model.endings import EndReason
from cfnrun.model.protocol import Action, OperationStatus, ProgressEvent
from cfnrun.runtime.outcome import InvocationOutcome


@dataclass
class OperationStarted:
    action: Action
    type_name: str
    function: str
    entrypoint: str
    invocation_budget: Budget
    operation_budget: Budget
    virtual_clock: bool


@dataclass
class InvocationCompleted:
    number: int
    outcome: InvocationOutcome
    progress: Optional[ProgressEvent]
    problem: Optional[str]  # why the response is not a usable ProgressEvent
    elapsed_s: float  # since the operation started, on the operation's clock


@dataclass
class InvocationRunning:
    """An invocation still running, every RUNNING_TICK_S of it: for a live progress line."""

    number: int
    running_s: float
    budget_s: float


@dataclass
class InvocationOutput:
    """Complete lines the handler wrote during a long call, as they arrive (after the first tick)."""

    number: int
    text: str


def not_yet_shown(logs: str, streamed: Optional[str]) -> str:
    """The part of a call's logs (its InvocationCompleted) that its InvocationOutput events did not carry."""
    if streamed and logs.startswith(streamed):
        return logs[len(streamed):]
    return logs


@dataclass
class ContractChecked:
    invocation: Optional[int]  # None for the request, checked before the first call
    violations: List[Violation]


@dataclass
class Waiting:
    next_number: int
    delay_s: float
    virtual: bool


@dataclass
class Retrying:
    """A FAILED answer with a retriable error code: the same request goes again after ``delay_s``."""

    next_number: int
    retry: int  # 1 for the first retry of this request
    retries: int  # the most the policy allows
    error_code: str
    delay_s: float


@dataclass
class WaitTick:
    remaining_s: float


@dataclass
class OperationResult:
    action: Action
    status: OperationStatus  # SUCCESS, FAILED, or IN_PROGRESS when stopped early
    reason: EndReason
    message: str
    invocations: int
    elapsed_s: float
    error_code: Optional[str] = None
    hint: Optional[str] = None
    cause: Optional[str] = None  # a FAILED answer's cause from the handler's output: the exception it raised
    resource_model: Optional[Dict[str, Any]] = None
    resource_models: Optional[List[Dict[str, Any]]] = field(default=None)
    callback_context: Optional[Dict[str, Any]] = None  # an operation stopped while IN_PROGRESS: where it stood
    violations: List[Violation] = field(default_factory=list)

    @property
    def succeeded(self) -> bool:
        return self.status is OperationStatus.SUCCESS


@dataclass
class OperationCompleted:
    result: OperationResult


OperationEvent = Union[
    OperationStarted, InvocationRunning, InvocationOutput, InvocationCompleted, ContractChecked, Retrying, Waiting, WaitTick, OperationCompleted
]
Observer = Callable[[OperationEvent], None]
