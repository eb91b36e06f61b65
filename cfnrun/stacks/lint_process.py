"""cfn-lint over a stack's template in a child process: its findings arrive as warnings, and never slow the stack.

cfn-lint is pure Python and holds the interpreter's lock while it checks: over a template of a few
hundred resources, seconds in which serve's event loop, in one of its threads, would hardly run,
though nothing waits for the findings (the service accepts these templates; ``template/lint.py``
says why). So the lint runs in a child process (``python -m cfnrun.stacks.lint_process``, kept
warm by ``runtime/line_children.py``: cfn-lint's import and rules are loaded once), on the other
core, bounded by ``LINT_LIMIT_S``, one lint at a time and at low priority; a template linted before
(with the same schemas) gets the findings it got then.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict
from typing import Any, Dict, List, Sequence

from cfnrun.runtime.line_children import ChildEnded, ChildTimedOut, LineChildren, answer_lines
from cfnrun.stacks.template.lint import lint_template, lint_warnings

LINT_LIMIT_S = 120.0  # cfn-lint over the largest template the service takes (1 MB) is well within it
CHILDREN = LineChildren(__name__, idle=1, most=1)  # one lint at a time: a second child would cost a start (a second of CPU)
SEEN_MOST = 64  # templates whose lint is remembered (a template created again is not linted again)
_seen: "OrderedDict[str, List[str]]" = OrderedDict()
NOT_REFUSED = "the template is not refused"
# The lint's findings wait for no one: where cores are few it takes what the handlers leave (a
# 2-core machine's handler calls run the stack, and a lint beside them at equal priority slowed
# a six-cluster create on --virtual-clock from 0.19 s to 0.27-0.35 s, measured 2026-11-27).
LOW_PRIORITY = 10


async def lint_lines(body: str, schemas: Sequence[Dict[str, Any]], region: str, limit_s: float = LINT_LIMIT_S) -> List[str]:
    """The console's warning lines for the template (the served types' ``schemas`` included): cfn-lint's findings,
    or why it did not run — never an error of the template's."""
    request = {"body": body, "schemas": list(schemas), "region": region}
    key = hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()
    if key in _seen:
        _seen.move_to_end(key)
        return _seen[key]
    try:
        answer = await CHILDREN.ask(request, limit_s)
    except ChildTimedOut:
        return [f"template lint did not finish within {limit_s:g} s and was stopped; {NOT_REFUSED}"]
    except ChildEnded as error:
        return [f"template lint did not run (its process ended: {error}); {NOT_REFUSED}"]
    lines = _seen[key] = [str(line) for line in answer["warnings"]]
    if len(_seen) > SEEN_MOST:
        _seen.popitem(last=False)
    return lines


def _answer(request: Dict[str, Any]) -> Dict[str, Any]:
    try:
        warnings = lint_warnings(lint_template(request["body"], request["schemas"], request["region"]))
    except Exception as error:  # noqa: B902 - cfn-lint's own failure is never the template's: say so and go on
        warnings = [f"template lint did not run (cfn-lint failed: {type(error).__name__}: {error}); {NOT_REFUSED}"]
    return {"warnings": warnings}


if __name__ == "__main__":
    os.nice(LOW_PRIORITY)
    answer_lines(_answer)
