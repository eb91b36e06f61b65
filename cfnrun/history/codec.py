"""Operation events to JSON records and back, so a recorded operation replays into the same renderers."""
from __future__ import annotations

from typing import Any, Dict, Optional

from cfnrun.contract.violations import ALL_RULES, Rule, Severity, Violation
from cfnrun.history.masking import Masker
from cfnrun.events.operation import (
    ContractChecked,
    EndReason,
    InvocationCompleted,
    OperationCompleted,
    OperationEvent,
    OperationResult,
    OperationStarted,
    Waiting,
)
from cfnrun.model.budgets import Budget, BudgetKind
from cfnrun.model.protocol import Action, OperationStatus, ProgressEvent
from cfnrun.runtime.lambda_error import LambdaError
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind

_RULES = {rule.id: rule for rule in ALL_RULES}
Record = Dict[str, Any]


def _budget(budget: Budget) -> Record:
    return {"seconds": budget.seconds, "source": budget.source, "kind": budget.kind.value}


def _violation(violation: Violation) -> Record:
    return violation.wire()


def decode_violation(record: Record) -> Violation:
    rule = _RULES.get(record["rule"]) or Rule(record["rule"], Severity(record["severity"]), record.get("contract", ""))
    return Violation(rule, record["message"], record.get("pointer"), record.get("invocation"))


def progress_record(progress: ProgressEvent, masker: Masker) -> Record:
    wire = progress.wire()
    if "resourceModel" in wire:
        wire["resourceModel"] = masker.model(wire["resourceModel"])
    if "resourceModels" in wire:
        wire["resourceModels"] = masker.models(wire["resourceModels"])
    return wire


def outcome_record(outcome: InvocationOutcome) -> Record:
    return {
        "kind": outcome.kind.value,
        "requestId": outcome.request_id,
        "durationMs": outcome.duration_ms,
        "logs": outcome.logs,
        "error": outcome.error_body,
        "timeoutSeconds": outcome.timeout_s,
        "note": outcome.note,
        "faults": outcome.faults,
    }


def result_record(result: OperationResult, masker: Masker) -> Record:
    return {
        "action": result.action.value,
        "status": result.status.value,
        "reason": result.reason.value,
        "message": result.message,
        "invocations": result.invocations,
        "elapsedSeconds": result.elapsed_s,
        "errorCode": result.error_code,
        "hint": result.hint,
        "resourceModel": masker.model(result.resource_model),
        "resourceModels": masker.models(result.resource_models),
        "violations": [_violation(v) for v in result.violations],
    }


def encode(event: OperationEvent, masker: Masker) -> Optional[Record]:
    """The record of an event worth keeping; None for the live ticks (running, countdown)."""
    if isinstance(event, OperationStarted):
        return {
            "event": "start",
            "action": event.action.value,
            "typeName": event.type_name,
            "function": event.function,
            "entrypoint": event.entrypoint,
            "invocationBudget": _budget(event.invocation_budget),
            "operationBudget": _budget(event.operation_budget),
            "virtualClock": event.virtual_clock,
        }
    if isinstance(event, InvocationCompleted):
        return {
            "event": "invocation",
            "n": event.number,
            "outcome": outcome_record(event.outcome),
            "progress": progress_record(event.progress, masker) if event.progress is not None else None,
            "problem": event.problem,
            "elapsedSeconds": event.elapsed_s,
        }
    if isinstance(event, ContractChecked):
        return {"event": "violations", "invocation": event.invocation, "violations": [_violation(v) for v in event.violations]}
    if isinstance(event, Waiting):
        return {"event": "wait", "next": event.next_number, "delaySeconds": event.delay_s, "virtual": event.virtual}
    if isinstance(event, OperationCompleted):
        return {"event": "result", **result_record(event.result, masker)}
    return None


def _decode_budget(record: Record) -> Budget:
    return Budget(record["seconds"], record["source"], BudgetKind(record["kind"]))


def decode_outcome(record: Record) -> InvocationOutcome:
    return InvocationOutcome(
        kind=OutcomeKind(record["kind"]),
        request_id=record.get("requestId", ""),
        duration_ms=record.get("durationMs", 0.0),
        logs=record.get("logs", ""),
        error=LambdaError.from_wire(record["error"]) if record.get("error") is not None else None,
        timeout_s=record.get("timeoutSeconds"),
        note=record.get("note"),
        faults=record.get("faults") or [],
    )


def decode_result(record: Record) -> OperationResult:
    return OperationResult(
        action=Action(record["action"]),
        status=OperationStatus(record["status"]),
        reason=EndReason(record["reason"]),
        message=record.get("message") or "",
        invocations=record["invocations"],
        elapsed_s=record["elapsedSeconds"],
        error_code=record.get("errorCode"),
        hint=record.get("hint"),
        resource_model=record.get("resourceModel"),
        resource_models=record.get("resourceModels"),
        violations=[decode_violation(v) for v in record.get("violations", [])],
    )


def decode(record: Record) -> OperationEvent:
    kind = record["event"]
    if kind == "start":
        return OperationStarted(
            Action(record["action"]),
            record["typeName"],
            record["function"],
            record["entrypoint"],
            _decode_budget(record["invocationBudget"]),
            _decode_budget(record["operationBudget"]),
            record["virtualClock"],
        )
    if kind == "invocation":
        progress = record.get("progress")
        return InvocationCompleted(
            record["n"],
            decode_outcome(record["outcome"]),
            ProgressEvent.model_validate(progress) if progress is not None else None,
            record.get("problem"),
            record["elapsedSeconds"],
        )
    if kind == "violations":
        return ContractChecked(record["invocation"], [decode_violation(v) for v in record["violations"]])
    if kind == "wait":
        return Waiting(record["next"], record["delaySeconds"], record["virtual"])
    if kind == "result":
        return OperationCompleted(decode_result(record))
    raise ValueError(f"unknown history record {kind!r}")
