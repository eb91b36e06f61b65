"""``cfnrun fuzz`` whose command line the early start read exactly runs without the command line library, as invoke and serve do."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES, LOCAL_STATE, PATIENCE_S

# Through cfnrun/__main__.py, as the console script runs it; whether typer was ever imported, said at exit.
SCRIPT = (
    "import atexit, runpy, sys\nsys.argv = ['cfnrun'] + sys.argv[1:]\n"
    "atexit.register(lambda: print('TYPER', 'typer' in sys.modules, flush=True))\nrunpy.run_module('cfnrun', run_name='__main__')\n"
)


def _fuzz(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, "fuzz", str(project), *args], capture_output=True, text=True, timeout=PATIENCE_S,
        env={**os.environ, "NO_COLOR": "1"}, cwd=str(project.parent),
    )


def test_fuzz_read_exactly_runs_without_the_command_line_library(tmp_path: Path) -> None:
    project = tmp_path / "sizer"
    shutil.copytree(FIXTURES / "sizer", project, ignore=LOCAL_STATE)
    source = project / "sizer.py"
    source.write_text(source.read_text().replace("return size % 90 if size > 90 else size", "return size"))
    run = _fuzz(project, "--max-examples", "5", "--seed", "1", "--json")
    assert run.returncode == 0 and run.stdout.splitlines()[-1] == "TYPER False", run.stdout + run.stderr
    result = json.loads(run.stdout.splitlines()[-2])
    assert result["event"] == "fuzzResult" and result["failed"] is False and result["examples"] >= 5
    # A value the library refuses: it reads the line, and says so in its own words.
    refused = _fuzz(project, "--max-examples", "0")
    assert refused.returncode == 2 and "Invalid value for '--max-examples'" in refused.stderr, refused.stdout + refused.stderr
    assert refused.stdout.splitlines()[-1] == "TYPER True"
