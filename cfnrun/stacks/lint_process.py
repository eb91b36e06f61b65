"""cfn-lint over a stack's template in a child process: its findings arrive as warnings, which nothing waits for.

cfn-lint is pure Python and holds the interpreter's lock while it checks: over a template of a few
hundred resources, seconds in which serve's event loop, in one of its threads, would hardly run,
though nothing waits for the findings (the service accepts these templates; ``template/lint.py``
says why). So the lint runs in a child process (``lint_child.py``, kept warm by
``runtime/line_children.py``: cfn-lint's import and rules are loaded once), on the other
core, bounded by ``LINT_LIMIT_S``, one lint at a time and at low priority; a template linted before
(with the same schemas) gets the findings it got then. When to ask is the caller's (``ready``, awaited
once a lint's turn has come): serve asks in a pause of its handler calls (``app/stacks/lint_in_pauses.py``),
as a lint beside them still took their CPU.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence

from cfnrun.runtime.line_children import ChildEnded, ChildTimedOut, LineChildren
from cfnrun.stacks.lint_child import NOT_REFUSED, WAITED_FOR

LINT_LIMIT_S = 120.0  # cfn-lint over the largest template the service takes (1 MB) is well within it
CHILDREN = LineChildren("cfnrun.stacks.lint_child", idle=1, most=1)  # one lint at a time: a second child would cost a start (a second of CPU)
SEEN_MOST = 64  # templates whose lint is remembered (a template created again is not linted again)
_seen: "OrderedDict[str, List[str]]" = OrderedDict()


def lints_waited_for() -> None:
    """The lints of this process are waited for from now on (``cfnrun stack test``'s steps wait for the template's): the
    children started after this run at normal priority.

    At low priority, a lint child beside processes of normal priority gets a share of the CPU weighted 110 to their 1,024
    each: on a two-core machine with other work running (a CI runner's other jobs; the suite's other tests), a few
    percent of a core, and a ``stack test`` waited on a lint of seconds of CPU for tens of seconds.
    """
    CHILDREN.arguments = (WAITED_FOR,)


async def lint_lines(
    body: str, schemas: Sequence[Dict[str, Any]], region: str, limit_s: float = LINT_LIMIT_S, ready: Optional[Callable[[], Awaitable[object]]] = None
) -> List[str]:
    """The console's warning lines for the template (the served types' ``schemas`` included): cfn-lint's findings,
    or why it did not run — never an error of the template's. ``ready``: awaited when this lint's turn has come, before
    the child is asked (a template linted before is answered at once)."""
    request = {"body": body, "schemas": list(schemas), "region": region, "folder": os.getcwd()}  # the folder: its .cfnlintrc applies
    key = hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()
    if key in _seen:
        _seen.move_to_end(key)
        return _seen[key]
    try:
        answer = await CHILDREN.ask(request, limit_s, ready)
    except ChildTimedOut:
        return [f"template lint did not finish within {limit_s:g} s and was stopped; {NOT_REFUSED}"]
    except ChildEnded as error:
        return [f"template lint did not run (its process ended: {error}); {NOT_REFUSED}"]
    lines = _seen[key] = [str(line) for line in answer["warnings"]]
    if len(_seen) > SEEN_MOST:
        _seen.popitem(last=False)
    return lines

