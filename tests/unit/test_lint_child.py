"""``stacks/lint_child.py``: the lint child loads cfn-lint and nothing of serve's side, and collects again after its first answer."""
from __future__ import annotations

import gc
import subprocess
import sys

from cfnrun.stacks import lint_child

IMPORTED = "import sys, cfnrun.stacks.lint_child; print(sorted(m for m in ('asyncio', 'cfnlint', 'aiohttp') if m in sys.modules))"


def test_the_child_starts_without_asyncio_or_cfn_lint() -> None:
    run = subprocess.run([sys.executable, "-c", IMPORTED], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]", run.stderr  # cfn-lint loads with the first template, asyncio never


def test_after_the_first_answer_the_collector_is_on_and_cfn_lint_is_frozen_out_of_it() -> None:
    request = {"body": "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n", "schemas": [], "region": "us-east-1"}
    gc.disable()
    try:
        assert lint_child._answer_collecting_after_the_first(request) == {"warnings": []}
        assert gc.isenabled() and gc.get_freeze_count() > 0
        before = gc.get_freeze_count()
        assert lint_child._answer_collecting_after_the_first(request) == {"warnings": []}
        assert gc.isenabled() and gc.get_freeze_count() <= before  # only the first answer freezes (frozen objects may still be freed)
    finally:
        gc.unfreeze()
        gc.enable()


def test_cfn_lint_failing_is_a_warning_that_the_template_is_not_refused() -> None:
    answer = lint_child.answer({"body": "Resources: {}", "schemas": [{"no typeName": True}], "region": "us-east-1"})
    [warning] = answer["warnings"]
    assert warning.startswith("template lint did not run (cfn-lint failed: KeyError") and warning.endswith(lint_child.NOT_REFUSED)
