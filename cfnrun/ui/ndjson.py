"""``--json``: one JSON object per operation event, for scripts (the keys: docs/reference/json-events.md)."""
from __future__ import annotations

import json
from typing import Any, Callable, Dict, Optional, TextIO

from cfnrun.events.encoding import encode
from cfnrun.events.fuzz import FuzzEvent, encode_fuzz
from cfnrun.events.masking import WriteOnlyMasking
from cfnrun.events.stack import StackTestEvent, encode_stack_test
from cfnrun.events.operation import OperationEvent
from cfnrun.model.schema import ResourceSchema


def _write(out: TextIO, record: Optional[Dict[str, Any]], mask: Optional[Callable[[str], str]] = None) -> None:
    """One record as one line, flushed so a script reads it at once; None (a live-only event) writes nothing.
    ``mask`` hides secrets in the line's JSON text."""
    if record is not None:
        text = json.dumps(record, default=str)
        out.write((text if mask is None else mask(text)) + "\n")
        out.flush()


class NdjsonRenderer:
    def __init__(self, out: TextIO, schema: ResourceSchema, mask: Optional[Callable[[str], str]] = None) -> None:
        self.out = out
        self.masking = WriteOnlyMasking(schema)
        self.mask = mask  # hides the operation's secrets (``LiveMask``) wherever they show up: logs, messages, causes

    def __call__(self, event: OperationEvent) -> None:
        _write(self.out, encode(event, self.masking), self.mask)  # none for live ticks and streamed output: the invocation record carries the logs


class FuzzNdjsonRenderer:
    """``cfnrun fuzz --json``: one object per fuzz event (steps arrive with writeOnly values masked)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, event: FuzzEvent) -> None:
        _write(self.out, encode_fuzz(event))


class StackTestNdjsonRenderer:
    """``cfnrun stack test --json``: one object per stack event, step and result (masked by the engine); the live progress has none."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, event: StackTestEvent) -> None:
        _write(self.out, encode_stack_test(event))
