"""``app/cfn_offline.py``: cfn starts without cfn-lint, and still lints a module's fragments with it when asked."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

STARTED = """
import sys
from cfnrun.app.cfn_offline import _cfn_lint_when_used
_cfn_lint_when_used()
import rpdk.core.cli
from rpdk.core.fragment import generator
print('cfnlint' in sys.modules, 'sympy' in sys.modules)
try:
    generator.print_cfn_lint_warnings(sys.argv[1])
except Exception as error:
    print(type(error).__name__)
print('cfnlint' in sys.modules)
"""


def test_cfn_starts_without_cfn_lint_and_lints_with_it_when_asked(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-c", STARTED, str(tmp_path)], capture_output=True, text=True, check=True)
    # not loaded as cfn starts; loaded, and cfn's own function ran (it finds no fragment here), once asked
    assert run.stdout.split() == ["False", "False", "FragmentValidationError", "True"], run.stderr
