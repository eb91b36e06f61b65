"""cfn-lint over a stack's template in a child process: its findings arrive as warnings, and never slow the stack.

cfn-lint is pure Python and holds the interpreter's lock while it checks: over a template of a few
hundred resources, seconds in which serve's event loop, in one of its threads, would hardly run,
though nothing waits for the findings (the service accepts these templates; ``template/lint.py``
says why). So the lint runs in a child process (``python -m cfnrun.stacks.lint_process``, kept
warm by ``runtime/line_children.py``: cfn-lint's import and rules are loaded once), on the other
core, bounded by ``LINT_LIMIT_S``.
"""
from __future__ import annotations

from typing import Any, Dict, List, Sequence

from cfnrun.runtime.line_children import ChildEnded, ChildTimedOut, LineChildren, answer_lines
from cfnrun.stacks.template.lint import lint_template, lint_warnings

LINT_LIMIT_S = 120.0  # cfn-lint over the largest template the service takes (1 MB) is well within it
CHILDREN = LineChildren(__name__, idle=1)
NOT_REFUSED = "the template is not refused"


async def lint_lines(body: str, schemas: Sequence[Dict[str, Any]], region: str, limit_s: float = LINT_LIMIT_S) -> List[str]:
    """The console's warning lines for the template (the served types' ``schemas`` included): cfn-lint's findings,
    or why it did not run — never an error of the template's."""
    try:
        answer = await CHILDREN.ask({"body": body, "schemas": list(schemas), "region": region}, limit_s)
    except ChildTimedOut:
        return [f"template lint did not finish within {limit_s:g} s and was stopped; {NOT_REFUSED}"]
    except ChildEnded as error:
        return [f"template lint did not run (its process ended: {error}); {NOT_REFUSED}"]
    return [str(line) for line in answer["warnings"]]


def _answer(request: Dict[str, Any]) -> Dict[str, Any]:
    try:
        warnings = lint_warnings(lint_template(request["body"], request["schemas"], request["region"]))
    except Exception as error:  # noqa: B902 - cfn-lint's own failure is never the template's: say so and go on
        warnings = [f"template lint did not run (cfn-lint failed: {type(error).__name__}: {error}); {NOT_REFUSED}"]
    return {"warnings": warnings}


if __name__ == "__main__":
    answer_lines(_answer)
