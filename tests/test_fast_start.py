"""Fast start (#16): each command loads only what it runs, and serve answers before every worker is warm."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional

from conftest import ROOT, cfnrun

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
