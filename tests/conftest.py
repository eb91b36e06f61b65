"""Shared helpers: copies of the samples, and the real cfnrun CLI in a subprocess."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
FIXTURES = ROOT / "tests" / "fixtures"
MISBEHAVING = FIXTURES / "misbehaving"
LIB_PROVIDER = FIXTURES / "lib_provider"


@pytest.fixture
def sample(tmp_path: Path) -> Callable[[str], Path]:
    """A private copy of a bundled sample, so its local state starts empty."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(SAMPLES / name, target, ignore=shutil.ignore_patterns(".state", "__pycache__"))
        return target

    return copy


def cfnrun(*args: str, cwd: Optional[Path] = None, env: Optional[Dict[str, str]] = None, timeout: float = 90) -> subprocess.CompletedProcess:
    """Run the real command line, as a user would."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "cfnrun", *args],
        cwd=str(cwd or ROOT),
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def events(completed: subprocess.CompletedProcess) -> List[Dict[str, Any]]:
    """The NDJSON events printed by ``--json``."""
    return [json.loads(line) for line in completed.stdout.splitlines() if line.strip()]


def result_of(completed: subprocess.CompletedProcess) -> Dict[str, Any]:
    records = [e for e in events(completed) if e["event"] == "result"]
    assert records, f"no result event\nstdout:\n{completed.stdout}\nstderr:\n{completed.stderr}"
    return records[-1]


def wait_until(condition: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    """Poll for a condition that another process makes true; fail if it never does."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)
