"""``--json``: one JSON object per operation event, for scripts."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, TextIO

from cfnrun.events.operation import (
    ContractChecked,
    InvocationCompleted,
    OperationCompleted,
    OperationEvent,
    OperationStarted,
    Retrying,
    Waiting,
)
from cfnrun.model.schema import ResourceSchema

Record = Dict[str, Any]


class NdjsonRenderer:
    def __init__(self, out: TextIO, schema: ResourceSchema) -> None:
        self.out = out
        self.schema = schema

    def __call__(self, event: OperationEvent) -> None:
        records = self._records(event)
        for record in records:
            self.out.write(json.dumps(record, default=str) + "\n")
        if records:
            self.out.flush()

    def _records(self, event: OperationEvent) -> List[Record]:
        if isinstance(event, OperationStarted):
            return [_started(event)]
        if isinstance(event, InvocationCompleted):
            return [self._invocation(event)]
        if isinstance(event, ContractChecked):
            return [{"event": "violation", **violation.wire()} for violation in event.violations]
        if isinstance(event, Retrying):
            return [_retrying(event)]
        if isinstance(event, Waiting):
            return [{"event": "wait", "next": event.next_number, "delaySeconds": event.delay_s, "virtual": event.virtual}]
        if isinstance(event, OperationCompleted):
            return [self._result(event)]
        return []  # live ticks and streamed output: the invocation record carries the logs

    def _masked(self, record: Record, models: Optional[Dict[str, Any]]) -> Record:
        """``record`` with the models in ``models`` (resourceModel / resourceModels), writeOnly values masked."""
        source = models or {}
        if source.get("resourceModel") is not None:
            record["resourceModel"] = self.schema.mask_write_only(source["resourceModel"])
        if source.get("resourceModels") is not None:
            record["resourceModels"] = [self.schema.mask_write_only(m) for m in source["resourceModels"]]
        return record

    def _invocation(self, event: InvocationCompleted) -> Record:
        outcome, progress = event.outcome, event.progress
        record: Record = {
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
            record["status"] = progress.status.value
            record["progressEvent"] = {**wire, **self._masked({}, wire)}
        optional = {"error": outcome.error_body, "problem": event.problem, "note": outcome.note}
        record.update({key: value for key, value in optional.items() if value})
        if outcome.timeout_s is not None:
            record["timeoutSeconds"] = outcome.timeout_s
        if outcome.faults:
            record["injected"] = outcome.faults
        return record

    def _result(self, event: OperationCompleted) -> Record:
        result = event.result
        record: Record = {
            "event": "result",
            "action": result.action.value,
            "status": result.status.value,
            "reason": result.reason.value,
            "message": result.message,
            "errorCode": result.error_code,
            "hint": result.hint,
            "invocations": result.invocations,
            "elapsedSeconds": round(result.elapsed_s, 3),
            "contractErrors": sum(1 for v in result.violations if v.is_error),
            "contractWarnings": sum(1 for v in result.violations if not v.is_error),
        }
        return self._masked(record, {"resourceModel": result.resource_model, "resourceModels": result.resource_models})


def _started(event: OperationStarted) -> Record:
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


def _retrying(event: Retrying) -> Record:
    return {
        "event": "retry",
        "next": event.next_number,
        "retry": event.retry,
        "retries": event.retries,
        "errorCode": event.error_code,
        "delaySeconds": event.delay_s,
    }
