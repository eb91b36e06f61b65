"""Small things a first hour trips on (#30 item 13): the samples' Runtime, a note that names its provider, the history table."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from conftest import SAMPLES, cfnrun

from cfnrun.app.preflight import runtime_mismatch
from cfnrun.model.project import load_project

ON = {"CFNRUN_HISTORY": "on"}
PROVIDERS = ("cluster", "hook", "note", "parameter")
SUPPORTED = ("python3.10", "python3.11", "python3.12", "python3.13")  # Lambda's Python runtimes that are not deprecated


@pytest.mark.parametrize("name", PROVIDERS)
def test_each_sample_declares_a_supported_runtime_and_a_note_names_its_provider(name: str) -> None:
    project = load_project(SAMPLES / name, usable_schema=False)
    declared = {spec.runtime for spec in project.functions.values()}
    assert len(declared) == 1 and declared <= set(SUPPORTED), declared
    major, minor = (int(part) for part in declared.pop().removeprefix("python").split("."))
    assert runtime_mismatch(project, (major, minor)) is None  # the interpreter it declares: no note
    note = runtime_mismatch(project, (major, minor + 1))
    assert note is not None and note.startswith(f"{project.type_name}: template.yml declares Runtime")


def test_history_sizes_its_action_column_for_the_longest_action(sample: Callable[[str], Path]) -> None:
    hook = sample("hook")
    assert cfnrun("invoke", "preCreate", "requests/create.json", "--virtual-clock", cwd=hook, env=ON).returncode == 0
    table = cfnrun("history", cwd=hook, env=ON)
    assert table.returncode == 0, table.stderr
    header, row = table.stdout.splitlines()[:2]
    assert "CREATE_PRE_PROVISION" in row, table.stdout
    # Every column starts where its title does: the action does not push the status (or anything after it) along.
    assert row.index("CREATE_PRE_PROVISION") == header.index("ACTION")
    assert row.index("SUCCESS") == header.index("STATUS"), table.stdout
