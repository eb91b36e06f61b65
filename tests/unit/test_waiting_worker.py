"""Which specs an interpreter started before its function was known may become the worker of (``runtime/waiting_worker.py``)."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

from cfnrun.runtime.launch import MARKER, SandboxEnds, started_environment
from cfnrun.runtime.spec import WorkerSpec
from cfnrun.runtime.waiting_worker import NOT_EARLY, SpawnedChild, WaitingWorker, worth_starting

STARTED_IN = "/home/dev/project/sub"
PARENT = {"PATH": "/usr/bin", "HOME": "/home/dev", "LANG": "C.UTF-8", "AWS_PROFILE": "dev"}


@pytest.fixture
def waiting() -> Iterator[WaitingWorker]:
    ends = SandboxEnds()
    ends.close_worker_ends()
    environment = {**started_environment(PARENT), MARKER: ends.marker}
    yield WaitingWorker(sys.executable, SpawnedChild(os.getpid()), ends, environment, STARTED_IN)
    ends.close_parent_ends()


def spec(env: Dict[str, str], cwd: str = "/home/dev/project", python: str = sys.executable) -> WorkerSpec:
    return WorkerSpec("TypeFunction", "pkg.handlers.resource", Path(cwd) / "src", Path(cwd), env, python=python)


def function_environment(**more: str) -> Dict[str, str]:
    """What ``lambda_environment`` makes of PARENT: Lambda's variables and the template's over it."""
    lambda_variables = {"AWS_REGION": "eu-west-1", "AWS_LAMBDA_FUNCTION_NAME": "TypeFunction", "_HANDLER": "pkg.handlers.resource"}
    return {**started_environment(PARENT), **lambda_variables, **more}


def test_a_spec_differing_only_in_variables_read_after_the_start_fits(waiting: WaitingWorker) -> None:
    assert waiting.fits(spec(function_environment(NOTES_STATE_DIR=".state")))
    without = function_environment()
    del without["AWS_PROFILE"]  # a variable the function's environment drops: os.environ loses it before the provider loads
    assert waiting.fits(spec(without))


@pytest.mark.parametrize(
    "name, value",
    [
        ("PYTHONWARNINGS", "ignore"),  # the interpreter's
        ("PYTHONPATH", "/opt/lib"),
        ("LD_LIBRARY_PATH", "/opt/native"),  # the dynamic loader's
        ("LC_ALL", "de_DE.UTF-8"),  # the locale's
        ("LANG", "de_DE.UTF-8"),
        ("TZ", "Europe/Berlin"),
        ("HOME", "/tmp/elsewhere"),  # the user's site-packages
        ("MALLOC_ARENA_MAX", "2"),  # the C library's
    ],
)
def test_a_variable_read_as_the_interpreter_starts_must_be_the_same(waiting: WaitingWorker, name: str, value: str) -> None:
    assert not waiting.fits(spec(function_environment(**{name: value})))
    dropped = function_environment()
    dropped.pop(name, None)
    assert waiting.fits(spec(dropped)) == (name not in waiting.environment)  # dropping one it started with counts too


def test_another_interpreter_does_not_fit(waiting: WaitingWorker, tmp_path: Path) -> None:
    assert not waiting.fits(spec(function_environment(), python=str(tmp_path / "python3")))


def test_a_relative_python_path_fits_only_the_folder_the_interpreter_started_in(waiting: WaitingWorker) -> None:
    waiting.environment["PYTHONPATH"] = "lib:/opt/shared"
    relative = function_environment(PYTHONPATH="lib:/opt/shared")
    assert not waiting.fits(spec(relative))  # its sys.path holds STARTED_IN/lib, the function's worker would hold its own lib
    assert waiting.fits(spec(relative, cwd=STARTED_IN))
    waiting.environment["PYTHONPATH"] = "/opt/lib:/opt/shared"
    assert waiting.fits(spec(function_environment(PYTHONPATH="/opt/lib:/opt/shared")))


def test_the_options_that_start_no_interpreter_are_those_declared_not_early() -> None:
    from cfnrun.app.options import declared
    from cfnrun.app.settings.invoke import InvokeSettings

    not_early = {spelled.partition("/")[0] for _, option, _ in declared(InvokeSettings) if not option.early for spelled in option.names}
    assert not_early == NOT_EARLY


@pytest.mark.parametrize(
    "argv, worth",
    [
        (["LIST"], True),
        (["CREATE", "request.json", "--region", "eu-west-1", "--json"], True),
        (["LIST", "--in-process"], False),
        (["LIST", "--lambda-endpoint=http://127.0.0.1:3001"], False),
        (["LIST", "--help"], False),
        (["LIST", "--", "x"], False),
    ],
)
def test_an_interpreter_waits_only_for_a_command_line_that_may_start_a_worker_early(argv: List[str], worth: bool) -> None:
    assert worth_starting(argv) is worth
