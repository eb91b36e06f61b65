"""serve's call recorder: what it reads once and keeps, and the records it writes with it."""
from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any, List

import pytest

from cfnrun.history.recorder import CallRecorder
from cfnrun.history.store import HistoryStore
from cfnrun.history.writer import HistoryWriter
from cfnrun.model.budgets import Budget, BudgetKind
from cfnrun.model.project import load_project
from cfnrun.model.protocol import Action, ProgressEvent
from cfnrun.model.seen_call import SeenCall
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind

NOOP = Path(__file__).resolve().parents[2] / "bench" / "noop_project"
BUDGETS = (Budget(30.0, "the function's Timeout", BudgetKind.CONTRACT), Budget(7200.0, "the schema", BudgetKind.CONTRACT, True))


def test_an_answer_of_strings_alone_is_read_once_and_every_call_is_recorded_with_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(NOOP, tmp_path / "noop", ignore=shutil.ignore_patterns(".cfnrun"))  # not the history a bench run left
    project = load_project(tmp_path / "noop")
    store = HistoryStore(project.root)
    validated: List[Any] = []
    validate = ProgressEvent.model_validate

    def counted(payload: Any) -> ProgressEvent:
        validated.append(payload)
        return validate(payload)

    monkeypatch.setattr(ProgressEvent, "model_validate", counted)
    answers = [{"status": "SUCCESS"}] * 3 + [{"status": "FAILED", "errorCode": "NotFound", "message": "gone"}] * 2 + [{"status": "BAD"}] * 2

    async def main() -> None:
        recorder = CallRecorder(HistoryWriter(store), lambda: project.schema, project.type_name)
        for number, answer in enumerate(answers):
            outcome = InvocationOutcome(OutcomeKind.RETURNED, f"request-{number}", 1.0, result=dict(answer))
            recorder.call("TypeFunction", Action.LIST, SeenCall.parse({"action": "LIST"}), outcome, [], BUDGETS)
        recorder.close()

    asyncio.run(main())
    assert len(validated) == 4  # SUCCESS once, FAILED once, the invalid answer each time (never kept)
    operations = list(reversed(store.operations()))
    assert [(o.status, o.error_code) for o in operations] == [("SUCCESS", None)] * 3 + [("FAILED", "NotFound")] * 2 + [("FAILED", "InvalidResponse")] * 2
    invocations = [store.events(o.id)[-1] for o in operations]
    assert [i.get("progressEvent") for i in invocations] == answers[:5] + [None] * 2
    assert all("status: Input should be" in i["problem"] for i in invocations[5:])


def test_the_wire_form_of_an_answer_read_before_is_made_once_and_each_record_has_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(NOOP, tmp_path / "noop", ignore=shutil.ignore_patterns(".cfnrun"))  # not the history a bench run left
    project = load_project(tmp_path / "noop")
    store = HistoryStore(project.root)
    made: List[Any] = []
    wire = ProgressEvent.wire

    def counted(self: ProgressEvent) -> Any:
        made.append(self)
        return wire(self)

    monkeypatch.setattr(ProgressEvent, "wire", counted)
    answers = [{"status": "SUCCESS"}] * 3 + [{"status": "FAILED", "errorCode": "NotFound", "message": "gone"}] * 2

    async def main() -> None:
        recorder = CallRecorder(HistoryWriter(store), lambda: project.schema, project.type_name)
        for number, answer in enumerate(answers):
            outcome = InvocationOutcome(OutcomeKind.RETURNED, f"request-{number}", 1.0, result=dict(answer))
            recorder.call("TypeFunction", Action.LIST, SeenCall.parse({"action": "LIST"}), outcome, [], BUDGETS)
        recorder.close()

    asyncio.run(main())
    assert len(made) == 2  # SUCCESS once, FAILED once
    invocations = [store.events(o.id)[-1] for o in reversed(store.operations())]
    assert [i["progressEvent"] for i in invocations] == answers


def test_an_operation_started_under_other_budgets_records_them_and_the_same_budgets_again_share_one_start_text(tmp_path: Path) -> None:
    shutil.copytree(NOOP, tmp_path / "noop", ignore=shutil.ignore_patterns(".cfnrun"))
    project = load_project(tmp_path / "noop")
    store = HistoryStore(project.root)
    longer = (Budget(60.0, "the function's Timeout", BudgetKind.CONTRACT), BUDGETS[1])
    equal = (Budget(30.0, "the function's Timeout", BudgetKind.CONTRACT), Budget(7200.0, "the schema", BudgetKind.CONTRACT, True))  # equal, not the same objects
    sequence = [BUDGETS, longer, equal, BUDGETS]

    async def main() -> CallRecorder:
        recorder = CallRecorder(HistoryWriter(store), lambda: project.schema, project.type_name)
        for number, budgets in enumerate(sequence):
            outcome = InvocationOutcome(OutcomeKind.RETURNED, f"request-{number}", 1.0, result={"status": "SUCCESS"})
            recorder.call("TypeFunction", Action.LIST, SeenCall.parse({"action": "LIST"}), outcome, [], budgets)
        recorder.close()
        return recorder

    recorder = asyncio.run(main())
    starts = [store.events(o.id)[0] for o in reversed(store.operations())]
    assert [s["invocationBudget"]["seconds"] for s in starts] == [30.0, 60.0, 30.0, 30.0]
    assert all(s["operationBudget"]["seconds"] == 7200.0 and s["event"] == "start" for s in starts)
    assert len(recorder._starts) == 1  # one start text per function, action and entrypoint: the last budgets'
