"""README's two top commands work again after a Ctrl-C of themselves (#30.1), and an interrupted run says what it left."""
from __future__ import annotations

import json
import re
import shlex
import shutil
import signal
import sys
from pathlib import Path
from typing import List

import pytest

from cluster_store import kept_clusters
from conftest import LOCAL_STATE, ROOT, cfnrun
from test_debugging import Terminal

CLUSTER = "samples/cluster"
CREATE = ("invoke", "CREATE", f"{CLUSTER}/requests/create.json", "--project", CLUSTER)
DELETE = ("invoke", "DELETE", f"{CLUSTER}/requests/delete.json", "--project", CLUSTER)
STACK_TEST = (
    "stack", "test", "samples/stack/template.yaml", "--provider", "samples/note", "--provider", "samples/cluster",
    "--provider", "samples/parameter", "--moto", "--virtual-clock", "--update", "NodeCount=2",
)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The samples as a fresh clone has them, in a folder of their own (README's commands run from its root)."""
    shutil.copytree(ROOT / "samples", tmp_path / "samples", ignore=LOCAL_STATE)
    return tmp_path


def interrupted(checkout: Path, args: List[str], at: str, said: str = r"it: cfnrun invoke DELETE .*\n") -> str:
    """Run the real command on a terminal, Ctrl-C it once ``at`` is on the screen; what it showed, after it exited 130."""
    terminal = Terminal([sys.executable, "-m", "cfnrun", *args], checkout)
    try:
        terminal.read_until(at)
        terminal.process.send_signal(signal.SIGINT)  # what Ctrl-C sends
        terminal.read_until(said)
    finally:
        status = terminal.close()
    assert status == 130, terminal.seen
    return terminal.seen


def readme_pair(checkout: Path) -> None:
    created = cfnrun(*CREATE, cwd=checkout)
    assert created.returncode == 0, created.stdout + created.stderr
    deleted = cfnrun(*DELETE, cwd=checkout)
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr


def clusters(checkout: Path) -> dict:
    return kept_clusters(checkout / CLUSTER / ".state")


def test_readme_first_command_runs_again_after_a_ctrl_c_of_its_create(checkout: Path) -> None:
    shown = interrupted(checkout, list(CREATE), r"#1 +IN_PROGRESS")
    [left] = clusters(checkout).values()
    assert left["Status"] == "CREATING"
    assert re.search(r"left: Cfnrun::Sample::Cluster \{\"ClusterId\": \"cl-\w+\"\} \(its CREATE stopped IN_PROGRESS\)", shown), shown
    readme_pair(checkout)  # not "a cluster named demo exists"
    assert clusters(checkout) == {}


def test_readme_first_command_runs_again_after_a_ctrl_c_of_its_delete(checkout: Path) -> None:
    assert cfnrun(*CREATE, "--virtual-clock", cwd=checkout).returncode == 0
    shown = interrupted(checkout, list(DELETE), r"#1 +IN_PROGRESS")
    assert [record["Status"] for record in clusters(checkout).values()] == ["DELETING"]
    assert "to finish removing it: cfnrun invoke DELETE" in shown
    readme_pair(checkout)
    assert clusters(checkout) == {}


def test_the_command_an_interrupted_invoke_names_removes_what_it_left(checkout: Path) -> None:
    shown = interrupted(checkout, list(CREATE), r"#1 +IN_PROGRESS")
    [command] = [line.split("to remove it: ", 1)[1].strip() for line in shown.splitlines() if "to remove it: " in line]
    words = shlex.split(command)
    assert words[:3] == ["cfnrun", "invoke", "DELETE"], command
    removed = cfnrun(*words[1:], "--virtual-clock", cwd=checkout)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert clusters(checkout) == {}


def test_readme_first_command_runs_again_after_a_ctrl_c_between_its_create_and_its_delete(checkout: Path) -> None:
    assert cfnrun(*CREATE, "--virtual-clock", cwd=checkout).returncode == 0  # the shell was stopped before DELETE began
    [made] = clusters(checkout).values()
    assert made["Status"] == "ACTIVE"
    again = cfnrun(*CREATE, "--virtual-clock", cwd=checkout)
    assert again.returncode == 0, again.stdout + again.stderr  # the same request (its clientRequestToken): what it made
    assert made["ClusterId"] in again.stdout
    readme_pair(checkout)
    assert clusters(checkout) == {}


def test_a_cluster_that_exists_still_answers_already_exists_to_another_request(checkout: Path) -> None:
    assert cfnrun(*CREATE, "--virtual-clock", cwd=checkout).returncode == 0
    other = json.loads((checkout / CREATE[2]).read_text())
    other["clientRequestToken"] = "another-request"
    (checkout / "other.json").write_text(json.dumps(other))
    again = cfnrun("invoke", "CREATE", "other.json", "--project", CLUSTER, "--virtual-clock", cwd=checkout)
    assert again.returncode == 1
    assert "AlreadyExists" in again.stdout and "delete it first" in again.stdout


def test_readme_stack_test_runs_again_after_a_ctrl_c(checkout: Path) -> None:
    shown = interrupted(checkout, list(STACK_TEST), r"Cluster +Cfnrun::Sample::Cluster +CREATE_COMPLETE", r"left: Cluster .*\n")
    assert re.search(r"left: Cluster \(Cfnrun::Sample::Cluster\) cl-\w+: remove it with cfnrun invoke DELETE \S+ --project samples/cluster", shown)
    again = cfnrun(*STACK_TEST, cwd=checkout, timeout=240)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "PASSED: stack test template" in again.stdout
