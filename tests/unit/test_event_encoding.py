"""The one JSON encoding of operation events: the same records for --json and the history, and back."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any, Dict, List

from fakes import schema

from cfnrun.contract.violations import FAILED_MESSAGE, REQUEST_VALID, Violation
from cfnrun.events.encoding import decode, encode
from cfnrun.events.masking import WriteOnlyMasking
from cfnrun.events.operation import (
    ContractChecked,
    InvocationCompleted,
    InvocationOutput,
    InvocationRunning,
    OperationCompleted,
    OperationEvent,
    OperationResult,
    OperationStarted,
    Retrying,
    Waiting,
    WaitTick,
)
from cfnrun.model.budgets import Budget, BudgetKind
from cfnrun.model.endings import EndReason
from cfnrun.model.protocol import Action, OperationStatus, ProgressEvent
from cfnrun.runtime.lambda_error import LambdaError
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "json-events.md"
CONTRACT_BUDGET = Budget(60.0, "the handler contract's 60 s response budget for CREATE", BudgetKind.CONTRACT, default=True)
SCHEMA_BUDGET = Budget(600.0, "handlers.create.timeoutInMinutes = 10", BudgetKind.SCHEMA)
REQUEST_BREACH = Violation(REQUEST_VALID, "/properties/Name: 3 is not of type 'string'", "/properties/Name")
MESSAGE_MISSING = Violation(FAILED_MESSAGE, "FAILED without a message", "/message", 2)
FAULT = {"rule": "ssm:PutParameter=ThrottlingException@1", "call": "ssm:PutParameter", "count": 1, "status": 400}
CRASH = LambdaError("ValueError", "no such cluster", ("  File \"handler.py\", line 3, in create\n",))


def _answer(wire: Dict[str, Any]) -> ProgressEvent:
    return ProgressEvent.model_validate(wire)


def operation(budget: Budget = CONTRACT_BUDGET, retried: bool = True) -> List[OperationEvent]:
    """Every kind of record, with every optional key somewhere."""
    crashed = InvocationOutcome(OutcomeKind.FUNCTION_ERROR, "r-1", 2.5, logs="boom\n", error=CRASH, note="a debugger is attached", faults=[FAULT])
    answered = InvocationOutcome(OutcomeKind.RETURNED, "r-2", 4.25, logs="creating\n")
    events: List[OperationEvent] = [
        OperationStarted(Action.CREATE, "Cfnrun::Unit::Thing", "TypeFunction", "type", budget, SCHEMA_BUDGET, True),
        ContractChecked(None, [REQUEST_BREACH]),
        InvocationCompleted(1, crashed, None, None, 0.003),
        Retrying(2, 1, 3, "Throttling", 1.0),
        Waiting(2, 1.0, True),
        InvocationCompleted(2, answered, _answer({"status": "FAILED", "errorCode": "NotFound", "callbackContext": {"step": 1}}), None, 1.007),
        ContractChecked(2, [MESSAGE_MISSING]),
        InvocationCompleted(3, InvocationOutcome(OutcomeKind.TIMED_OUT, "r-3", 60000.0, timeout_s=60.0), None, None, 61.007),
        InvocationCompleted(4, InvocationOutcome(OutcomeKind.RETURNED, "r-4", 1.0), None, "the answer is not a JSON object", 62.5),
        OperationCompleted(
            OperationResult(
                Action.CREATE, OperationStatus.FAILED, EndReason.INVALID_RESPONSE, "not a ProgressEvent", 4, 62.5,
                error_code="InternalFailure", hint="return a dict", resource_model={"Id": "t", "Name": "n"},
                violations=[REQUEST_BREACH, MESSAGE_MISSING],
            )
        ),
    ]
    return events if retried else [e for e in events if not isinstance(e, Retrying)]


def test_every_recorded_event_comes_back_as_it_was() -> None:
    masking = WriteOnlyMasking(schema())
    for event in operation():
        record = encode(event, masking)
        assert record is not None, event
        assert decode(json.loads(json.dumps(record))) == event


def test_live_only_events_have_no_record() -> None:
    masking = WriteOnlyMasking(schema())
    for event in (InvocationRunning(1, 2.0, 60.0), InvocationOutput(1, "line\n"), WaitTick(3.0)):
        assert encode(event, masking) is None


def test_the_records_keep_the_keys_scripts_read() -> None:
    records = [encode(event, WriteOnlyMasking(schema())) for event in operation()]
    start, request, crash, retry, wait, answer, checked, timed_out, bad, result = records
    assert start == {
        "event": "start", "action": "CREATE", "typeName": "Cfnrun::Unit::Thing", "function": "TypeFunction", "entrypoint": "type",
        "invocationBudget": {"seconds": 60.0, "source": CONTRACT_BUDGET.source, "kind": "contract", "default": True},
        "operationBudget": {"seconds": 600.0, "source": SCHEMA_BUDGET.source, "kind": "schema", "default": False},
        "virtualClock": True,
    }
    assert request == {"event": "violations", "invocation": None, "violations": [REQUEST_BREACH.wire()]}
    assert crash == {
        "event": "invocation", "n": 1, "requestId": "r-1", "outcome": "function_error", "durationMs": 2.5, "elapsedSeconds": 0.003,
        "logs": "boom\n", "error": CRASH.wire(), "note": "a debugger is attached", "injected": [FAULT],
    }
    assert retry == {"event": "retry", "next": 2, "retry": 1, "retries": 3, "errorCode": "Throttling", "delaySeconds": 1.0}
    assert wait == {"event": "wait", "next": 2, "delaySeconds": 1.0, "virtual": True}
    assert answer is not None and answer["status"] == "FAILED" and answer["progressEvent"]["callbackContext"] == {"step": 1}
    assert checked == {"event": "violations", "invocation": 2, "violations": [MESSAGE_MISSING.wire()]}
    assert timed_out is not None and timed_out["timeoutSeconds"] == 60.0 and "progressEvent" not in timed_out
    assert bad is not None and bad["problem"] == "the answer is not a JSON object" and "error" not in bad
    assert result is not None and (result["contractErrors"], result["contractWarnings"]) == (2, 0)
    assert result["violations"] == [REQUEST_BREACH.wire(), MESSAGE_MISSING.wire()] and "resourceModels" not in result


def test_durations_keep_three_decimals() -> None:
    outcome = InvocationOutcome(OutcomeKind.RETURNED, "r", 4.123456)
    record = encode(InvocationCompleted(1, outcome, _answer({"status": "SUCCESS"}), None, 0.0123456), WriteOnlyMasking(schema()))
    assert record is not None and (record["durationMs"], record["elapsedSeconds"]) == (4.123, 0.012)


def test_write_only_values_are_masked_in_every_model_an_event_carries() -> None:
    masking = WriteOnlyMasking(schema())
    secret = {"Id": "t", "Secret": "hunter2"}
    answered = InvocationCompleted(
        1, InvocationOutcome(OutcomeKind.RETURNED, "r", 1.0), _answer({"status": "SUCCESS", "resourceModel": secret}), None, 0.1
    )
    listed = InvocationCompleted(
        2, InvocationOutcome(OutcomeKind.RETURNED, "r", 1.0), _answer({"status": "SUCCESS", "resourceModels": [secret]}), None, 0.2
    )
    ended = OperationCompleted(
        OperationResult(Action.LIST, OperationStatus.SUCCESS, EndReason.HANDLER, "", 2, 0.2, resource_model=secret, resource_models=[secret])
    )
    text = json.dumps([encode(event, masking) for event in (answered, listed, ended)])
    assert "hunter2" not in text and text.count("*** writeOnly ***") == 4
    assert secret == {"Id": "t", "Secret": "hunter2"}  # the event itself is left as it was


# What the history kept before events had one encoding: an invocation's outcome nested, its answer
# under "progress", budgets without "default", no retry records. Written as cfnrun 0.1.0 wrote them.
OLDER_RECORDS: List[Dict[str, Any]] = [
    {
        "action": "CREATE", "entrypoint": "type", "event": "start", "function": "TypeFunction", "typeName": "Cfnrun::Unit::Thing", "virtualClock": True,
        "invocationBudget": {"kind": "contract", "seconds": 60.0, "source": CONTRACT_BUDGET.source},
        "operationBudget": {"kind": "schema", "seconds": 600.0, "source": SCHEMA_BUDGET.source},
    },
    {"event": "violations", "invocation": None, "violations": [REQUEST_BREACH.wire()]},
    {
        "elapsedSeconds": 0.003, "event": "invocation", "n": 1, "problem": None, "progress": None,
        "outcome": {
            "durationMs": 2.5, "error": CRASH.wire(), "faults": [FAULT], "kind": "function_error", "logs": "boom\n",
            "note": "a debugger is attached", "requestId": "r-1", "timeoutSeconds": None,
        },
    },
    {"delaySeconds": 1.0, "event": "wait", "next": 2, "virtual": True},
    {
        "elapsedSeconds": 1.007, "event": "invocation", "n": 2, "problem": None,
        "outcome": {
            "durationMs": 4.25, "error": None, "faults": [], "kind": "returned", "logs": "creating\n",
            "note": None, "requestId": "r-2", "timeoutSeconds": None,
        },
        "progress": {"callbackContext": {"step": 1}, "errorCode": "NotFound", "status": "FAILED"},
    },
    {"event": "violations", "invocation": 2, "violations": [MESSAGE_MISSING.wire()]},
    {
        "elapsedSeconds": 61.007, "event": "invocation", "n": 3, "problem": None, "progress": None,
        "outcome": {
            "durationMs": 60000.0, "error": None, "faults": [], "kind": "timed_out", "logs": "",
            "note": None, "requestId": "r-3", "timeoutSeconds": 60.0,
        },
    },
    {
        "elapsedSeconds": 62.5, "event": "invocation", "n": 4, "problem": "the answer is not a JSON object", "progress": None,
        "outcome": {
            "durationMs": 1.0, "error": None, "faults": [], "kind": "returned", "logs": "",
            "note": None, "requestId": "r-4", "timeoutSeconds": None,
        },
    },
    {
        "action": "CREATE", "elapsedSeconds": 62.5, "errorCode": "InternalFailure", "event": "result", "hint": "return a dict",
        "invocations": 4, "message": "not a ProgressEvent", "reason": "invalid-progress-event",
        "resourceModel": {"Id": "t", "Name": "n"}, "resourceModels": None, "status": "FAILED",
        "violations": [REQUEST_BREACH.wire(), MESSAGE_MISSING.wire()],
    },
]


def test_history_records_of_older_versions_decode_to_the_same_events() -> None:
    older_budget = Budget(CONTRACT_BUDGET.seconds, CONTRACT_BUDGET.source, CONTRACT_BUDGET.kind)
    assert [decode(record) for record in OLDER_RECORDS] == operation(older_budget, retried=False)


def test_an_older_history_database_shows_as_it_did(tmp_path: Path) -> None:
    from cfnrun.app.history import show_operation
    from cfnrun.history.store import HistoryStore
    from cfnrun.ui.timeline import TimelineRenderer

    store = HistoryStore(tmp_path)
    head = {"type_name": "Cfnrun::Unit::Thing", "action": "CREATE", "function": "TypeFunction", "status": "FAILED", "invocations": 4, "duration_s": 62.5}
    operation_id = store.add("invoke", None, head, json.dumps({"source": "invoke"}), [json.dumps(r, sort_keys=True) for r in OLDER_RECORDS])
    shown, expected = io.StringIO(), io.StringIO()
    show_operation(store, operation_id, [TimelineRenderer(shown, schema(), color=False)])
    timeline = TimelineRenderer(expected, schema(), color=False)
    for event in operation(Budget(CONTRACT_BUDGET.seconds, CONTRACT_BUDGET.source, CONTRACT_BUDGET.kind), retried=False):
        timeline(event)
    assert shown.getvalue() == expected.getvalue() and "#4" in shown.getvalue()


def test_the_reference_page_names_every_record_and_key() -> None:
    documented = set(re.findall(r"`([A-Za-z_]+)`", REFERENCE.read_text(encoding="utf-8")))
    records = [encode(event, WriteOnlyMasking(schema())) for event in operation()]
    keys = {key for record in records if record is not None for key in record}
    keys |= {record["event"] for record in records if record is not None}
    keys |= set(records[0]["invocationBudget"]) | set(MESSAGE_MISSING.wire()) | set(FAULT)  # type: ignore[index]
    assert keys - documented == set()


def test_the_timeline_prints_the_same_from_a_live_event_and_its_record() -> None:
    """A duration near a rounding edge (2.2503 ms stores as 2.250) prints alike live and in history show."""
    from cfnrun.ui.timeline import TimelineRenderer

    masking = WriteOnlyMasking(schema())
    edgy = [
        InvocationCompleted(1, InvocationOutcome(OutcomeKind.RETURNED, "r-1", 2.2503), _answer({"status": "SUCCESS"}), None, 0.0),
        OperationCompleted(OperationResult(Action.READ, OperationStatus.SUCCESS, EndReason.HANDLER, "", 1, 4.01499)),
    ]

    def shown(events: List[OperationEvent]) -> str:
        out = io.StringIO()
        renderer = TimelineRenderer(out, schema(), color=False)
        for event in events:
            renderer(event)
        return out.getvalue()

    assert shown(edgy) == shown([decode(json.loads(json.dumps(encode(e, masking)))) for e in edgy])
