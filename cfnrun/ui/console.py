"""What ``cfnrun serve`` prints: one line per call, then the handler's own output."""
from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, TextIO

from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.ui.escape import printable
from cfnrun.ui.paint import paint, wants_color
from cfnrun.ui.faults import fault_line
from cfnrun.ui.frames import without_cfnrun_frames

if TYPE_CHECKING:
    import asyncio

def _is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):  # a closed stream, a stand-in without isatty
        return False


def _running_loop() -> Optional["asyncio.AbstractEventLoop"]:
    """This thread's running event loop; None where asyncio was never imported (``cfnrun invoke`` does not load it)."""
    asyncio_module = sys.modules.get("asyncio")
    if asyncio_module is None:
        return None
    try:
        loop: "asyncio.AbstractEventLoop" = asyncio_module.get_running_loop()
    except RuntimeError:
        return None
    return loop


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
        self._interactive = _is_terminal(self.out)
        self._flush_due = False
        self._flush_loop: Optional["asyncio.AbstractEventLoop"] = None
        self._stamp = (-1, "")  # the second of the last call's line and its HH:MM:SS, made once a second

    def _clock(self) -> str:
        """The local time, HH:MM:SS, as ``time.strftime`` writes it (once a second, not once a line)."""
        second = int(time.time())
        if second != self._stamp[0]:
            self._stamp = (second, time.strftime("%H:%M:%S", time.localtime(second)))
        return self._stamp[1]

    def _paint(self, style: str, text: str) -> str:
        return paint(style, text, self.color)

    def _write(self, text: str) -> None:
        with self._lock:
            self.out.write(text if text.endswith("\n") else text + "\n")
            if not self._flush_at_end_of_turn():
                self.out.flush()

    def _flush_at_end_of_turn(self) -> bool:
        """To a pipe or file, the lines written in one turn of this thread's event loop go out as one write, just
        after it (a flush is due already, or is now); a terminal, or a thread without a running loop, flushes each line."""
        loop = None if self._interactive else _running_loop()
        if loop is None:
            return False
        if not (self._flush_due and loop is self._flush_loop):  # a loop that closed before its flush ran left no flush due
            loop.call_soon(self._flush)
            self._flush_due, self._flush_loop = True, loop
        return True

    def _flush(self) -> None:
        with self._lock:
            self._flush_due = False
            self.out.flush()

    def info(self, message: str) -> None:
        self._write(printable(message))

    def warn(self, message: str, mask: Optional[Callable[[str], str]] = None) -> None:
        message = message if mask is None else mask(message)
        self._write(self._paint("warn", f"WARNING: {printable(message)}"))

    def error(self, message: str) -> None:
        self._write(self._paint("fail", f"ERROR: {printable(message)}"))

    def call(
        self,
        function: str,
        action: Optional[str],
        outcome: InvocationOutcome,
        notes: Sequence[str] = (),
        mask: Optional[Callable[[str], str]] = None,
    ) -> None:
        """One call: a head line, then the handler's output and the notes, control characters shown escaped; ``mask``
        hides the call's secrets (its writeOnly values, its credentials) in the output and the notes."""
        status = call_status(outcome)
        if not status.isprintable():  # every character printable() escapes is a control character, which isprintable() refuses
            status = printable(status)
        first = (status.split() or [""])[0]  # a status may be empty (an answer's own "status": "")
        good = first in ("SUCCESS", "IN_PROGRESS", "returned") or first.lower() == "success"  # a macro answers "success"
        short_id = outcome.request_id[:8]
        stamp = self._clock()
        head = (
            f"{stamp} {function}{' ' + action if action else ''} → "
            f"{self._paint('ok' if good else 'fail', status)} {outcome.duration_ms:.1f} ms [{short_id}]"
        )
        if not (outcome.logs or outcome.faults or notes or outcome.error is not None):  # the usual call: its head line alone
            self._write(head)
            return
        lines = [head]
        if outcome.kind is not OutcomeKind.RETURNED and outcome.error_message:
            lines.append(f"    {short_id} ! {printable(outcome.error_message)}")
        lines += [self._paint("warn", f"    {short_id} ⚡ {printable(fault_line(fault))}") for fault in outcome.faults]
        if outcome.logs:
            lines += [f"    {short_id} │ {line}" for line in printable(without_cfnrun_frames(outcome.logs).rstrip("\n")).splitlines()]
        lines += [self._paint("warn", f"    {short_id} ! {printable(note)}") for note in notes]
        text = "\n".join(lines)
        self._write(text if mask is None else mask(text))
