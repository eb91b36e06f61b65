"""``--json``: one JSON object per operation event, for scripts (the keys: docs/reference/json-events.md)."""
from __future__ import annotations

import json
from typing import TextIO

from cfnrun.events.encoding import encode
from cfnrun.events.masking import WriteOnlyMasking
from cfnrun.events.operation import OperationEvent
from cfnrun.model.schema import ResourceSchema


class NdjsonRenderer:
    def __init__(self, out: TextIO, schema: ResourceSchema) -> None:
        self.out = out
        self.masking = WriteOnlyMasking(schema)

    def __call__(self, event: OperationEvent) -> None:
        record = encode(event, self.masking)
        if record is not None:  # live ticks and streamed output: the invocation record carries the logs
            self.out.write(json.dumps(record, default=str) + "\n")
            self.out.flush()
