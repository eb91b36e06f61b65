"""Guard rules evaluated in a child process, within a time limit: rules that run long never stop serve.

The Guard library holds the interpreter's lock while it evaluates, so in one of serve's threads a
rule that runs for a minute (a comparison of every item with every other, over a large template)
would stop every API for that minute, and nothing could stop it. Here each evaluation runs in a
child process (``python -m cfnrun.stacks.guard_process``: one line of JSON in per evaluation — the
rules, the document, where the rules came from — and one line out, the verdict or the error).
Past ``limit`` the child is killed and the evaluation is a GuardError saying so; serve stopping
kills it too. A child that answered is kept for the next evaluation (up to ``IDLE_CHILDREN`` of
them, for the hooks of resources made at once), so an evaluation costs a round trip, not a start
(0.3 ms against 0.1 ms in a thread, and 100 ms with a process started per evaluation, measured
2026-11-26); the children end when serve's end of their pipe closes.
"""
from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, Dict, List, Optional

from cfnrun.model.budgets import Budget
from cfnrun.model.pattern_worker import PACKAGE_HOME
from cfnrun.stacks.guard_rules import GuardError, GuardVerdict, evaluate

IDLE_CHILDREN = 2
LINE_LIMIT_BYTES = 64 * 1024 * 1024  # an answer line (the verdict's messages) is far shorter


class GuardProcesses:
    """The children that evaluate Guard rules, each used by one evaluation at a time; bound to one event loop."""

    def __init__(self) -> None:
        self._idle: List[asyncio.subprocess.Process] = []
        self._loop: Optional[asyncio.AbstractEventLoop] = None

    async def evaluated(self, rules: str, document: Dict[str, Any], source: str, limit: Budget) -> GuardVerdict:
        """``guard_rules.evaluate`` in a child process; GuardError when it fails, or when it runs past ``limit``."""
        request = json.dumps({"rules": rules, "document": document, "source": source}, default=str).encode() + b"\n"
        child = await self._child()
        answered = False
        try:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(request)
            await child.stdin.drain()
            line = await asyncio.wait_for(child.stdout.readline(), timeout=limit.seconds)
            answered = bool(line)
        except asyncio.TimeoutError:
            raise GuardError(f"Guard rules {source} did not finish within {limit.describe()}: the evaluation was stopped") from None
        except (ConnectionError, ValueError) as error:  # the child ended (or its answer was past any bound)
            raise GuardError(f"Guard could not evaluate rules {source}: its process ended: {error}") from None
        finally:
            if answered and len(self._idle) < IDLE_CHILDREN:
                self._idle.append(child)
            else:  # past the limit, serve stopping, or enough kept: the evaluation ends with the child
                await _stop(child)
        if not line:
            raise GuardError(f"Guard could not evaluate rules {source}: its process ended ({child.returncode})")
        answer = json.loads(line)
        if "error" in answer:
            raise GuardError(str(answer["error"]))
        return GuardVerdict(bool(answer["passed"]), tuple((str(rule), str(message)) for rule, message in answer["failures"]))

    async def _child(self) -> asyncio.subprocess.Process:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # children of another (ended) loop cannot be awaited here: they end with their pipes
            self._idle, self._loop = [], loop
        while self._idle:
            child = self._idle.pop()
            if child.returncode is None:
                return child
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", __name__, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=LINE_LIMIT_BYTES,
            cwd=PACKAGE_HOME,  # "-m" imports from the folder it starts in first: the one that holds this cfnrun
        )


async def _stop(child: asyncio.subprocess.Process) -> None:
    if child.returncode is None:
        child.kill()
    await child.wait()


PROCESSES = GuardProcesses()
evaluated = PROCESSES.evaluated


def _main() -> None:
    for line in sys.stdin.buffer:
        request = json.loads(line)
        try:
            verdict = evaluate(request["rules"], request["document"], request["source"])
        except GuardError as error:
            answer: Dict[str, Any] = {"error": str(error)}
        else:
            answer = {"passed": verdict.passed, "failures": [list(failure) for failure in verdict.failures]}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    _main()
