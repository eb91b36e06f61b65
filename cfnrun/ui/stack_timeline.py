"""What ``cfnrun stack test`` shows on a terminal: the stack's events as they happen, step by step, then the verdict.

One line per stack event, as ``aws cloudformation describe-stack-events`` lists them (time,
LogicalResourceId, ResourceType, ResourceStatus, ResourceStatusReason), coloured by status; a
header per step; while handlers stabilize, a live line naming the resources still at work
(terminals only: a log or a pipe gets the events and the verdict). Text from handlers (reasons)
is shown escaped, never obeyed.
"""
from __future__ import annotations

import time
from typing import Optional, TextIO

from cfnrun.events.stack import (
    StackEvent,
    StackTestCompleted,
    StackTestEvent,
    StackTestStarted,
    StepCompleted,
    StepProgress,
    StepStarted,
)
from cfnrun.ui.escape import printable
from cfnrun.ui.paint import fitted, is_terminal, paint, wants_color

LOGICAL_WIDTH = 22
TYPE_WIDTH = 28
STATUS_WIDTH = 34
KEPT_NOTE = (
    "  the stack itself ends with this command (no --state), so nothing deletes these later: delete them with their own "
    "handlers (cfnrun invoke DELETE) or on the AWS endpoint (with --moto, they went with moto)"
)
KEPT_IN_NOTE = (
    "  the stack is kept in {folder}: cfnrun serve --state {folder} (with the same --provider options) serves it again, to "
    "inspect it or delete it (aws cloudformation delete-stack); AWS::* resources on an embedded --moto are gone with it"
)


def status_style(status: str) -> str:
    """The colour of a ResourceStatus: red for failures and rollbacks, green for completions, yellow while in progress."""
    if "FAILED" in status or "ROLLBACK" in status:
        return "fail"
    if status.endswith("_IN_PROGRESS"):
        return "IN_PROGRESS"
    if status.endswith(("_COMPLETE", "_SUCCEEDED")):
        return "ok"
    return "dim"


class StackTimeline:
    def __init__(self, out: TextIO, color: Optional[bool] = None) -> None:
        self.out = out
        self.live = is_terminal(out)
        self.color = wants_color(out, color)
        self._progress_open = False

    def __call__(self, event: StackTestEvent) -> None:
        if isinstance(event, StackEvent):
            self._event(event)
        elif isinstance(event, StepProgress):
            self._progress(event)
        elif isinstance(event, StackTestStarted):
            clock = " · virtual clock" if event.virtual_clock else ""
            endpoint = f" · AWS::* on {event.aws_endpoint}" if event.aws_endpoint else ""
            self._line(f"{self._paint('bold', 'stack test')} {event.stack_name} from {event.template}{clock}{endpoint}")
            self._line(self._paint("dim", "  steps: " + " → ".join(printable(step) for step in event.steps)))
        elif isinstance(event, StepStarted):
            settings = " ".join(f"{key}={value}" for key, value in event.parameters.items())
            self._line("")
            self._line(self._paint("bold", printable(f"── step {event.number}/{event.total}: {event.kind} {settings}".rstrip() + " ──")))
        elif isinstance(event, StepCompleted):
            self._step_result(event)
        elif isinstance(event, StackTestCompleted):
            self._summary(event)

    def _paint(self, style: str, text: str) -> str:
        return paint(style, text, self.color)

    def _line(self, text: str) -> None:
        if self._progress_open:
            self.out.write("\r\033[K")
            self._progress_open = False
        self.out.write(text + "\n")
        self.out.flush()

    def _event(self, event: StackEvent) -> None:
        stamp = time.strftime("%H:%M:%S", time.localtime(event.timestamp))
        logical = printable(event.logical_id).ljust(LOGICAL_WIDTH)
        type_name = printable(event.resource_type).ljust(TYPE_WIDTH)
        # a hook's event shows the hook's status and reason (HOOK_COMPLETE_FAILED  Org::Hook::Name: why), as the console does
        shown_status = event.hook_status or event.status
        reason = f"{event.hook_type}: {event.hook_status_reason or ''}".rstrip(": ") if event.hook_type else event.reason or ""
        status = self._paint(status_style(shown_status), shown_status.ljust(STATUS_WIDTH))
        reason_lines = printable(reason).splitlines() or [""]
        self._line(f"{stamp}  {logical} {type_name} {status} {reason_lines[0]}".rstrip())
        indent = " " * (10 + LOGICAL_WIDTH + TYPE_WIDTH + STATUS_WIDTH + 3)
        for more in reason_lines[1:]:
            self._line(indent + more)

    def _progress(self, event: StepProgress) -> None:
        if not self.live:
            return
        text = printable(f"  … {event.elapsed_s:.1f} s · at work: {', '.join(event.in_progress)}")
        self.out.write("\r\033[K" + self._paint("dim", fitted(text)))
        self.out.flush()
        self._progress_open = True

    def _step_result(self, event: StepCompleted) -> None:
        took = f"in {event.elapsed_s:.2f} s"
        if event.ok:
            self._line(self._paint("ok", f"✓ step {event.number} {event.kind}: {event.status} {took}"))
            return
        rolled_back = " (rolled back)" if "ROLLBACK_COMPLETE" in event.status else ""
        self._line(self._paint("fail", f"✗ step {event.number} {event.kind}: {event.status}{rolled_back} {took}"))
        if event.reason:
            self._line(self._paint("fail", printable(f"  {event.reason}")))

    def _summary(self, event: StackTestCompleted) -> None:
        self._line("")
        self._line(self._paint("bold", "summary"))
        steps_ok = event.steps_run - len(event.steps_failed)
        skipped = event.steps_total - event.steps_run
        self._row("steps", f"{steps_ok}/{event.steps_total} completed" + (f", {skipped} skipped after a failure" if skipped else ""),
                  "fail" if event.steps_failed else "ok")
        for failed in event.steps_failed:
            self._detail("✗", failed)
        gone = f", {event.checked_gone} confirmed gone after delete" if event.checked_gone else ""
        self._row("resources", f"{event.resources} made (replacements included){gone}", None)
        errors = sum(1 for v in event.violations if v.is_error)
        warnings = len(event.violations) - errors
        contract = f"{errors} MUST, {warnings} SHOULD violation(s)" if event.violations else "no violations"
        self._row("contract", contract, "fail" if event.failing_violations else ("warn" if event.violations else "ok"))
        for violation in event.violations:
            self._detail("✗" if violation.is_error else "!", violation.line())
        self._row("leftovers", f"{len(event.leftovers)}" if event.leftovers else "none", "fail" if event.leftovers else "ok")
        for leftover in event.leftovers:
            self._detail("✗", leftover.line())
        for line in event.unchecked:
            self._detail("?", f"not checked: {line}")
        if event.kept:
            self._row("kept", f"{len(event.kept)} resource(s), not deleted", "warn")
            for line in event.kept:
                self._detail("·", line)
            self._line(self._paint("dim", KEPT_IN_NOTE.format(folder=event.kept_in) if event.kept_in else KEPT_NOTE))
        self._row("wall time", f"{event.elapsed_s:.2f} s", None)
        verdict = "FAILED" if event.failed else "PASSED"
        self._line(self._paint("fail" if event.failed else "ok", f"{verdict}: stack test {event.stack_name}"))

    def _row(self, name: str, text: str, style: Optional[str]) -> None:
        self._line(f"  {name:<10} {self._paint(style, text) if style else text}")

    def _detail(self, mark: str, text: str) -> None:
        self._line(f"    {mark} {printable(text)}")

