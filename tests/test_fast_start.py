"""Fast start (#16): each command loads only what it runs, and serve answers before every worker is warm."""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

from cfnrun import __version__
from conftest import MISBEHAVING, ROOT, ServerProcess, cfnrun, pid_alive, wait_until

# What only `cfnrun serve` and `cfnrun test` need.
SERVER_AND_SUITE = ["aiohttp", "rpdk", "cfnrun.app.serve", "cfnrun.app.contract_suite", "cfnrun.api.lambda_api"]
# What the command line needs before it knows the command.
PROJECT_MODELS = ["pydantic", "jsonschema", "yaml", "asyncio", "watchfiles", "botocore", "sqlite3", "moto"]


def no_aws_configuration(home: Path) -> Dict[str, str]:
    """An environment with no AWS variables and no ~/.aws: nothing botocore could read a region from."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    return {**env, "HOME": str(home), "AWS_CONFIG_FILE": str(home / "no-such-config")}


def loaded_after(args: List[str], cwd: Path = ROOT, env: Optional[Dict[str, str]] = None) -> List[str]:
    """Run the command line in a fresh interpreter; the heavy modules it loaded."""
    watched = SERVER_AND_SUITE + PROJECT_MODELS
    script = (
        "import json, sys\n"
        "from cfnrun.cli import app\n"
        "try:\n"
        f"    app({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('LOADED', json.dumps([m for m in {watched!r} if m in sys.modules]))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=str(cwd), capture_output=True, text=True, timeout=90, env=env)
    marker = [line for line in run.stdout.splitlines() if line.startswith("LOADED ")]
    assert marker, run.stdout + run.stderr
    return list(json.loads(marker[-1][len("LOADED "):]))


def test_importing_the_command_line_loads_no_server_suite_or_models() -> None:
    assert loaded_after([]) == []


def test_version_and_help_load_nothing_heavy() -> None:
    assert loaded_after(["--version"]) == []
    assert loaded_after(["--help"]) == []
    # typer's own command help brings its pydantic adapter; nothing of cfnrun's heavy parts.
    assert not set(loaded_after(["invoke", "--help"])) & set(SERVER_AND_SUITE + ["jsonschema", "asyncio"])
    version = cfnrun("--version")
    assert version.returncode == 0 and version.stdout.startswith("cfnrun ")


def test_version_answers_before_the_command_line_library_loads() -> None:
    script = "import runpy, sys\nsys.argv = ['cfnrun', '--version']\nrunpy.run_module('cfnrun', run_name='__main__')\nprint('typer' in sys.modules)\n"
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert run.stdout.splitlines() == [f"cfnrun {__version__}", "False"], run.stderr
    script = shutil.which("cfnrun", path=os.path.dirname(sys.executable))
    assert script is not None and "cfnrun.__main__" in Path(script).read_text()  # the console script goes the same way


def test_validate_loads_neither_server_nor_suite(sample: Callable[[str], Path]) -> None:
    loaded = loaded_after(["validate", str(sample("note"))])
    assert "jsonschema" in loaded  # it did validate
    assert not set(loaded) & set(SERVER_AND_SUITE + ["asyncio", "watchfiles"])


def test_invoke_loads_neither_server_nor_suite_nor_watcher(sample: Callable[[str], Path], tmp_path: Path) -> None:
    note = sample("note")
    loaded = loaded_after(["invoke", "LIST", "--project", str(note), "--no-credentials"], env=no_aws_configuration(tmp_path))
    assert "asyncio" in loaded and "sqlite3" in loaded  # it did run a worker, and recorded the operation
    # The file watcher only for --watch, moto only for --moto, botocore only when there is an AWS
    # configuration to read a region or credentials from.
    assert not set(loaded) & set(SERVER_AND_SUITE + ["watchfiles", "botocore", "moto"])


def test_history_loads_neither_server_nor_suite_nor_worker(sample: Callable[[str], Path]) -> None:
    loaded = loaded_after(["history", "--project", str(sample("note"))])
    assert "sqlite3" in loaded
    assert not set(loaded) & set(SERVER_AND_SUITE + ["asyncio", "watchfiles", "botocore", "jsonschema"])


GATED_MODULE = '''"""Imports only once the test opens the gate (a FIFO): a provider that is slow to import."""
import os

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gate")) as gate:
    gate.read()


def handler(event, context):
    return {"status": "SUCCESS", "gated": True}
'''


@pytest.fixture
def gated_project(tmp_path: Path) -> Path:
    """The misbehaving fixture, whose TestEntrypoint function cannot finish importing until the gate opens."""
    project = tmp_path / "gated"
    shutil.copytree(MISBEHAVING, project, ignore=shutil.ignore_patterns("__pycache__"))
    (project / "gated.py").write_text(GATED_MODULE)
    os.mkfifo(project / "gate")
    template = project / "template.yml"
    template.write_text(
        template.read_text()
        + "\n  TestEntrypoint:\n    Type: AWS::Serverless::Function\n    Properties:\n"
        + "      Handler: gated.handler\n      Runtime: python3.9\n"
    )
    return project


def open_gate(project: Path) -> None:
    with open(project / "gate", "w"):  # blocks until the worker is reading: the import then ends
        pass


def saw(server: ServerProcess, pattern: str) -> None:
    """Wait for a console line matching ``pattern``, unless one already went by."""
    if not any(re.search(pattern, line) for line in server.output):
        server.wait_for_line(pattern)


def test_serve_answers_before_every_worker_is_warm(gated_project: Path, serve: Callable[..., ServerProcess]) -> None:
    server = serve(gated_project, "--no-reload")
    client = server.client()
    gated: Dict[str, Any] = {}
    waiting = threading.Thread(
        target=lambda: gated.update(json.loads(client.invoke(FunctionName="TestEntrypoint", Payload=b"{}")["Payload"].read()))
    )
    waiting.start()
    # TestEntrypoint is still importing, yet TypeFunction answers: its call waits for no other worker.
    answer = json.loads(client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}')["Payload"].read())
    assert answer["count"] == 1
    saw(server, r"^  TypeFunction\s+behaviours\.handler  warm in \d+ ms$")
    assert waiting.is_alive() and not gated  # the gated call waits for its own worker
    assert not [line for line in server.output if "TestEntrypoint" in line and "warm" in line]
    open_gate(gated_project)
    saw(server, r"^  TestEntrypoint\s+gated\.handler  warm in \d+ ms$")
    waiting.join(timeout=20)
    assert gated == {"status": "SUCCESS", "gated": True}
    saw(server, r"^ERROR: Broken does not load")  # its worker exited after failing to import
    assert len(server.worker_pids()) == 2  # the early call took the warming worker, not one more of its own


def test_serve_stopped_while_a_worker_imports_leaves_no_process(gated_project: Path, serve: Callable[..., ServerProcess]) -> None:
    server = serve(gated_project, "--no-reload")
    saw(server, r"^  TypeFunction\s+behaviours\.handler  warm")
    saw(server, r"^ERROR: Broken does not load")
    wait_until(lambda: len(server.worker_pids()) == 2, what="TypeFunction's worker and the importing one")
    workers = server.worker_pids()
    assert server.stop() == 0
    wait_until(lambda: not any(pid_alive(pid) for pid in workers), timeout=5, what="workers to exit")


def test_serve_on_a_taken_port_is_a_usage_error_while_workers_import(gated_project: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        # Workers start before the port is tried; the gated one is still importing when serve gives up.
        run = cfnrun("serve", str(gated_project), "--port", str(port), "--no-reload")
    assert run.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in run.stderr
    assert "Traceback" not in run.stdout + run.stderr
