"""History records that cfnrun wrote before events had one JSON encoding, read with today's keys.

The history then kept an invocation's outcome as a nested object (``{"kind", "requestId", "durationMs",
"logs", "error", "timeoutSeconds", "note", "faults"}``) and the handler's answer under ``progress``;
its budgets had no ``default``. Every other record already had today's keys. Databases outlive
upgrades, so ``cfnrun history show`` and ``replay`` read both.
"""
from __future__ import annotations

from typing import Any, Dict

Record = Dict[str, Any]


def upgraded(record: Record) -> Record:
    """``record`` with today's keys: an older invocation record flattened, any other record as it is."""
    outcome = record.get("outcome")
    if record.get("event") != "invocation" or not isinstance(outcome, dict):
        return record
    return {
        "event": "invocation",
        "n": record["n"],
        "requestId": outcome.get("requestId", ""),
        "outcome": outcome["kind"],
        "durationMs": outcome.get("durationMs", 0.0),
        "elapsedSeconds": record["elapsedSeconds"],
        "logs": outcome.get("logs", ""),
        "progressEvent": record.get("progress"),
        "error": outcome.get("error"),
        "problem": record.get("problem"),
        "note": outcome.get("note"),
        "timeoutSeconds": outcome.get("timeoutSeconds"),
        "injected": outcome.get("faults") or [],
    }
