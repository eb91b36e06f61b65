"""Guard rules evaluated in a child process, within a time limit: rules that run long never stop serve.

The Guard library holds the interpreter's lock while it evaluates, so in one of serve's threads a
rule that runs for a minute (a comparison of every item with every other, over a large template)
would stop every API for that minute, and nothing could stop it. Here each evaluation runs in a
child process (``python -m cfnrun.stacks.guard_process``, kept warm by ``runtime/line_children.py``:
one line of JSON in per evaluation — the rules, the document, where the rules came from — and one
line out, the verdict or the error).
Past ``limit`` the child is killed and the evaluation is a GuardError saying so; serve stopping
kills it too. A child that answered is kept for the next evaluation (up to ``IDLE_CHILDREN`` of
them, for the hooks of resources made at once), so an evaluation costs a round trip, not a start
(0.3 ms against 0.1 ms in a thread, and 100 ms with a process started per evaluation, measured
2026-11-26); the children end when serve's end of their pipe closes.
"""
from __future__ import annotations

from typing import Any, Dict

from cfnrun.model.budgets import Budget
from cfnrun.runtime.line_answers import answer_lines
from cfnrun.runtime.line_children import ChildEnded, ChildTimedOut, LineChildren
from cfnrun.stacks.guard_rules import GuardError, GuardVerdict, evaluate

IDLE_CHILDREN = 2
CHILDREN = LineChildren(__name__, IDLE_CHILDREN)


async def evaluated(rules: str, document: Dict[str, Any], source: str, limit: Budget) -> GuardVerdict:
    """``guard_rules.evaluate`` in a child process; GuardError when it fails, or when it runs past ``limit``."""
    try:
        answer = await CHILDREN.ask({"rules": rules, "document": document, "source": source}, limit.seconds)
    except ChildTimedOut:
        raise GuardError(f"Guard rules {source} did not finish within {limit.describe()}: the evaluation was stopped") from None
    except ChildEnded as error:
        raise GuardError(f"Guard could not evaluate rules {source}: its process ended: {error}") from None
    if "error" in answer:
        raise GuardError(str(answer["error"]))
    return GuardVerdict(bool(answer["passed"]), tuple((str(rule), str(message)) for rule, message in answer["failures"]))


def _answer(request: Dict[str, Any]) -> Dict[str, Any]:
    try:
        verdict = evaluate(request["rules"], request["document"], request["source"])
    except GuardError as error:
        return {"error": str(error)}
    return {"passed": verdict.passed, "failures": [list(failure) for failure in verdict.failures]}


if __name__ == "__main__":
    answer_lines(_answer)
