"""``cfnrun stack test``'s pure parts: its KEY=VALUE options, its records, and its terminal timeline."""
from __future__ import annotations

import io
import re
from pathlib import Path
from typing import List

import pytest

from cfnrun.app.settings.stack import default_stack_name, parse_assignments
from cfnrun.contract.violations import NO_NULL_VALUES, Violation
from cfnrun.events.stack import (
    Leftover,
    ResourceViolation,
    StackEvent,
    StackTestCompleted,
    StackTestEvent,
    StackTestStarted,
    StepCompleted,
    StepProgress,
    StepStarted,
    encode_stack_test,
)
from cfnrun.model.errors import CfnrunError
from cfnrun.ui.stack_timeline import StackTimeline

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "json-events.md"
STACK_ID = "arn:aws:cloudformation:us-east-1:123456789012:stack/demo/1"
NULL_TITLE = ResourceViolation("Note", "Cfnrun::Sample::Note", "CREATE", Violation(NO_NULL_VALUES, "null value", "/resourceModel/Title"))


def _event(logical_id: str, type_name: str, status: str, reason: str = "", physical_id: str = "") -> StackEvent:
    return StackEvent("e", STACK_ID, "demo", logical_id, physical_id, type_name, 1795541384.0, status, reason or None)


def _completed(**changes: object) -> StackTestCompleted:
    fields = dict(
        stack_name="demo", steps_run=2, steps_total=2, steps_failed=[], resources=1, checked_gone=1, unchecked=[],
        violations=[], failing_violations=0, leftovers=[], kept=[], elapsed_s=1.23456, problems=[],
    )
    fields.update(changes)
    return StackTestCompleted(**fields)  # type: ignore[arg-type]


def failed_run() -> List[StackTestEvent]:
    """A create that rolls back, then the delete: every record kind, with every optional key somewhere."""
    return [
        StackTestStarted("demo", "t.yaml", ["create Secret=****", "delete"], True, "http://127.0.0.1:5000"),
        StepStarted(1, 2, "create", {"Secret": "****"}),
        _event("demo", "AWS::CloudFormation::Stack", "CREATE_IN_PROGRESS", "User Initiated", STACK_ID),
        StackEvent("e2", STACK_ID, "demo", "Note", "", "Cfnrun::Sample::Note", 1795541384.5, "CREATE_FAILED",
                   "Properties validation failed for resource Note with message:\n#/Folder: 'a.b' does not match", '{"Title": "x"}', "tok"),
        StackEvent("e3", STACK_ID, "demo", "Note", "", "Cfnrun::Sample::Note", 1795541384.5, "CREATE_IN_PROGRESS",
                   hook_type="Cfnrun::Sample::Guard", hook_status="HOOK_COMPLETE_FAILED", hook_status_reason="no Title",
                   hook_invocation_point="PRE_PROVISION", hook_failure_mode="WARN"),
        StepProgress(1, ["Cluster DELETE_IN_PROGRESS"], 0.4),
        _event("demo", "AWS::CloudFormation::Stack", "ROLLBACK_COMPLETE", physical_id=STACK_ID),
        StepCompleted(1, "create", "ROLLBACK_COMPLETE", False, 0.5, "Note CREATE_FAILED: Properties validation failed"),
        StepStarted(2, 2, "delete", {}),
        StepCompleted(2, "delete", "DELETE_COMPLETE", True, 0.01),
        _completed(
            steps_failed=["step 1 (create) ended ROLLBACK_COMPLETE"], violations=[NULL_TITLE], failing_violations=1,
            leftovers=[Leftover("Cluster", "Cfnrun::Sample::Cluster", "cl-1", "READ still answers SUCCESS")],
            unchecked=["Hook (Custom::Thing) h-1: a custom resource"], kept=["Bucket (AWS::S3::Bucket) b: retained (DeletionPolicy)"],
            problems=["step 1 (create) ended ROLLBACK_COMPLETE"],
        ),
    ]


@pytest.mark.parametrize(
    "text, pairs",
    [
        ("NodeCount=2", (("NodeCount", "2"),)),
        ("NodeCount=2,Folder=archive", (("NodeCount", "2"), ("Folder", "archive"))),
        ("Subnets=a,b,Env=prod", (("Subnets", "a,b"), ("Env", "prod"))),  # a comma not followed by KEY= stays in the value
        ("Title=", (("Title", ""),)),
        ("Url=http://x?a=1", (("Url", "http://x?a=1"),)),
    ],
)
def test_assignments_split_on_commas_that_start_a_new_key(text: str, pairs: tuple) -> None:
    assert parse_assignments("--update", text) == pairs


@pytest.mark.parametrize(
    "text, says",
    [
        ("", "names no parameter, so it would change nothing"),
        ("NodeCount", "'NodeCount' is not KEY=VALUE"),
        ("=2", "'=2' is not KEY=VALUE"),
        ("Node-Count=2", "is not KEY=VALUE"),
        ("A=1,A=2", "A given twice"),
    ],
)
def test_a_bad_assignment_is_a_usage_error_naming_the_flag(text: str, says: str) -> None:
    with pytest.raises(CfnrunError, match=re.escape(says)) as raised:
        parse_assignments("--update", text)
    assert str(raised.value).startswith("--update ")


@pytest.mark.parametrize(
    "template, name", [("stack/template.yaml", "template"), ("My_Stack.JSON", "my-stack"), ("2024 app.yml", "stack-2024-app")]
)
def test_the_default_stack_name_is_the_templates_file_name_as_a_stack_name(template: str, name: str) -> None:
    assert default_stack_name(Path(template)) == name


def test_each_event_but_the_live_progress_has_a_record_in_order() -> None:
    records = [encode_stack_test(event) for event in failed_run()]
    assert records[5] is None  # StepProgress: live only
    kinds = [record["event"] for record in records if record is not None]
    assert kinds == [
        "stackTestStart", "stackStep", "stackEvent", "stackEvent", "stackEvent", "stackEvent", "stackStepResult", "stackStep",
        "stackStepResult", "stackTestResult",
    ]
    hooked = records[4]
    assert hooked is not None and (hooked["hookType"], hooked["hookStatus"], hooked["hookFailureMode"]) == (
        "Cfnrun::Sample::Guard", "HOOK_COMPLETE_FAILED", "WARN"
    )
    failed = records[3]
    assert failed is not None and failed["resourceStatus"] == "CREATE_FAILED" and failed["clientRequestToken"] == "tok"
    assert "resourceStatusReason" not in records[6] and "hookType" not in records[6]  # type: ignore[operator]  # left out when none
    result = records[-1]
    assert result is not None and result["failed"] is True and result["elapsedSeconds"] == 1.235
    assert result["violations"][0]["logicalResourceId"] == "Note" and result["violations"][0]["rule"] == "no-null-values"


def test_the_reference_page_names_every_stack_test_record_and_key() -> None:
    documented = set(re.findall(r"`([A-Za-z_]+)`", REFERENCE.read_text(encoding="utf-8")))
    records = [record for record in (encode_stack_test(event) for event in failed_run()) if record is not None]
    keys = {key for record in records for key in record} | {record["event"] for record in records}
    keys |= {key for record in records if record["event"] == "stackTestResult" for key in record["leftovers"][0]}
    keys |= {key for record in records if record["event"] == "stackTestResult" for key in record["violations"][0]}
    assert keys - documented == set()


def test_the_timeline_shows_each_event_the_rollback_and_the_verdict_without_colour_off_a_terminal() -> None:
    out = io.StringIO()
    timeline = StackTimeline(out)
    for event in failed_run():
        timeline(event)
    shown = out.getvalue()
    assert "\033[" not in shown and "at work" not in shown  # no colour, no live line in a pipe
    lines = shown.splitlines()
    failed = next(line for line in lines if "CREATE_FAILED" in line)
    assert failed.split()[1:3] == ["Note", "Cfnrun::Sample::Note"] and failed.endswith("Properties validation failed for resource Note with message:")
    assert lines[lines.index(failed) + 1].strip() == "#/Folder: 'a.b' does not match"  # a reason's next lines, indented under it
    hooked = next(line for line in lines if "HOOK_COMPLETE_FAILED" in line)
    assert hooked.split()[1:4] == ["Note", "Cfnrun::Sample::Note", "HOOK_COMPLETE_FAILED"] and hooked.endswith("Cfnrun::Sample::Guard: no Title")
    assert "── step 1/2: create Secret=**** ──" in shown
    assert "✗ step 1 create: ROLLBACK_COMPLETE (rolled back) in 0.50 s" in shown
    assert "✓ step 2 delete: DELETE_COMPLETE in 0.01 s" in shown
    assert "✗ Cluster (Cfnrun::Sample::Cluster) cl-1: READ still answers SUCCESS" in shown
    assert "? not checked: Hook (Custom::Thing) h-1" in shown
    assert "ends with this command" in shown  # something was kept
    assert lines[-1] == "FAILED: stack test demo"


def test_on_a_terminal_the_progress_line_is_redrawn_and_cleared_by_the_next_event() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    timeline = StackTimeline(out, color=False)
    timeline(StepProgress(1, ["Cluster CREATE_IN_PROGRESS"], 2.0))
    timeline(_event("Cluster", "Cfnrun::Sample::Cluster", "CREATE_COMPLETE"))
    assert out.getvalue().startswith("\r\033[K  … 2.0 s · at work: Cluster CREATE_IN_PROGRESS\r\033[K")
    assert out.getvalue().rstrip().endswith("CREATE_COMPLETE")
