"""One step of a fuzzed sequence, as the user reads it and as history keeps it.

A step names its resource by number (``#1``: the resource the sequence's first CREATE made), not
by identifier: identifiers are the handler's to choose, so a replay maps each number to the
resource its own CREATE made. Printed, a sequence is the requests that reproduce it::

    CREATE #1 {"Name": "a", "Size": 91}
    READ #1

writeOnly values are masked wherever a step is printed or recorded.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from cfnrun.events.fuzz import case_lines
from cfnrun.model.action import Action
from cfnrun.model.schema import ResourceSchema


@dataclass(frozen=True)
class Step:
    action: Action
    resource: Optional[int] = None  # the resource's number; None for LIST
    properties: Optional[Dict[str, Any]] = None  # what CREATE and UPDATE ask for (writable properties only)

    def describe(self, schema: ResourceSchema) -> str:
        words = [self.action.value]
        if self.resource is not None:
            words.append(f"#{self.resource}")
        if self.properties is not None:
            words.append(json.dumps(schema.mask_write_only(self.properties), sort_keys=True, ensure_ascii=False))
        return " ".join(words)

    def record(self, schema: ResourceSchema) -> Dict[str, Any]:
        """The step as history keeps it: JSON, writeOnly values masked."""
        record: Dict[str, Any] = {"action": self.action.value}
        if self.resource is not None:
            record["resource"] = self.resource
        if self.properties is not None:
            record["properties"] = schema.mask_write_only(self.properties)
        return record

    @classmethod
    def from_record(cls, record: Dict[str, Any]) -> "Step":
        properties = record.get("properties")
        return cls(Action(record["action"]), record.get("resource"), properties if isinstance(properties, dict) else None)


@dataclass(frozen=True)
class Finding:
    """A sequence that breaks the handler: its steps, the one that failed (0-based) and what was wrong there."""

    steps: List[Step]
    failing: int
    problems: List[str]

    def lines(self, schema: ResourceSchema) -> List[str]:
        """The minimal case as printed (``events.fuzz.case_lines``)."""
        return case_lines([step.describe(schema) for step in self.steps], self.failing, self.problems)

    @classmethod
    def recorded(cls, request: Dict[str, Any]) -> "Finding":
        """The case as history keeps it (``cfnrun fuzz`` records its request: steps, the failing step, the problems)."""
        steps = [Step.from_record(record) for record in request.get("steps") or []]
        failing = request.get("failingStep")
        return cls(steps, failing if isinstance(failing, int) else len(steps) - 1, list(request.get("problems") or []))
