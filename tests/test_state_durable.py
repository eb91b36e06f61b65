"""``--state`` that loses nothing (issue 31 items 1, 6, 13): real serve processes, real clients."""
from __future__ import annotations

import json
import shutil
import signal
import sqlite3
from pathlib import Path

import boto3
import pytest

from conftest import LOCAL_STATE, SAMPLES, cfnrun, wait_until
from kept_state import CREDENTIALS, cluster_project, clusters, kept_physical_id, serve_cluster, settled_status, stack_events
FAST = {"Delay": 0.1, "MaxAttempts": 600}


def test_a_damaged_state_store_stops_serve_with_one_line(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "cluster", tmp_path / "cluster", ignore=LOCAL_STATE)
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "stacks.sqlite3").write_bytes(b"not SQLite at all " * 200)
    run = cfnrun("serve", "cluster", "--port", "0", "--no-reload", "--state", "kept", cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "kept/stacks.sqlite3: cannot use the stacks kept there: file is not a database; move it aside" in run.stderr
    assert "Traceback" not in run.stdout + run.stderr


CLUSTER = json.dumps({"Resources": {"Db": {"Type": "Cfnrun::Sample::Cluster", "Properties": {"Name": "kept-db", "NodeCount": 1}}}})


def test_a_create_killed_mid_way_is_rolled_back_by_the_next_serve_and_its_resource_deleted(tmp_path: Path) -> None:
    project = cluster_project(tmp_path, delay_s=60)  # the first answer waits a minute: killed mid-create
    first = serve_cluster(tmp_path, "--state", "kept")
    try:
        cfn = boto3.client("cloudformation", endpoint_url=first.url, **CREDENTIALS)
        stack_id = cfn.create_stack(StackName="inflight", TemplateBody=CLUSTER, ClientRequestToken="make-1")["StackId"]
        first.has_printed(r"CREATE \(stack inflight Db\)")
        wait_until(lambda: kept_physical_id(tmp_path / "kept", "inflight", "Db") is not None, timeout=30, what="the in-flight id in --state")
        assert cfn.describe_stacks(StackName="inflight")["Stacks"][0]["StackStatus"] == "CREATE_IN_PROGRESS"
    finally:
        first.stop(signal.SIGKILL)
    [made] = clusters(project)
    assert kept_physical_id(tmp_path / "kept", "inflight", "Db") == made

    second = serve_cluster(tmp_path, "--state", "kept", "--virtual-clock")  # the delete's callbacks need not wait the delay out
    try:
        cfn = boto3.client("cloudformation", endpoint_url=second.url, **CREDENTIALS)
        second.has_printed("stack inflight: serve stopped during its operation: rolling back its create, as the service would")
        assert settled_status(cfn, "inflight") == "ROLLBACK_COMPLETE"  # the service's ending of a create that could not go on
        assert made not in clusters(project)  # the rollback's DELETE reached the handler, with the model of its last answer
        events = [e for e in stack_events(cfn, "inflight") if e["LogicalResourceId"] in ("inflight", "Db")]
        since = next(i for i, e in enumerate(events) if e["ResourceStatus"] == "CREATE_FAILED" and e["LogicalResourceId"] == "inflight")
        after = [(e["LogicalResourceId"], e["ResourceStatus"]) for e in events[since:] if not e.get("ResourceStatusReason", "").startswith("cfnrun contract")]
        assert after == [
            ("inflight", "CREATE_FAILED"), ("inflight", "ROLLBACK_IN_PROGRESS"),
            ("Db", "DELETE_IN_PROGRESS"), ("Db", "DELETE_COMPLETE"), ("inflight", "ROLLBACK_COMPLETE"),
        ], after
        assert {e.get("ClientRequestToken") for e in events[since + 1:]} == {"make-1"}  # the interrupted operation's token
        assert next(e for e in events if e["ResourceStatus"] == "DELETE_COMPLETE")["PhysicalResourceId"] == made
        cfn.delete_stack(StackName="inflight")
        cfn.get_waiter("stack_delete_complete").wait(StackName=stack_id, WaiterConfig=FAST)
    finally:
        second.stop()


def _one_cluster(name: str) -> str:
    return json.dumps({"Resources": {"Db": {"Type": "Cfnrun::Sample::Cluster", "Properties": {"Name": name, "NodeCount": 1}}}})


def _deletes_held(project: Path) -> None:
    """The project's changes call back at once, but a delete waits a minute between its calls while ``hold`` is in the store's folder."""
    handlers = project / "src" / "cfnrun_sample_cluster" / "handlers.py"
    waits = "callbackDelaySeconds=_delay(),"
    source = handlers.read_text()
    assert waits in source
    held = 'callbackDelaySeconds=60 if stage == "delete" and os.path.exists(os.path.join(store._folder(None), "hold")) else 0,'
    handlers.write_text(source.replace(waits, held))


def test_a_serve_stopped_while_reading_back_an_interrupted_stack_leaves_it_for_the_next_serve_to_carry_on(tmp_path: Path) -> None:
    """The stack read back mid-operation is written failed only by what carries it on: a serve that stops before (here: it
    refuses a stack kept after it) leaves its record as it was, and the next serve carries its operation on all the same."""
    project = cluster_project(tmp_path, delay_s=0)
    _deletes_held(project)
    (project / ".state").mkdir()
    (project / ".state" / "hold").write_text("")
    first = serve_cluster(tmp_path, "--state", "kept")
    try:
        cfn = boto3.client("cloudformation", endpoint_url=first.url, **CREDENTIALS)
        cfn.create_stack(StackName="moved", TemplateBody=_one_cluster("one"))
        assert settled_status(cfn, "moved") == "CREATE_COMPLETE"
        cfn.create_stack(StackName="later", TemplateBody=_one_cluster("later"))  # kept after "moved": read back after it
        assert settled_status(cfn, "later") == "CREATE_COMPLETE"
        cfn.update_stack(StackName="moved", TemplateBody=_one_cluster("two"))  # Name is create-only: Db is replaced
        first.has_printed(r"DELETE \(stack moved Db\) → IN_PROGRESS")  # the update's cleanup is deleting cluster one
    finally:
        first.stop(signal.SIGKILL)
    assert sorted(c["Name"] for c in clusters(project).values()) == ["later", "one", "two"]

    database = sqlite3.connect(str(tmp_path / "kept" / "stacks.sqlite3"))
    try:
        [(later_id, later)] = database.execute("SELECT stack_id, record FROM stacks WHERE json_extract(record, '$.name') = 'later'").fetchall()
        damaged = {key: value for key, value in json.loads(later).items() if key != "template_body"}
        database.execute("UPDATE stacks SET record = ? WHERE stack_id = ?", (json.dumps(damaged), later_id))
        database.commit()
        refused = cfnrun("serve", "cluster", "--port", "0", "--no-reload", "--state", "kept", cwd=tmp_path)
        assert refused.returncode == 2 and "the record of stack later is damaged" in refused.stderr, refused.stdout + refused.stderr
        database.execute("UPDATE stacks SET record = ? WHERE stack_id = ?", (later, later_id))  # put right
        database.commit()
    finally:
        database.close()

    (project / ".state" / "hold").unlink()
    second = serve_cluster(tmp_path, "--state", "kept")
    try:
        cfn = boto3.client("cloudformation", endpoint_url=second.url, **CREDENTIALS)
        second.has_printed("stack moved: serve stopped during its operation: going on with its update's cleanup, as the service would")
        wait_until(lambda: "one" not in [c["Name"] for c in clusters(project).values()], timeout=60, what="the replaced cluster to be deleted")
        assert settled_status(cfn, "moved") == "UPDATE_COMPLETE"
    finally:
        second.stop()
    assert sorted(c["Name"] for c in clusters(project).values()) == ["later", "two"]


def test_a_stack_operation_retried_with_its_client_request_token_is_answered_as_the_first_call(tmp_path: Path) -> None:
    cluster_project(tmp_path, delay_s=1)
    server = serve_cluster(tmp_path)
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
    project = cluster_project(tmp_path, delay_s=60)  # still stabilizing when serve stops
    server = serve_cluster(tmp_path)
    cfn = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    cfn.create_stack(StackName="unfinished", TemplateBody=CLUSTER)
    server.has_printed(r"CREATE \(stack unfinished Db\)")
    wait_until(lambda: bool(clusters(project)), timeout=30, what="the cluster the create made")
    [made] = clusters(project)
    server.stop()
    line = server.has_printed(rf"stack unfinished \(CREATE_IN_PROGRESS\): left: Db \(Cfnrun::Sample::Cluster\) {made}: remove it with ")
    command = line.split("remove it with ", 1)[1]
    assert command.startswith("cfnrun invoke DELETE ") and "--project cluster" in command, line
