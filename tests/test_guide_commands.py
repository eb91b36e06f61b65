"""The guides' shell blocks run as written, twice, on a fresh checkout with no AWS configuration (#30 item 12).

Each guide's block starts ``cfnrun serve …`` and then drives it with the aws CLI. The test starts that
serve exactly as written, except on a free port (``--port 0``) so tests can run side by side; the
commands after it run in one bash, as a reader pastes them, with the guide's ``127.0.0.1:3001`` (and the
moto ``PORT`` it asks the reader to fill in) pointed at that serve. A line the guide marks
``# fails here`` must fail; every other line must succeed, on the first run and again on the same serve.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

from conftest import LOCAL_STATE, PATIENCE_S, ROOT, ServerProcess

AWS_CLI = shutil.which("aws", path=os.path.dirname(sys.executable)) or shutil.which("aws")
GUIDES = ["guides/drift.md", "guides/guard-hooks.md", "guides/lambda-hooks.md"]


def shell_lines(guide: Path) -> List[str]:
    """The commands of a guide's shell blocks, prompts dropped and continued lines joined."""
    lines: List[str] = []
    inside = False
    pending = ""
    for raw in guide.read_text().splitlines():
        if raw.startswith("```"):
            inside = not inside and raw[3:].strip() in ("sh", "bash", "console", "shell")
            continue
        if not inside:
            continue
        text = raw[2:] if raw.startswith("$ ") else raw
        if text.rstrip().endswith("\\"):
            pending += text.rstrip()[:-1] + " "
            continue
        lines.append(pending + text)
        pending = ""
    return [line for line in lines if line.strip()]


def split_serve(lines: List[str]) -> Tuple[List[str], List[str]]:
    """The serve command's arguments (after ``cfnrun serve``) and the commands that follow it."""
    [start] = [index for index, line in enumerate(lines) if line.startswith("cfnrun serve")]
    return shlex.split(lines[start], comments=True)[2:], lines[start + 1:]


def script(commands: List[str], serve_url: str, moto_url: str) -> str:
    """The commands as one bash script: stop at the first unexpected failure; ``# fails here`` lines must fail."""
    body = ["set -u"]
    for number, command in enumerate(commands, 1):
        command = command.replace("http://127.0.0.1:3001", serve_url).replace("http://127.0.0.1:PORT", moto_url)
        expect_failure = "# fails here" in command
        body.append(f"echo '>>> line {number}'")
        body.append(f"if {command}\nthen ok=1; else ok=0; fi")
        wanted = "0" if expect_failure else "1"
        body.append(f'if [ "$ok" != {wanted} ]; then echo ">>> line {number} did not do what the guide says" >&2; exit 1; fi')
    return "\n".join(body) + "\n"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The samples as a fresh clone has them; HOME empty below it."""
    shutil.copytree(ROOT / "samples", tmp_path / "samples", ignore=LOCAL_STATE)
    (tmp_path / "home").mkdir()
    return tmp_path


def clean_environment(checkout: Path) -> dict:
    """No AWS configuration at all: a new user's shell, with this Python's tools first on PATH (waiters poll every 0.1 s)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_") or key == "AWS_DATA_PATH"}  # conftest's fast waiters
    env.update(HOME=str(checkout / "home"), NO_COLOR="1", PATH=os.path.dirname(sys.executable) + os.pathsep + env["PATH"])
    return env


@pytest.mark.skipif(AWS_CLI is None, reason="the aws CLI (pip install awscli) drives the guides")
@pytest.mark.parametrize("guide", GUIDES)
def test_a_guides_commands_work_as_written_twice_with_no_aws_configuration(guide: str, checkout: Path) -> None:
    serve_args, commands = split_serve(shell_lines(ROOT / "docs" / guide))
    env = clean_environment(checkout)
    process = subprocess.Popen(
        [sys.executable, "-m", "cfnrun", "serve", *serve_args, "--port", "0"],
        cwd=checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    server = ServerProcess(checkout, process=process)
    try:
        moto = re.search(r"(http://127\.0\.0\.1:\d+)", server.has_printed(r"moto server")).group(1) if "--moto" in serve_args else ""
        for attempt in ("first", "second"):
            run = subprocess.run(
                ["bash", "-c", script(commands, server.url, moto)],
                cwd=checkout, env=env, capture_output=True, text=True, timeout=PATIENCE_S * 3,
            )
            assert run.returncode == 0, f"{guide}, {attempt} run:\n{run.stdout}\n{run.stderr}\nserve:\n" + "\n".join(server.output)
    finally:
        process.terminate()
        process.wait(timeout=PATIENCE_S)
