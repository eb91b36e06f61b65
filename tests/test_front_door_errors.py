"""Bad values at the front door: one line, exit 2, before anything starts, for every command that takes them."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from conftest import cfnrun

BAD_VALUES = [
    ("--aws-endpoint", "http://", "no host"),
    ("--aws-endpoint", "http://[::1", "Invalid IPv6 URL"),
    ("--aws-endpoint", "http://127.0.0.1:99999", "Port out of range"),
    ("--inject", "ssm:PutParameter=+99999999999999s", "a delay is at most 900 s"),
    ("--inject", "nosuchservice:Op=X", "botocore knows no service 'nosuchservice'"),
]


@pytest.mark.parametrize("command", ["invoke", "serve"])
@pytest.mark.parametrize("flag, value, problem", BAD_VALUES)
def test_a_bad_value_is_refused_before_anything_starts(
    sample: Callable[[str], Path], command: str, flag: str, value: str, problem: str
) -> None:
    args = ["invoke", "LIST"] if command == "invoke" else ["serve", "--port", "0", "--no-reload"]
    run = cfnrun(*args, flag, value, cwd=sample("note"), timeout=60)
    assert run.returncode == 2, run.stdout + run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("cfnrun: error:")]
    assert len(errors) == 1 and problem in errors[0] and flag in errors[0], run.stderr
    assert "Traceback" not in run.stderr and "listening" not in run.stdout + run.stderr


@pytest.mark.parametrize("depth", [150, 100_000])
def test_a_deeply_nested_request_file_is_a_usage_error(sample: Callable[[str], Path], tmp_path: Path, depth: int) -> None:
    request = tmp_path / "deep.json"
    request.write_text('{"desiredResourceState": {"Title": "t", "Body": ' + "[" * depth + "]" * depth + "}}")
    run = cfnrun("invoke", "CREATE", str(request), cwd=sample("note"))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "nests more than 100 levels deep" in run.stderr and "Traceback" not in run.stderr
