"""Regular expressions that may backtrack, matched in a child process that a deadline stops.

ECMA-262 engines backtrack: ``^(a+)+$`` against 35 characters takes hours, and regress holds the
interpreter's lock while it matches, so in serve's process such a value (a Cloud Control
DesiredState, a stack parameter) would stop every API and SIGTERM with it. ``model/patterns.py``
sends here each match it cannot show to be cheap; this module keeps one child process
(``python -m cfnrun.model.pattern_worker``, a line of JSON in and a verdict out per match),
waits for a verdict at most ``MATCH_LIMIT_S``, and past it kills the child (the next match starts
another) and raises PatternTimeout; later values of that pattern at least as long are refused at
once, so a request full of them stops serve for one limit, not one per value. The child also stops itself (SIGALRM, whose default action ends
the process) if a match outlives twice the limit, so none is left running when its parent is gone.
"""
from __future__ import annotations

import atexit
import functools
import json
import os
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Dict, Optional, Tuple

PACKAGE_HOME = str(Path(__file__).resolve().parents[2])  # the folder that holds the cfnrun package
MATCH_LIMIT_S = 2.0  # far above any real match (microseconds), far below a client's timeout
BACKTRACKED = "(it backtracks on this value)"  # in every PatternTimeout's message


class PatternTimeout(Exception):
    """A match that ran past ``MATCH_LIMIT_S``: the pattern backtracks on this value."""

    def __init__(self, pattern: str, seconds: float, earlier: bool = False) -> None:
        what = "a value at least as long did not finish matching it" if earlier else "matching it did not finish"
        super().__init__(f"pattern {pattern!r}: {what} within {seconds:g} s {BACKTRACKED}, so it was stopped")
        self.pattern = pattern


class PatternWorker:
    """The child process, started on the first match that needs it; one match at a time."""

    def __init__(self, limit_s: float = MATCH_LIMIT_S) -> None:
        self.limit_s = limit_s
        self._child: Optional["subprocess.Popen[bytes]"] = None
        self._lock = threading.Lock()
        # By pattern: the shortest value that ran past the limit. A value at least as long is refused without a match, so
        # many such values in one request (an array's items) cost one limit, not one each (a shorter one backtracks less).
        self._stopped_at: Dict[Tuple[str, str], int] = {}

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - one worker for the process's life: the cache does not keep one alive
    def find(self, source: str, flags: str, text: str, pattern: str) -> bool:
        """Does ``source`` (compiled with ``flags``) match somewhere in ``text``? PatternTimeout past the limit.

        Verdicts are kept (the same values are checked again and again: each request, each handler's answer).
        """
        request = json.dumps({"source": source, "flags": flags, "text": text}).encode() + b"\n"
        with self._lock:
            if len(text) >= self._stopped_at.get((source, flags), len(text) + 1):
                raise PatternTimeout(pattern, self.limit_s, earlier=True)
            child = self._running()
            stdin, stdout = _pipes(child)
            try:
                stdin.write(request)
                stdin.flush()
                ready, _, _ = select.select([stdout], [], [], self.limit_s)
                answer = stdout.readline() if ready else b""
            except (BrokenPipeError, OSError):
                answer = b""
            if answer.strip() in (b"1", b"0"):
                return answer.strip() == b"1"
            self._stop()
            if not ready:
                self._stopped_at[(source, flags)] = min(len(text), self._stopped_at.get((source, flags), len(text)))
                raise PatternTimeout(pattern, self.limit_s)
            raise ValueError(f"the pattern process could not match {pattern!r}")

    def _running(self) -> "subprocess.Popen[bytes]":
        if self._child is None or self._child.poll() is not None:
            self._child = subprocess.Popen(
                [sys.executable, "-m", __name__, str(self.limit_s * 2)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True,
                cwd=PACKAGE_HOME,  # "-m" imports from the folder it starts in first: the one that holds this cfnrun
            )
        return self._child

    def close(self) -> None:
        """End the child (at exit: it would end anyway once this process's end of its pipe closes)."""
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        if self._child is not None:
            self._child.kill()
            self._child.wait()
            self._child = None


def _pipes(child: "subprocess.Popen[bytes]") -> "tuple[IO[bytes], IO[bytes]]":
    assert child.stdin is not None and child.stdout is not None
    return child.stdin, child.stdout


WORKER = PatternWorker()
atexit.register(WORKER.close)


def _serve(own_limit_s: float) -> None:
    import regress

    for line in sys.stdin.buffer:
        request = json.loads(line)
        signal.setitimer(signal.ITIMER_REAL, own_limit_s)  # past it SIGALRM's default action ends this process
        found = regress.Regex(request["source"], request["flags"]).find(request["text"]) is not None
        signal.setitimer(signal.ITIMER_REAL, 0)
        os.write(1, b"1\n" if found else b"0\n")


if __name__ == "__main__":
    _serve(float(sys.argv[1]))
