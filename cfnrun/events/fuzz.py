"""What ``cfnrun fuzz`` reports while it explores: its events and their JSON records.

The records follow the operation events' conventions (``events/encoding.py``): an ``event`` key
naming the kind, camelCase keys, durations with at most three decimals; the keys are listed in
docs/reference/json-events.md. Steps arrive already described (``fuzz/steps.py``), writeOnly
values masked.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Union

from cfnrun.events.encoding import DECIMALS


@dataclass
class FuzzStarted:
    type_name: str
    max_examples: int
    seed: Optional[int]
    actions: List[str]
    virtual_clock: bool
    faults: List[str] = field(default_factory=list)
    undeclared: List[str] = field(default_factory=list)  # actions asked for whose handler the schema does not declare: never called


@dataclass
class ExampleRun:
    """One generated sequence ran to its end (or to the step that failed)."""

    number: int  # examples run so far, this one included (shrinking runs count too)
    steps: List[str]  # the sequence, described
    failed: bool
    operations: int  # operations so far, in all examples
    elapsed_s: float


@dataclass
class FuzzCompleted:
    examples: int
    operations: int
    elapsed_s: float
    steps: List[str] = field(default_factory=list)  # the minimal failing sequence; empty when nothing failed
    failing_step: Optional[int] = None  # its index in ``steps``
    problems: List[str] = field(default_factory=list)
    history_id: Optional[int] = None  # where history keeps the case, for ``cfnrun replay``
    shrink_stopped: Optional[str] = None  # why shrinking stopped early (--shrink-time/--shrink-examples): not the smallest case

    @property
    def failed(self) -> bool:
        return bool(self.problems)

    @property
    def operations_per_second(self) -> float:
        return self.operations / self.elapsed_s if self.elapsed_s > 0 else 0.0


FuzzEvent = Union[FuzzStarted, ExampleRun, FuzzCompleted]
FuzzObserver = Callable[[FuzzEvent], None]


def case_lines(steps: List[str], failing: Optional[int], problems: List[str]) -> List[str]:
    """A sequence as printed: numbered requests, the problems under the step that showed them (a hint under its problem)."""
    out = []
    for index, step in enumerate(steps):
        out.append(f"{index + 1:>3}. {step}")
        if index == failing:
            for problem in problems:
                first, *more = problem.split("\n")  # a failed answer's hint comes on a line of its own
                out += [f"       ✗ {first}"] + [f"         {line}" for line in more]
    return out


def encode_fuzz(event: FuzzEvent) -> Dict[str, Any]:
    """The JSON record of a fuzz event."""
    if isinstance(event, FuzzStarted):
        return {
            "event": "fuzzStart",
            "typeName": event.type_name,
            "maxExamples": event.max_examples,
            "seed": event.seed,
            "actions": event.actions,
            "virtualClock": event.virtual_clock,
            "inject": event.faults,
            "undeclared": event.undeclared,
        }
    if isinstance(event, ExampleRun):
        return {
            "event": "example",
            "n": event.number,
            "steps": event.steps,
            "failed": event.failed,
            "operations": event.operations,
            "elapsedSeconds": round(event.elapsed_s, DECIMALS),
        }
    record: Dict[str, Any] = {
        "event": "fuzzResult",
        "failed": event.failed,
        "examples": event.examples,
        "operations": event.operations,
        "elapsedSeconds": round(event.elapsed_s, DECIMALS),
        "operationsPerSecond": round(event.operations_per_second, 1),
    }
    if event.failed:
        record.update(steps=event.steps, failingStep=event.failing_step, problems=event.problems, historyId=event.history_id,
                      shrinkStopped=event.shrink_stopped)
    return record
