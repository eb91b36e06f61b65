"""What ``cfnrun fuzz`` shows on a terminal: one live line while it explores, then the verdict.

The live line (examples run, operations per second, the sequence just run) is redrawn at most
ten times a second, and only on a terminal; a log or a pipe gets the start and the verdict. A
failure is printed as the requests that reproduce it, then how to run it again.
"""
from __future__ import annotations

import time
from typing import TextIO

from cfnrun.events.fuzz import ExampleRun, FuzzCompleted, FuzzEvent, FuzzStarted, case_lines
from cfnrun.ui.escape import printable
from cfnrun.ui.paint import fitted, is_terminal, paint, wants_color

REDRAW_S = 0.1


class FuzzProgress:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.live = is_terminal(out)
        self.color = wants_color(out)
        self._drawn = 0.0

    def __call__(self, event: FuzzEvent) -> None:
        if isinstance(event, FuzzStarted):
            seed = f", seed {event.seed}" if event.seed is not None else ""
            faults = f", injecting {', '.join(event.faults)}" if event.faults else ""
            clock = "virtual" if event.virtual_clock else "real"
            them = "it" if len(event.undeclared) == 1 else "them"
            undeclared = f" (not {', '.join(event.undeclared)}: the schema declares no handler for {them})" if event.undeclared else ""
            self._line(
                f"fuzzing {event.type_name}: up to {event.max_examples} sequences of {', '.join(event.actions)}{undeclared} "
                f"({clock} clock{seed}{faults})"
            )
        elif isinstance(event, ExampleRun):
            self._progress(event)
        elif isinstance(event, FuzzCompleted):
            self._verdict(event)

    def _line(self, text: str) -> None:
        if self.live:
            self.out.write("\r\033[K")
        self.out.write(text + "\n")
        self.out.flush()

    def _progress(self, event: ExampleRun) -> None:
        now = time.monotonic()
        if not self.live or now - self._drawn < REDRAW_S:
            return
        self._drawn = now
        rate = event.operations / event.elapsed_s if event.elapsed_s > 0 else 0.0
        text = printable(f"{event.number} examples · {event.operations} operations · {rate:.0f}/s · {' → '.join(event.steps)}")
        self.out.write("\r\033[K" + fitted(text))
        self.out.flush()

    def _verdict(self, event: FuzzCompleted) -> None:
        totals = f"{event.examples} examples, {event.operations} operations in {event.elapsed_s:.1f} s ({event.operations_per_second:.0f}/s)"
        if not event.failed:
            self._line(paint("ok", f"no failure: {totals}", self.color))
            return
        if event.shrink_stopped:
            head = f"FAILED: a sequence that breaks the handler, not the smallest: {event.shrink_stopped} ({totals}):"
        else:
            head = f"FAILED: the smallest sequence that breaks the handler ({totals}):"
        self._line(paint("fail", head, self.color))
        for line in case_lines(event.steps, event.failing_step, event.problems):
            self._line(paint("fail", printable(line), self.color) if line.lstrip().startswith("✗") else printable(line))
        if event.history_id is not None:
            self._line(f"recorded as #{event.history_id}: cfnrun replay {event.history_id} runs it again")
        else:
            self._line("not recorded in the history (CFNRUN_HISTORY is off): cfnrun replay cannot run it")
