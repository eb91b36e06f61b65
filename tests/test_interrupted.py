"""An operation stopped from outside is recorded, not lost (#22.4): Ctrl-C during ``cfnrun invoke``."""
from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Callable

import pytest

from conftest import ServerProcess, cfnrun
from test_debugging import Terminal


def test_ctrl_c_during_invoke_prints_the_summary_and_records_the_operation_as_interrupted(
    sample: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = sample("cluster")
    monkeypatch.setenv("CFNRUN_HISTORY", "on")  # the terminal's process takes this environment
    terminal = Terminal([sys.executable, "-m", "cfnrun", "invoke", "CREATE", "requests/create.json"], project)
    try:
        terminal.read_until(r"#1 +IN_PROGRESS")  # the cluster is CREATING now
        terminal.read_until(r"next call in")  # the live countdown line is on the screen
        terminal.process.send_signal(signal.SIGINT)  # what Ctrl-C sends
        shown = terminal.read_until(r"workers stopped")
    finally:
        assert terminal.close() == 130
    summary = next(line for line in shown.splitlines() if "CREATE after 1 invocation(s)" in line)
    assert summary.lstrip("\r\x1b[K").startswith("IN_PROGRESS CREATE"), repr(summary)  # the countdown line was cleared first
    assert "interrupted (Ctrl-C, or cfnrun stopping) after 1 invocation(s); the last answer was IN_PROGRESS" in shown
    assert '"checksLeft": 2' in shown and '"Status": "CREATING"' in shown  # callbackContext and the model so far

    listed = cfnrun("history", "--json", cwd=project)
    [operation] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert (operation["action"], operation["status"], operation["errorCode"]) == ("CREATE", "IN_PROGRESS", "interrupted")
    shown_again = cfnrun("history", "show", str(operation["id"]), cwd=project)
    assert "interrupted (Ctrl-C, or cfnrun stopping)" in shown_again.stdout and '"checksLeft": 2' in shown_again.stdout


def test_cloud_control_operations_are_recorded_and_those_cut_by_a_stop_are_kept_as_interrupted(
    sample: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_cloudcontrol import CLUSTER, cloudcontrol, create, wait_success

    project = sample("cluster")
    monkeypatch.setenv("CFNRUN_HISTORY", "on")  # serve's process takes this environment
    server = ServerProcess(project, "--no-reload")
    try:
        client = cloudcontrol(server)
        done = wait_success(client, create(client, CLUSTER, {"Name": "done", "NodeCount": 1}))  # real waits: 2 s each
        cut = create(client, CLUSTER, {"Name": "cut", "NodeCount": 2})["ProgressEvent"]["RequestToken"]
        server.wait_for_line(rf"TypeFunction CREATE \(Cloud Control {cut[:8]}\)")  # its first call answered IN_PROGRESS
    finally:
        server.stop_cleanly()

    listed = [json.loads(line) for line in cfnrun("history", "--json", cwd=project).stdout.splitlines()]
    by_status = {operation["status"]: operation for operation in listed if operation["source"] == "cloudcontrol"}
    assert by_status["SUCCESS"]["action"] == "CREATE" and by_status["SUCCESS"]["invocations"] == 3
    interrupted = by_status["IN_PROGRESS"]
    assert interrupted["errorCode"] == "interrupted" and interrupted["invocations"] == 1
    shown = cfnrun("history", "show", str(interrupted["id"]), cwd=project).stdout
    assert f"interrupted (cfnrun serve stopping) after 1 invocation(s); the last answer was IN_PROGRESS; clientRequestToken {cut}" in shown
    assert '"checksLeft": 2' in shown and '"Name": "cut"' in shown  # the callbackContext and the model so far
    assert done["OperationStatus"] == "SUCCESS"


def test_a_timed_out_operation_shows_its_error_in_history(sample: Callable[[str], Path]) -> None:
    project = sample("cluster")  # its CREATE waits 2 s between calls: longer than the 1 s allowed here
    run = cfnrun("invoke", "CREATE", "requests/create.json", "--operation-timeout", "1", cwd=project, env={"CFNRUN_HISTORY": "on"})
    assert run.returncode == 1, run.stdout + run.stderr
    [operation] = [json.loads(line) for line in cfnrun("history", "--json", cwd=project).stdout.splitlines()]
    assert (operation["status"], operation["errorCode"]) == ("FAILED", "operation-timeout")
    assert "operation-timeout" in cfnrun("history", cwd=project).stdout
