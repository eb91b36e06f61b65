"""What ``cfnrun serve`` prints: one line per call, then the handler's own output."""
from __future__ import annotations

import sys
import threading
import time
from typing import Any, Optional, Sequence, TextIO

from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.ui.escape import printable
from cfnrun.ui.paint import paint, wants_color
from cfnrun.ui.faults import fault_line
from cfnrun.ui.frames import without_cfnrun_frames

def call_status(outcome: InvocationOutcome) -> str:
    """SUCCESS / IN_PROGRESS / FAILED <code> for a ProgressEvent (or a hook's HookProgressEvent), else what happened."""
    if outcome.kind is OutcomeKind.RETURNED:
        result: Any = outcome.result
        key = "hookStatus" if isinstance(result, dict) and "hookStatus" in result else "status"
        if isinstance(result, dict) and isinstance(result.get(key), str):
            code = result.get("errorCode")
            return f"{result[key]} {code}" if code else result[key]
        return "returned"
    labels = {
        OutcomeKind.FUNCTION_ERROR: f"error {outcome.error_type}",
        OutcomeKind.TIMED_OUT: "timed out",
        OutcomeKind.WORKER_DIED: "crashed",
        OutcomeKind.INIT_ERROR: f"init error {outcome.error_type}",
    }
    return labels[outcome.kind]


class Console:
    def __init__(self, out: Optional[TextIO] = None, color: Optional[bool] = None) -> None:
        self.out = out or sys.stdout
        self.color = wants_color(self.out, color)
        self._lock = threading.Lock()

    def _paint(self, style: str, text: str) -> str:
        return paint(style, text, self.color)

    def _write(self, text: str) -> None:
        with self._lock:
            self.out.write(text if text.endswith("\n") else text + "\n")
            self.out.flush()

    def info(self, message: str) -> None:
        self._write(printable(message))

    def warn(self, message: str) -> None:
        self._write(self._paint("warn", f"WARNING: {printable(message)}"))

    def error(self, message: str) -> None:
        self._write(self._paint("fail", f"ERROR: {printable(message)}"))

    def call(self, function: str, action: Optional[str], outcome: InvocationOutcome, notes: Sequence[str] = ()) -> None:
        """One call: a head line, then the handler's output and the notes, control characters shown escaped."""
        status = printable(call_status(outcome))
        first = (status.split() or [""])[0]  # a status may be empty (an answer's own "status": "")
        good = first in ("SUCCESS", "IN_PROGRESS", "returned") or first.lower() == "success"  # a macro answers "success"
        short_id = outcome.request_id[:8]
        stamp = time.strftime("%H:%M:%S")
        head = (
            f"{stamp} {function}{' ' + action if action else ''} → "
            f"{self._paint('ok' if good else 'fail', status)} {outcome.duration_ms:.1f} ms [{short_id}]"
        )
        lines = [head]
        if outcome.kind is not OutcomeKind.RETURNED and outcome.error_message:
            lines.append(f"    {short_id} ! {printable(outcome.error_message)}")
        lines += [self._paint("warn", f"    {short_id} ⚡ {printable(fault_line(fault))}") for fault in outcome.faults]
        lines += [f"    {short_id} │ {line}" for line in printable(without_cfnrun_frames(outcome.logs).rstrip("\n")).splitlines()]
        lines += [self._paint("warn", f"    {short_id} ! {printable(note)}") for note in notes]
        self._write("\n".join(lines))
