"""serve's line per call: the usual call's head line alone, and a call with more to say under the same head."""
from __future__ import annotations

import io
import re

from cfnrun.runtime.lambda_error import LambdaError
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.ui.console import Console

HEAD = r"\d\d:\d\d:\d\d TypeFunction LIST → SUCCESS 1\.2 ms \[01234567\]"


def _printed(*calls: tuple) -> str:
    out = io.StringIO()
    console = Console(out, color=False)
    for outcome, notes in calls:
        console.call("TypeFunction", "LIST", outcome, notes)
    return out.getvalue()


def test_the_usual_call_is_its_head_line_alone_and_a_call_with_output_or_notes_has_them_under_the_same_head() -> None:
    plain = InvocationOutcome(OutcomeKind.RETURNED, "0123456789abcdef", 1.234, result={"status": "SUCCESS"})
    said = InvocationOutcome(OutcomeKind.RETURNED, "0123456789abcdef", 1.234, logs="hello\x1b[31m\n", result={"status": "SUCCESS"})
    printed = _printed((plain, []), (said, ["a note"]), (plain, ["only a note"])).splitlines()
    assert len(printed) == 6
    assert all(re.fullmatch(HEAD, printed[n]) for n in (0, 1, 4)), printed
    assert printed[2:4] == ["    01234567 │ hello\\x1b[31m", "    01234567 ! a note"]
    assert printed[5] == "    01234567 ! only a note"


def test_a_call_that_failed_says_why_under_its_head() -> None:
    crashed = InvocationOutcome(OutcomeKind.WORKER_DIED, "0123456789abcdef", 3.0, error=LambdaError("Runtime.ExitError", "exit 1"))
    failed = InvocationOutcome(OutcomeKind.RETURNED, "0123456789abcdef", 3.0, result={"status": "FAILED", "errorCode": "NotFound"})
    printed = _printed((crashed, []), (failed, [])).splitlines()
    assert printed[0].endswith("→ crashed 3.0 ms [01234567]") and printed[1] == "    01234567 ! exit 1"
    assert printed[2].endswith("→ FAILED NotFound 3.0 ms [01234567]") and len(printed) == 3


def test_a_status_with_control_characters_is_shown_escaped_and_other_text_as_it_is() -> None:
    odd = InvocationOutcome(OutcomeKind.RETURNED, "0123456789abcdef", 1.0, result={"status": "SUC\x1b[2J\x85CESS", "errorCode": "Ünïcode\u2028"})
    printed = _printed((odd, []))
    assert "→ SUC\\x1b[2J\\x85CESS Ünïcode\u2028 1.0 ms" in printed and "\x1b" not in printed and "\x85" not in printed
