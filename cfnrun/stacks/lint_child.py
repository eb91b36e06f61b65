"""The lint child (``python -m cfnrun.stacks.lint_child``): cfn-lint's warnings for each template ``lint_process.py`` sends.

It imports cfn-lint and nothing of serve's side. Its start is most of its cost: cfn-lint's import
(sympy, networkx, its rules and their data) makes about a quarter of a million objects that live as
long as the child, and the cyclic garbage collector, run every few hundred of them, went over them
again and again: a third of the start's CPU (measured 2026-11-27). So the collector is off until the
first answer; then one collection drops that answer's garbage, what remains (cfn-lint's modules,
rules and schemas) is frozen out of later collections, and the collector is on again. The findings
are the same (the collector only frees what nothing refers to).
"""
from __future__ import annotations

import gc
import os
import sys
from typing import Any, Dict

from cfnrun.runtime.line_answers import answer_lines
from cfnrun.stacks.template.lint import lint_template, lint_warnings

NOT_REFUSED = "the template is not refused"
# The lint's findings wait for no one: where cores are few it takes what the handlers leave (a
# 2-core machine's handler calls run the stack, and a lint beside them at equal priority slowed
# a six-cluster create on --virtual-clock from 0.19 s to 0.27-0.35 s, measured 2026-11-27).
LOW_PRIORITY = 10
# ``lint_process.lints_waited_for``: this child's lints are waited for (``cfnrun stack test``'s steps), so it keeps
# serve's priority. At low priority beside busy processes of normal priority it got a few percent of a core.
WAITED_FOR = "--waited-for"


def answer(request: Dict[str, Any]) -> Dict[str, Any]:
    """The warning lines for one template: cfn-lint's findings, or why it did not run (in serve's working folder, as the
    ``cfn-lint`` command would run there: its ``.cfnlintrc`` applies)."""
    _move_to(request.get("folder"))
    try:
        warnings = lint_warnings(lint_template(request["body"], request["schemas"], request["region"]))
    except Exception as error:  # noqa: B902 - cfn-lint's own failure is never the template's: say so and go on
        warnings = [f"template lint did not run (cfn-lint failed: {type(error).__name__}: {error}); {NOT_REFUSED}"]
    return {"warnings": warnings}


def _move_to(folder: Any) -> None:
    """Into serve's working folder (the child starts in the one that holds cfnrun, to import it); a folder gone since: stay."""
    if isinstance(folder, str) and folder != os.getcwd():
        try:
            os.chdir(folder)
        except OSError:
            pass


def _answer_collecting_after_the_first(request: Dict[str, Any]) -> Dict[str, Any]:
    answered = answer(request)
    if not gc.isenabled():  # the first answer: cfn-lint is loaded, and stays
        gc.collect()
        gc.freeze()
        gc.enable()
    return answered


if __name__ == "__main__":
    if WAITED_FOR not in sys.argv[1:]:
        os.nice(LOW_PRIORITY)
    gc.disable()
    answer_lines(_answer_collecting_after_the_first)
