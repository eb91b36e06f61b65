"""``--state`` that loses nothing (issue 31 items 1, 6, 13): real serve processes, real clients."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Optional

import boto3
import pytest

from conftest import LOCAL_STATE, SAMPLES, ServerProcess, cfnrun, wait_until
from kept_state import kept_records

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
FAST = {"Delay": 0.1, "MaxAttempts": 600}


def test_a_damaged_state_store_stops_serve_with_one_line(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "cluster", tmp_path / "cluster", ignore=LOCAL_STATE)
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "stacks.sqlite3").write_bytes(b"not SQLite at all " * 200)
    run = cfnrun("serve", "cluster", "--port", "0", "--no-reload", "--state", "kept", cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "kept/stacks.sqlite3: cannot use the stacks kept there: file is not a database; move it aside" in run.stderr
    assert "Traceback" not in run.stdout + run.stderr


def _cluster_project(folder: Path, delay_s: int) -> Path:
    """A private copy of the stabilizing cluster sample: each create answers IN_PROGRESS (with its ClusterId) ``delay_s`` apart."""
    project = folder / "cluster"
    shutil.copytree(SAMPLES / "cluster", project, ignore=LOCAL_STATE)
    template = project / "template.yml"
    template.write_text(template.read_text().replace('CALLBACK_DELAY_SECONDS: "2"', f'CALLBACK_DELAY_SECONDS: "{delay_s}"'))
    return project


def _serve(folder: Path, *arguments: str) -> ServerProcess:
    process = subprocess.Popen(
        [sys.executable, "-m", "cfnrun", "serve", "cluster", "--port", "0", "--no-reload", *arguments],
        cwd=str(folder), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "NO_COLOR": "1"},
    )
    return ServerProcess(folder, process=process)


def _clusters(project: Path) -> Dict[str, Any]:
    """The clusters the sample's handlers keep (``CLUSTER_STATE_DIR: .state`` in the project)."""
    path = project / ".state" / "clusters.json"
    return json.loads(path.read_text())["clusters"] if path.exists() else {}


def _kept_physical_id(folder: Path, stack: str, logical_id: str) -> Optional[str]:
    try:
        records = kept_records(folder)
    except Exception:  # noqa: B902 - the serve is mid-write or has not made the file yet: not there yet
        return None
    for record in records:
        if record["name"] == stack:
            for resource in record["resources"]:
                if resource["logical_id"] == logical_id:
                    return resource["physical_id"]
    return None


CLUSTER = json.dumps({"Resources": {"Db": {"Type": "Cfnrun::Sample::Cluster", "Properties": {"Name": "kept-db", "NodeCount": 1}}}})


def test_a_resource_made_by_a_create_in_flight_survives_sigkill_and_the_next_delete_removes_it(tmp_path: Path) -> None:
    project = _cluster_project(tmp_path, delay_s=60)  # the first answer waits a minute: killed mid-create
    first = _serve(tmp_path, "--state", "kept")
    try:
        cfn = boto3.client("cloudformation", endpoint_url=first.url, **CREDENTIALS)
        cfn.create_stack(StackName="inflight", TemplateBody=CLUSTER)
        first.has_printed(r"CREATE \(stack inflight Db\)")
        wait_until(lambda: _kept_physical_id(tmp_path / "kept", "inflight", "Db") is not None, timeout=30, what="the in-flight id in --state")
        assert cfn.describe_stacks(StackName="inflight")["Stacks"][0]["StackStatus"] == "CREATE_IN_PROGRESS"
    finally:
        first.stop(signal.SIGKILL)
    [made] = _clusters(project)
    assert _kept_physical_id(tmp_path / "kept", "inflight", "Db") == made

    second = _serve(tmp_path, "--state", "kept", "--virtual-clock")  # the delete's callbacks need not wait the delay out
    try:
        cfn = boto3.client("cloudformation", endpoint_url=second.url, **CREDENTIALS)
        assert cfn.describe_stacks(StackName="inflight")["Stacks"][0]["StackStatus"] == "CREATE_FAILED"
        resource = cfn.describe_stack_resource(StackName="inflight", LogicalResourceId="Db")["StackResourceDetail"]
        assert (resource["PhysicalResourceId"], resource["ResourceStatus"]) == (made, "CREATE_FAILED")
        cfn.delete_stack(StackName="inflight")
        cfn.get_waiter("stack_delete_complete").wait(StackName="inflight", WaiterConfig=FAST)
    finally:
        second.stop()
    assert made not in _clusters(project)  # the delete reached the handler: nothing left that no record knows


def test_a_stack_operation_retried_with_its_client_request_token_is_answered_as_the_first_call(tmp_path: Path) -> None:
    _cluster_project(tmp_path, delay_s=1)
    server = _serve(tmp_path)
    try:
        cfn = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        created = cfn.create_stack(StackName="retried", TemplateBody=CLUSTER, ClientRequestToken="create-1")["StackId"]
        assert cfn.create_stack(StackName="retried", TemplateBody=CLUSTER, ClientRequestToken="create-1")["StackId"] == created
        with pytest.raises(cfn.exceptions.AlreadyExistsException):
            cfn.create_stack(StackName="retried", TemplateBody=CLUSTER, ClientRequestToken="create-2")
        cfn.get_waiter("stack_create_complete").wait(StackName="retried", WaiterConfig=FAST)
        assert cfn.create_stack(StackName="retried", TemplateBody=CLUSTER, ClientRequestToken="create-1")["StackId"] == created

        bigger = CLUSTER.replace('"NodeCount": 1', '"NodeCount": 2')
        assert cfn.update_stack(StackName="retried", TemplateBody=bigger, ClientRequestToken="update-1")["StackId"] == created
        assert cfn.update_stack(StackName="retried", TemplateBody=bigger, ClientRequestToken="update-1")["StackId"] == created
        cfn.get_waiter("stack_update_complete").wait(StackName="retried", WaiterConfig=FAST)

        cfn.delete_stack(StackName="retried", ClientRequestToken="delete-1")
        cfn.delete_stack(StackName="retried", ClientRequestToken="delete-1")  # while DELETE_IN_PROGRESS: a retry, not a second delete
        with pytest.raises(cfn.exceptions.ClientError, match="DELETE_IN_PROGRESS state and can not be deleted"):
            cfn.delete_stack(StackName="retried", ClientRequestToken="delete-2")
        cfn.get_waiter("stack_delete_complete").wait(StackName="retried", WaiterConfig=FAST)
        events = cfn.describe_stack_events(StackName=created)["StackEvents"]
        starts = [e["ResourceStatus"] for e in events if e["LogicalResourceId"] == "retried" and e["ResourceStatus"].endswith("_IN_PROGRESS")]
        assert sorted(starts) == ["CREATE_IN_PROGRESS", "DELETE_IN_PROGRESS", "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS", "UPDATE_IN_PROGRESS"], starts
    finally:
        server.stop()


def test_without_state_stopping_serve_names_what_an_unfinished_stack_leaves_and_how_to_remove_it(tmp_path: Path) -> None:
    project = _cluster_project(tmp_path, delay_s=60)  # still stabilizing when serve stops
    server = _serve(tmp_path)
    cfn = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    cfn.create_stack(StackName="unfinished", TemplateBody=CLUSTER)
    server.has_printed(r"CREATE \(stack unfinished Db\)")
    wait_until(lambda: bool(_clusters(project)), timeout=30, what="the cluster the create made")
    [made] = _clusters(project)
    server.stop()
    line = server.has_printed(rf"stack unfinished \(CREATE_IN_PROGRESS\): left: Db \(Cfnrun::Sample::Cluster\) {made}: remove it with ")
    command = line.split("remove it with ", 1)[1]
    assert command.startswith("cfnrun invoke DELETE ") and "--project cluster" in command, line
