"""``--json``: one JSON object per operation event, for scripts."""
from __future__ import annotations

import json
from typing import Any, Dict, Optional, TextIO

from cfnrun.invoker.events import (
    ContractChecked,
    InvocationCompleted,
    OperationCompleted,
    OperationEvent,
    OperationStarted,
    Retrying,
    Waiting,
)
from cfnrun.model.schema import ResourceSchema


class NdjsonRenderer:
    def __init__(self, out: TextIO, schema: ResourceSchema) -> None:
        self.out = out
        self.schema = schema

    def __call__(self, event: OperationEvent) -> None:
        record = self._record(event)
        if record is not None:
            self.out.write(json.dumps(record, default=str) + "\n")
            self.out.flush()

    def _record(self, event: OperationEvent) -> Optional[Dict[str, Any]]:
        if isinstance(event, OperationStarted):
            return {
                "event": "start",
                "action": event.action.value,
                "typeName": event.type_name,
                "function": event.function,
                "entrypoint": event.entrypoint,
                "invocationBudgetSeconds": event.invocation_budget.seconds,
                "operationTimeoutSeconds": event.operation_budget.seconds,
                "virtualClock": event.virtual_clock,
            }
        if isinstance(event, InvocationCompleted):
            outcome, progress = event.outcome, event.progress
            record: Dict[str, Any] = {
                "event": "invocation",
                "n": event.number,
                "requestId": outcome.request_id,
                "outcome": outcome.kind.value,
                "durationMs": round(outcome.duration_ms, 3),
                "elapsedSeconds": round(event.elapsed_s, 3),
                "logs": outcome.logs,
            }
            if progress is not None:
                wire = progress.wire()
                if "resourceModel" in wire:
                    wire["resourceModel"] = self.schema.mask_write_only(wire["resourceModel"])
                if "resourceModels" in wire:
                    wire["resourceModels"] = [self.schema.mask_write_only(m) for m in wire["resourceModels"]]
                record["status"] = progress.status.value
                record["progressEvent"] = wire
            if outcome.error:
                record["error"] = outcome.error
            if outcome.timeout_s is not None:
                record["timeoutSeconds"] = outcome.timeout_s
            if event.problem:
                record["problem"] = event.problem
            if outcome.note:
                record["note"] = outcome.note
            return record
        if isinstance(event, ContractChecked):
            for violation in event.violations[:-1]:
                self.out.write(json.dumps({"event": "violation", **violation.wire()}) + "\n")
            return {"event": "violation", **event.violations[-1].wire()}
        if isinstance(event, Retrying):
            return {
                "event": "retry",
                "next": event.next_number,
                "retry": event.retry,
                "retries": event.retries,
                "errorCode": event.error_code,
                "delaySeconds": event.delay_s,
            }
        if isinstance(event, Waiting):
            return {"event": "wait", "next": event.next_number, "delaySeconds": event.delay_s, "virtual": event.virtual}
        if isinstance(event, OperationCompleted):
            result = event.result
            record = {
                "event": "result",
                "action": result.action.value,
                "status": result.status,
                "reason": result.reason.value,
                "message": result.message,
                "errorCode": result.error_code,
                "hint": result.hint,
                "invocations": result.invocations,
                "elapsedSeconds": round(result.elapsed_s, 3),
                "contractErrors": sum(1 for v in result.violations if v.is_error),
                "contractWarnings": sum(1 for v in result.violations if not v.is_error),
            }
            if result.resource_model is not None:
                record["resourceModel"] = self.schema.mask_write_only(result.resource_model)
            if result.resource_models is not None:
                record["resourceModels"] = [self.schema.mask_write_only(m) for m in result.resource_models]
            return record
        return None
