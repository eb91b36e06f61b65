"""The expected state of the resources a sequence made, and the checks of every step's outcome.

``SequenceRun`` sends each step through an ``OperationRunner`` (the app layer's: the one invoker,
on warm workers, with the contract checker) and compares what came back with what the contract
and the steps before it promise:

- every MUST of the handler contract (the checker's violations of the answers);
- read-after-write: a READ returns what the last CREATE or UPDATE asked for (``contract/compare.py``:
  writeOnly properties left out, ``propertyTransform`` applied, unordered arrays as sets);
- list membership: a LIST names every resource that exists;
- the expected failures: a createOnly change is NotUpdatable, a deleted resource NotFound, a
  second CREATE of a caller-chosen identifier AlreadyExists.

The hypothesis exploration (``explore.py``) and ``cfnrun replay`` run steps through the same class,
so a recorded case is judged exactly as it was found.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Protocol

from cfnrun.contract import violations as rules
from cfnrun.contract.compare import mismatches
from cfnrun.events.operation import OperationResult
from cfnrun.fuzz.steps import Finding, Step
from cfnrun.model.action import Action
from cfnrun.model.identifiers import identifier_names, identifier_of
from cfnrun.model.schema import ResourceSchema

# Rules about the request itself: fuzzing sends a createOnly change on purpose, and the rest are cfnrun's to keep.
REQUEST_RULES = {rules.REQUEST_VALID.id, rules.REQUEST_NO_READ_ONLY.id, rules.UPDATE_CREATE_ONLY.id, rules.REQUEST_IDENTIFIER.id}


class OperationRunner(Protocol):
    """Runs one operation to its end, as ``cfnrun invoke`` would, with the contract checked."""

    def run(self, action: Action, desired: Dict[str, Any], previous: Optional[Dict[str, Any]]) -> OperationResult: ...


class SequenceFailed(Exception):
    """A step's outcome broke the contract or the expected state; carries the sequence up to it."""

    def __init__(self, finding: Finding) -> None:
        super().__init__("; ".join(finding.problems))
        self.finding = finding


@dataclass
class Resource:
    """One resource the sequence made: its latest model and what a READ should return."""

    model: Dict[str, Any]  # the latest model the handler returned (identifiers, readOnly values)
    expected: Optional[Dict[str, Any]]  # what was last asked for; None when an injected fault left it unknown
    exists: bool = True


@dataclass
class SequenceRun:
    schema: ResourceSchema
    runner: OperationRunner
    strict: bool = True  # contract MUST violations fail the sequence (--contract strict)
    tolerate_failures: bool = False  # --inject: an operation may FAILED with an error code; what it left is unknown
    steps: List[Step] = field(default_factory=list)
    resources: Dict[int, Resource] = field(default_factory=dict)
    operations: int = 0

    @property
    def live(self) -> List[int]:
        return [number for number, resource in self.resources.items() if resource.exists]

    @property
    def gone(self) -> List[int]:
        return [number for number, resource in self.resources.items() if not resource.exists]

    def identifier_model(self, number: int) -> Dict[str, Any]:
        """The model a READ, UPDATE or DELETE of resource ``number`` carries: its primary identifier."""
        model = self.resources[number].model
        return {name: model[name] for name in identifier_names(self.schema) if name in model}

    def current(self, number: int) -> Dict[str, Any]:
        return self.resources[number].model

    def next_number(self) -> int:
        return len([step for step in self.steps if step.action is Action.CREATE]) + 1

    def apply(self, step: Step) -> None:
        """Run ``step`` and check its outcome; raises SequenceFailed naming what was wrong."""
        self.steps.append(step)
        problems = getattr(self, "_" + step.action.value.lower())(step)
        if problems:
            raise SequenceFailed(Finding(list(self.steps), len(self.steps) - 1, problems))

    def _run(self, action: Action, desired: Dict[str, Any], previous: Optional[Dict[str, Any]]) -> OperationResult:
        self.operations += 1
        return self.runner.run(action, desired, previous)

    def _contract(self, result: OperationResult) -> List[str]:
        if not self.strict:
            return []
        return [
            f"contract [{v.rule.id}] {v.message}" + (f" at {v.pointer}" if v.pointer else "")
            for v in result.violations
            if v.is_error and v.rule.id not in REQUEST_RULES
        ]

    def _judged(self, step: Step, result: OperationResult, expected_code: Optional[str] = None) -> List[str]:
        """What is wrong with ``result``: its contract violations, then its status (``_status``)."""
        return self._contract(result) + self._status(step, result, expected_code)

    def _status(self, step: Step, result: OperationResult, expected_code: Optional[str] = None) -> List[str]:
        """SUCCESS expected (or FAILED with ``expected_code``); an injected fault's FAILED is tolerated."""
        if expected_code is not None:
            if result.succeeded or result.error_code != expected_code:
                got = "SUCCESS" if result.succeeded else f"FAILED {result.error_code}: {_answer(result)}"
                return [f"{step.action.value} should fail with {expected_code} ({_why(step, expected_code)}); it answered {got}"]
            return []
        if result.succeeded or (self.tolerate_failures and result.error_code):
            return []
        return [f"{step.action.value} failed: {result.error_code or result.reason.value}: {_answer(result)}"]

    def _create(self, step: Step) -> List[str]:
        desired = dict(step.properties or {})
        taken = identifier_of(self.schema, desired)
        clash = taken is not None and any(identifier_of(self.schema, self.current(n)) == taken for n in self.live)
        result = self._run(Action.CREATE, desired, None)
        problems = self._judged(step, result, "AlreadyExists" if clash else None)
        if result.succeeded and not clash and step.resource is not None:
            self.resources[step.resource] = Resource(result.resource_model or {}, desired)
        return problems

    def _read(self, step: Step) -> List[str]:
        assert step.resource is not None
        resource = self.resources[step.resource]
        result = self._run(Action.READ, self.identifier_model(step.resource), None)
        if not resource.exists:
            return self._judged(step, result, "NotFound")
        problems = self._judged(step, result)
        if result.succeeded:
            if resource.expected is not None:
                problems += [
                    f"read-after-write: {pointer or '/'}: {difference}"
                    for pointer, difference in mismatches(resource.expected, result.resource_model or {}, self.schema)
                ]
            else:
                resource.expected = self.schema.without_write_only(result.resource_model or {})
            resource.model = result.resource_model or resource.model
        elif self.tolerate_failures:
            resource.expected = None
        return problems

    def _update(self, step: Step) -> List[str]:
        assert step.resource is not None and step.properties is not None
        resource = self.resources[step.resource]
        desired = {**step.properties, **self.identifier_model(step.resource)}
        changed = [
            pointer for pointer in self.schema.create_only_properties
            if self.schema.value_at(resource.model, pointer) != self.schema.value_at(desired, pointer)
        ]
        result = self._run(Action.UPDATE, desired, resource.model)
        if not resource.exists:
            return self._judged(step, result, "NotFound")
        if changed:
            return self._judged(step, result, "NotUpdatable")
        problems = self._judged(step, result)
        if result.succeeded:
            resource.model, resource.expected = result.resource_model or resource.model, desired
        else:
            resource.expected = None
        return problems

    def _delete(self, step: Step) -> List[str]:
        assert step.resource is not None
        resource = self.resources[step.resource]
        result = self._run(Action.DELETE, self.identifier_model(step.resource), None)
        if not resource.exists:
            return self._judged(step, result, "NotFound")
        problems = self._judged(step, result)
        if result.succeeded:
            resource.exists = False
        elif self.tolerate_failures:
            del self.resources[step.resource]  # it may be gone or not: no longer followed
        return problems

    def _list(self, step: Step) -> List[str]:
        result = self._run(Action.LIST, {}, None)
        problems = self._judged(step, result)
        if not result.succeeded:
            return problems
        listed = {identifier_of(self.schema, model) for model in result.resource_models or []}
        for number in self.live:
            identifier = identifier_of(self.schema, self.current(number))
            if identifier not in listed:
                problems.append(f"list-membership: #{number} ({identifier}) exists but LIST does not name it")
        return problems

    def clean_up(self) -> None:
        """Delete what the sequence left, so the next one starts from nothing; outcomes are not judged here.

        A schema that declares no delete handler gets no DELETE: what its sequences made stays."""
        if self.schema.handler(Action.DELETE) is None:
            return
        for number in self.live:
            self._run(Action.DELETE, self.identifier_model(number), None)
            self.resources[number].exists = False


def _answer(result: OperationResult) -> str:
    """A failed answer's message, with the exception the handler raised (``model/failure_cause.py``) when the message
    does not name it, and the hint on a line of its own (``events.fuzz.case_lines`` indents it under the problem)."""
    text = result.message or ""
    if result.cause and result.cause not in text:
        text = f"{text} ({result.cause})" if text else result.cause
    return text + (f"\nhint: {result.hint}" if result.hint else "")


def _why(step: Step, code: str) -> str:
    return {
        "NotUpdatable": "it changes a createOnly property",
        "NotFound": f"#{step.resource} was deleted",
        "AlreadyExists": "a resource with this primary identifier exists",
    }.get(code, code)
