"""The one JSON encoding of operation events: what ``--json`` prints, what the history keeps, what a later API sends.

One record per event, named by its ``event`` key, with camelCase keys (docs/reference/json-events.md lists
them all). The live-only events (InvocationRunning, InvocationOutput, WaitTick) have no record: the
invocation record carries the whole output. ``decode`` turns a record back into its event, so a recorded
operation plays into the same renderers as a live one.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from cfnrun.contract.violations import ALL_RULES, Rule, Severity, Violation
from cfnrun.events.masking import Masking
from cfnrun.events.older_records import upgraded
from cfnrun.events.operation import (
    ContractChecked,
    InvocationCompleted,
    OperationCompleted,
    OperationEvent,
    OperationResult,
    OperationStarted,
    Retrying,
    Waiting,
)
from cfnrun.model.budgets import Budget, BudgetKind
from cfnrun.model.endings import EndReason
from cfnrun.model.protocol import Action, OperationStatus, ProgressEvent
from cfnrun.runtime.lambda_error import LambdaError
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind

Record = Dict[str, Any]
DECIMALS = 3  # of durations: microseconds of a millisecond count, milliseconds of a count of seconds
_RULES = {rule.id: rule for rule in ALL_RULES}


def encode(event: OperationEvent, masking: Masking) -> Optional[Record]:
    """The record of ``event``, writeOnly values masked; None for the live-only events."""
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
        return _invocation(event, masking)
    if isinstance(event, ContractChecked):
        return {"event": "violations", "invocation": event.invocation, "violations": [v.wire() for v in event.violations]}
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
        return _result(event.result, masking)
    return None


def _budget(budget: Budget) -> Record:
    return {"seconds": budget.seconds, "source": budget.source, "kind": budget.kind.value, "default": budget.default}


def encode_invocation(event: InvocationCompleted, masking: Masking, progress_wire: Optional[Record] = None) -> Record:
    """``encode``'s record of an invocation; ``progress_wire``: ``event.progress.wire()`` made already (a copy the
    record may keep), as serve's history keeps it for an answer it has read before."""
    return _invocation(event, masking, progress_wire)


def _invocation(event: InvocationCompleted, masking: Masking, progress_wire: Optional[Record] = None) -> Record:
    outcome, progress = event.outcome, event.progress
    record: Record = {
        "event": "invocation",
        "n": event.number,
        "requestId": outcome.request_id,
        "outcome": outcome.kind._value_,  # not ``value``, a Python-level property: serve's history encodes a record per call
        "durationMs": round(outcome.duration_ms, DECIMALS),
        "elapsedSeconds": round(event.elapsed_s, DECIMALS),
        "logs": outcome.logs,
    }
    if progress is not None:
        record["status"] = progress.status._value_
        record["progressEvent"] = _progress_event(progress, masking, progress_wire)
    # Each only when it says something, in this order (one test each rather than a dict of them made and filtered per record).
    if outcome.error is not None:
        error = outcome.error_body
        if error:
            record["error"] = error
    if event.problem:
        record["problem"] = event.problem
    if outcome.note:
        record["note"] = outcome.note
    if outcome.timeout_s is not None:
        record["timeoutSeconds"] = outcome.timeout_s
    if outcome.faults:
        record["injected"] = outcome.faults
    return record


def _progress_event(progress: ProgressEvent, masking: Masking, wire: Optional[Record] = None) -> Record:
    wire = progress.wire() if wire is None else wire
    if "resourceModel" in wire:
        wire["resourceModel"] = masking.model(wire["resourceModel"])
    if "resourceModels" in wire:
        wire["resourceModels"] = masking.models(wire["resourceModels"])
    return wire


def _result(result: OperationResult, masking: Masking) -> Record:
    record: Record = {
        "event": "result",
        "action": result.action.value,
        "status": result.status.value,
        "reason": result.reason.value,
        "message": result.message,
        "errorCode": result.error_code,
        "hint": result.hint,
        "cause": result.cause,
        "invocations": result.invocations,
        "elapsedSeconds": round(result.elapsed_s, DECIMALS),
        "contractErrors": sum(1 for v in result.violations if v.is_error),
        "contractWarnings": sum(1 for v in result.violations if not v.is_error),
        "violations": [v.wire() for v in result.violations],
    }
    if result.resource_model is not None:
        record["resourceModel"] = masking.model(result.resource_model)
    if result.resource_models is not None:
        record["resourceModels"] = masking.models(result.resource_models)
    if result.callback_context is not None:
        record["callbackContext"] = result.callback_context
    return record


def decode(record: Record) -> OperationEvent:
    """The event a record stands for; records of older history databases too."""
    record = upgraded(record)
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
        return _decode_invocation(record)
    if kind == "violations":
        return ContractChecked(record["invocation"], [_decode_violation(v) for v in record["violations"]])
    if kind == "retry":
        return Retrying(record["next"], record["retry"], record["retries"], record["errorCode"], record["delaySeconds"])
    if kind == "wait":
        return Waiting(record["next"], record["delaySeconds"], record["virtual"])
    if kind == "result":
        return OperationCompleted(_decode_result(record))
    raise ValueError(f"unknown event record {kind!r}")


def _decode_violation(record: Record) -> Violation:
    """A violation's record back; a rule this version no longer has keeps its recorded id and severity."""
    rule = _RULES.get(record["rule"]) or Rule(record["rule"], Severity(record["severity"]), record.get("contract", ""))
    return Violation(rule, record["message"], record.get("pointer"), record.get("invocation"))


def _decode_budget(record: Record) -> Budget:
    return Budget(record["seconds"], record["source"], BudgetKind(record["kind"]), record.get("default", False))


def _decode_invocation(record: Record) -> InvocationCompleted:
    error, progress = record.get("error"), record.get("progressEvent")
    outcome = InvocationOutcome(
        kind=OutcomeKind(record["outcome"]),
        request_id=record.get("requestId", ""),
        duration_ms=record.get("durationMs", 0.0),
        logs=record.get("logs", ""),
        error=LambdaError.from_wire(error) if error is not None else None,
        timeout_s=record.get("timeoutSeconds"),
        note=record.get("note"),
        faults=record.get("injected") or [],
    )
    answer = ProgressEvent.model_validate(progress) if progress is not None else None
    return InvocationCompleted(record["n"], outcome, answer, record.get("problem"), record["elapsedSeconds"])


def _decode_result(record: Record) -> OperationResult:
    return OperationResult(
        action=Action(record["action"]),
        status=OperationStatus(record["status"]),
        reason=EndReason(record["reason"]),
        message=record.get("message") or "",
        invocations=record["invocations"],
        elapsed_s=record["elapsedSeconds"],
        error_code=record.get("errorCode"),
        hint=record.get("hint"),
        cause=record.get("cause"),
        resource_model=record.get("resourceModel"),
        resource_models=record.get("resourceModels"),
        violations=[_decode_violation(v) for v in record.get("violations", [])],
        callback_context=record.get("callbackContext"),
    )
