"""The cyclic garbage collector is off while ``cfnrun serve``, ``cfnrun invoke`` and their workers load, and on after.

Each turns the collector off as it starts and back on once it has loaded what it runs, with what it loaded frozen out
of the collector's sight (``app/loaded_objects.py``, ``runtime/worker/lifecycle.py``). Left off, a long serve or
invoke would never free a reference cycle it dropped: each test reads the collector's state from the process itself
once it has answered calls. The commands run through ``python -m cfnrun``'s own start (``cfnrun/__main__.py``),
with an exit handler registered first that writes the state down as the process ends.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import LOCAL_STATE, PATIENCE_S, SAMPLES, ServerProcess
from test_serve_stack_drift import client

# ``python -m cfnrun ARGS``, with an exit handler that writes the collector's state to the file given first.
PROBED = (
    "import atexit, gc, json, runpy, sys\n"
    "probe = sys.argv.pop(1)\n"
    "def write():\n"
    "    with open(probe, 'w') as f:\n"
    "        json.dump({'enabled': gc.isenabled(), 'frozen': gc.get_freeze_count()}, f)\n"
    "atexit.register(write)\n"
    "sys.argv[0] = 'cfnrun'\n"
    "runpy.run_module('cfnrun', run_name='__main__', alter_sys=True)\n"
)
FUNCTIONS = """\
Resources:
  First:
    Type: AWS::Lambda::Function
    Properties: {Handler: app.collector, Runtime: python3.11, Code: src/}
  Second:
    Type: AWS::Lambda::Function
    Properties: {Handler: app.collector, Runtime: python3.11, Code: src/}
"""
HANDLER = """\
import gc

def collector(event, context):
    garbage = [[]]
    garbage[0].append(garbage)  # a reference cycle dropped: only the collector frees it
    return {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}
"""


def _probed(probe: Path, *args: str) -> List[str]:
    return [sys.executable, "-c", PROBED, str(probe), *args]


def _state(probe: Path) -> Dict[str, Any]:
    return dict(json.loads(probe.read_text()))


def test_serve_and_its_workers_collect_once_loaded_with_what_they_loaded_frozen(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text(HANDLER)
    (tmp_path / "template.yaml").write_text(FUNCTIONS)
    probe = tmp_path / "serve.json"
    process = subprocess.Popen(
        _probed(probe, "serve", "--port", "0", "--functions", str(tmp_path / "template.yaml")),
        cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    server = ServerProcess(tmp_path, process=process)
    try:
        server.has_printed(r"reload: watching")  # printed once what serve loads after listening is in
        lambda_client = client(server, "lambda")
        # The first function's worker is a fresh process; the second's, a fork of the zygote the first's dependencies made.
        for name in ("First", "Second", "First"):
            answer = json.loads(lambda_client.invoke(FunctionName=name)["Payload"].read())
            assert answer["enabled"] is True and answer["frozen"] > 1000, (name, answer)
    finally:
        server.stop_cleanly()
    state = _state(probe)
    assert state["enabled"] is True and state["frozen"] > 10_000, state


@pytest.mark.parametrize("command", [
    ["invoke", "LIST", "--no-credentials"],
    ["test", "--virtual-clock"],  # the serve it starts, then cfn test's suite in a process of its own
], ids=["invoke", "test"])
def test_a_command_collects_once_loaded_with_what_it_loaded_frozen(tmp_path: Path, command: List[str]) -> None:
    project = tmp_path / "note"
    shutil.copytree(SAMPLES / "note", project, ignore=LOCAL_STATE)
    probe = tmp_path / "probe.json"
    run = subprocess.run(
        _probed(probe, *command, "--project", str(project)), cwd=str(tmp_path), capture_output=True, text=True, timeout=PATIENCE_S,
    )
    assert run.returncode in (0, 1) and probe.exists(), run.stdout + run.stderr  # test: 1 for the suite's own requests
    state = _state(probe)
    assert state["enabled"] is True and state["frozen"] > 10_000, state
