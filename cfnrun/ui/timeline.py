"""The human view of an operation: one line per invocation, its logs, waits, the outcome."""
from __future__ import annotations

import json
from typing import Callable, Dict, List, Optional, TextIO

from cfnrun.events.encoding import DECIMALS
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
    not_yet_shown,
)
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.model.hook_protocol import describe_annotation, hook_annotations
from cfnrun.model.schema import ResourceSchema
from cfnrun.ui.faults import fault_line
from cfnrun.ui.frames import without_cfnrun_frames
from cfnrun.ui.escape import printable
from cfnrun.ui.paint import is_terminal, paint, wants_color



class TimelineRenderer:
    def __init__(
        self, out: TextIO, schema: ResourceSchema, color: Optional[bool] = None, mask: Optional[Callable[[str], str]] = None
    ) -> None:
        self.out = out
        self.mask = mask  # hides the operation's secrets (``LiveMask``) in every line written
        self.schema = schema
        self.live = is_terminal(out)
        self.color = wants_color(out, color)
        self._countdown_open = False
        self._virtual = False
        # Repeats: an invocation identical to the one before (status, event, output) is counted, not printed.
        self._last_answer: Optional[str] = None
        self._repeated: List[int] = []
        self._last_violations: List[str] = []
        self._retry_said = False  # the wait before a retry is on the retry's line
        self._wait_reason = "CallbackDelaySeconds"  # what the wait being counted down is for
        self._streamed: Dict[int, str] = {}  # output of a long call already shown live, by invocation

    def __call__(self, event: OperationEvent) -> None:
        if isinstance(event, InvocationRunning):
            if self.live:
                self.out.write(f"\r\033[K     … running #{event.number}  {event.running_s:.0f} s / {event.budget_s:g} s")
                self._countdown_open = True
        elif isinstance(event, InvocationOutput):
            self._close_countdown()
            if event.number not in self._streamed:
                self._flush_repeats()
                self._last_answer = None
                self._line(self._paint("dim", f"#{event.number:<3} running, its output so far:"))
            self._streamed[event.number] = self._streamed.get(event.number, "") + event.text
            self._logs(event.text)
        elif isinstance(event, OperationStarted):
            self._virtual = event.virtual_clock
            self._last_answer, self._repeated, self._last_violations = None, [], []  # --watch: a new run
            clock = " · virtual clock: waits are skipped, still counted" if event.virtual_clock else ""
            self._line(
                f"{self._paint('bold', event.action.value)} {event.type_name} "
                f"→ {event.function} ({event.entrypoint} entrypoint)"
            )
            self._line(
                self._paint(
                    "dim",
                    f"  per invocation: {event.invocation_budget.describe()}\n"
                    f"  whole operation: {event.operation_budget.describe()}{clock}",
                )
            )
        elif isinstance(event, InvocationCompleted):
            self._close_countdown()
            answer = self._answer(event)
            if answer == self._last_answer:
                self._repeated.append(event.number)
            else:
                self._flush_repeats()
                self._last_answer = answer
                self._last_violations = []
                self._invocation(event)
        elif isinstance(event, ContractChecked):
            self._close_countdown()
            self._violations(event)
        elif isinstance(event, Retrying):
            self._close_countdown()
            self._flush_repeats()
            self._last_answer = None  # every attempt of a retried request is shown
            self._retry_said = True
            virtual = " (virtual, not waited)" if self._virtual else ""
            self._line(self._paint(
                "IN_PROGRESS",
                f"     ↻ {printable(event.error_code)} is retriable: retry {event.retry}/{event.retries} "
                f"as #{event.next_number}, the same request after {event.delay_s:g} s{virtual}",
            ))
        elif self._retry_said and isinstance(event, Waiting) and event.virtual:
            self._retry_said = False
        elif self._repeated and isinstance(event, (Waiting, WaitTick)):
            return  # the wait after a repeated answer: said once, for the first of the run
        elif isinstance(event, Waiting):
            self._wait_reason = "backoff before the retry" if self._retry_said else "CallbackDelaySeconds"
            self._retry_said = False
            if event.virtual:
                self._line(self._paint("dim", f"     … callback after {round(event.delay_s, 1):g} s (virtual, not waited)"))
            elif event.delay_s > 0:
                self._countdown(event.delay_s, f"#{event.next_number} in")
        elif isinstance(event, WaitTick):
            if event.remaining_s > 0:
                self._countdown(event.remaining_s, "next call in")
            else:  # the wait is over: a clean line for whatever the next call prints (pdb, say)
                self._close_countdown()
        elif isinstance(event, OperationCompleted):
            self._close_countdown()
            self._flush_repeats()
            self._result(event.result)
        self.out.flush()

    # -- pieces ------------------------------------------------------------------

    def _violations(self, event: ContractChecked) -> None:
        lines = [v.line() for v in event.violations]
        if self._repeated and event.invocation == self._repeated[-1] and lines == self._last_violations:
            return  # the same violations as the repeated answer: counted with it
        self._flush_repeats()
        if event.invocation is not None:
            self._last_violations = lines
        for violation in event.violations:
            mark = self._paint("FAILED", "✗ contract") if violation.is_error else self._paint("IN_PROGRESS", "! contract")
            self._line(f"     {mark} {printable(violation.line())}")

    @staticmethod
    def _answer(event: InvocationCompleted) -> str:
        """What an invocation said, without its timing: equal for a handler repeating itself."""
        outcome = event.outcome
        said = {
            "kind": outcome.kind.value,
            "event": event.progress.wire() if event.progress is not None else outcome.result,
            "problem": event.problem,
            "logs": outcome.logs,
            "error": outcome.error_body,
            "note": outcome.note,
            "faults": outcome.faults,
        }
        return json.dumps(said, sort_keys=True, default=str)

    def _flush_repeats(self) -> None:
        if self._repeated:
            first, last, count = self._repeated[0], self._repeated[-1], len(self._repeated)
            span = f"#{first}" if count == 1 else f"#{first}–#{last}"
            self._line(self._paint("dim", f"     ⋮ {span}: the same answer again ({count} more invocation(s), not shown)"))
            self._repeated = []

    def _invocation(self, event: InvocationCompleted) -> None:
        outcome, progress = event.outcome, event.progress
        head = f"#{event.number:<3}"
        duration = f"{round(outcome.duration_ms, DECIMALS):8.1f} ms"  # rounded as recorded: history show prints the same
        if progress is not None:
            status = progress.status.value
            parts = [self._paint(status, f"{status:<11}"), duration]
            if progress.errorCode:
                parts.append(printable(str(progress.errorCode)))
            if progress.status.value == "IN_PROGRESS":
                parts.append(f"callback in {progress.callbackDelaySeconds or 0} s")
            if progress.resourceModels is not None:
                parts.append(f"{len(progress.resourceModels)} model(s)")
            if progress.nextToken:
                parts.append(f"nextToken {progress.nextToken!r}")
            if progress.message:
                parts.append(repr(progress.message) if "\n" in progress.message else printable(progress.message))
            self._line(f"{head} " + "  ".join(parts))
            for annotation in hook_annotations(progress):
                self._line(self._paint("dim", "     ◆ ") + printable(describe_annotation(annotation)))
        else:
            detail = printable(self._outcome_detail(outcome, event.problem))
            self._line(f"{head} {self._paint('FAILED', self._outcome_label(outcome)):<11}  {duration}  {detail}")
        if outcome.note:
            self._line(self._paint("dim", f"     ! {outcome.note}"))
        for fault in outcome.faults:
            self._line(self._paint("IN_PROGRESS", f"     ⚡ {printable(fault_line(fault))}"))
        self._logs(not_yet_shown(outcome.logs, self._streamed.pop(event.number, None)))
        stack = (outcome.error.stack_trace if outcome.error is not None else None) or ()
        if stack and outcome.kind is not OutcomeKind.TIMED_OUT:
            self._logs("".join(stack), prefix="     ! ")

    @staticmethod
    def _outcome_label(outcome: InvocationOutcome) -> str:
        return {
            OutcomeKind.TIMED_OUT: "TIMED OUT",
            OutcomeKind.WORKER_DIED: "CRASHED",
            OutcomeKind.INIT_ERROR: "INIT ERROR",
            OutcomeKind.FUNCTION_ERROR: "ERROR",
            OutcomeKind.RETURNED: "BAD EVENT",
        }[outcome.kind]

    @staticmethod
    def _outcome_detail(outcome: InvocationOutcome, problem: Optional[str]) -> str:
        if outcome.kind is OutcomeKind.TIMED_OUT:
            return f"cut after {outcome.timeout_s:g} s; worker killed and replaced"
        if outcome.kind is OutcomeKind.RETURNED:
            return problem or ""
        if outcome.kind is OutcomeKind.FUNCTION_ERROR:
            return f"{outcome.error_type}: {outcome.error_message}"
        return outcome.error_message

    def _logs(self, text: str, prefix: str = "     │ ") -> None:
        for line in printable(without_cfnrun_frames(text).rstrip("\n")).splitlines():
            self._line(self._paint("dim", prefix) + line)

    def _result(self, result: OperationResult) -> None:
        summary = (
            f"{self._paint(result.status.value, result.status.value)} {result.action.value} after "
            f"{result.invocations} invocation(s), {round(result.elapsed_s, DECIMALS):.2f} s"
            + (" (virtual clock: skipped waits included)" if self._virtual else "")
        )
        if result.error_code:
            summary += f"  {printable(result.error_code)}"
        self._line("")
        self._line(summary)
        if result.message:
            self._line(f"  {printable(result.message)}")
        if result.cause:
            self._line(f"  cause: {printable(result.cause)} (the handler's output)")
        if result.hint:
            self._line(self._paint("dim", f"  hint: {result.hint}"))
        errors = sum(1 for v in result.violations if v.is_error)
        warnings = len(result.violations) - errors
        if result.violations:
            self._line(f"  contract: {errors} error(s), {warnings} warning(s) — see the ✗ and ! lines above")
        if result.resource_model is not None:
            self._line("resourceModel:")
            self._json(self.schema.mask_write_only(result.resource_model))
        if result.resource_models is not None:
            self._line(f"resourceModels ({len(result.resource_models)}):")
            self._json([self.schema.mask_write_only(m) for m in result.resource_models])
        if result.callback_context is not None:
            self._line("callbackContext:")
            self._json(result.callback_context)

    def _json(self, value: object) -> None:
        for line in json.dumps(value, indent=2, sort_keys=True, default=str).splitlines():
            self._line("  " + line)

    def _countdown(self, remaining: float, label: str) -> None:
        if not self.live:
            if not self._countdown_open:
                self._line(self._paint("dim", f"     … waiting {remaining:g} s ({self._wait_reason})"))
                self._countdown_open = True
            return
        self.out.write(f"\r\033[K     … {label} {remaining:.0f} s")
        self._countdown_open = True

    def _close_countdown(self) -> None:
        if self._countdown_open and self.live:
            self.out.write("\r\033[K")
        self._countdown_open = False

    def _line(self, text: str) -> None:
        self.out.write((text if self.mask is None else self.mask(text)) + "\n")

    def _paint(self, style: str, text: str) -> str:
        return paint(style, text, self.color)
