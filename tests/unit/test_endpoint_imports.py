"""What serve's endpoint loads before it listens: the HTTP layer and the Lambda call path, not the local stacks' engine."""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import PATIENCE_S, ROOT

STACK_ENGINE = ("cfnrun.stacks.engine", "cfnrun.stacks.records", "cfnrun.app.stacks.local_stacks", "cfnrun.app.stacks.stack_functions")


def test_the_endpoint_imports_no_part_of_the_stack_engine() -> None:
    script = f"import sys, cfnrun.app.endpoint; print(sorted(set({STACK_ENGINE!r}) & set(sys.modules)))"
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=PATIENCE_S, cwd=ROOT)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "[]"  # they load after serve listens (app/late_parts.py)
