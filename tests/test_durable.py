"""Stacks that survive serve stopping and restarting (issue 31 items 1, 4, 13): real serve processes, boto3.

Stopping serve during a stack operation starts no resource more and leaves a record of what is left; the next
``serve --state`` on the same folder carries each interrupted operation on as the service would (a create or an update
rolled back, a delete finished), and answers a CreateStack retried with its ClientRequestToken as the first call.
"""
from __future__ import annotations

import json
import re
import signal
from pathlib import Path
from typing import Any, Dict

import boto3
import pytest

from cluster_store import change_cluster
from conftest import wait_until
from kept_state import CREDENTIALS, cluster_project, clusters, kept_physical_id, kept_stack, serve_cluster, settled_status, stack_events

DB = {"Type": "Cfnrun::Sample::Cluster", "Properties": {"Name": "kept-db", "NodeCount": 1}}
DB_THEN_CACHE = json.dumps(
    {"Resources": {"Db": DB, "Cache": {"Type": "Cfnrun::Sample::Cluster", "DependsOn": "Db", "Properties": {"Name": "kept-cache", "NodeCount": 1}}}}
)
ONE_DB = json.dumps({"Resources": {"Db": DB}})


HOLD = """

def _hold(record):  # (a test's patch) the first CREATE call stays running once its cluster is in the store, until serve is killed
    marker = os.environ.get("HOLD_FIRST_CREATE")
    if marker and not os.path.exists(marker):
        with open(marker + ".part", "w") as out:  # renamed whole: the test waits for the name, then reads the id
            out.write(record["ClusterId"])
        os.replace(marker + ".part", marker)
        import time
        time.sleep(3600)
"""


def hold_first_create(project: Path) -> Path:
    """Patch the project's CREATE handler: its first call, once the cluster is in the store, writes the marker returned and
    then runs until serve is killed (the calls after it, in the next serve, do not)."""
    marker = project.parent / "first-create-running"
    handlers = project / "src" / "cfnrun_sample_cluster" / "handlers.py"
    made = '    LOG.info("creating %s with %s node(s)", record["ClusterId"], model.NodeCount)\n'
    source = handlers.read_text()
    assert made in source
    handlers.write_text(source.replace(made, made + "    _hold(record)\n") + HOLD)
    template = project / "template.yml"
    template.write_text(template.read_text().replace("CLUSTER_STATE_DIR: .state", f'CLUSTER_STATE_DIR: .state\n        HOLD_FIRST_CREATE: "{marker}"'))
    return marker


def _cloudformation(server: Any) -> Any:
    return boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)


def _stopped(server: Any) -> str:
    """SIGTERM, then everything serve printed until it exited."""
    server.stop_cleanly()
    server.has_printed(r"\bstopped$")
    return "\n".join(server.output)


@pytest.mark.parametrize("kept", [True, False], ids=["with-state", "without-state"])
def test_stopping_serve_mid_create_starts_no_resource_more_and_keeps_what_is_left(tmp_path: Path, kept: bool) -> None:
    project = cluster_project(tmp_path, delay_s=3)  # Db stabilizes in two rounds; Cache waits for it
    server = serve_cluster(tmp_path, "--shutdown-grace", "120", *(["--state", "kept"] if kept else []))
    _cloudformation(server).create_stack(StackName="halted", TemplateBody=DB_THEN_CACHE)
    server.has_printed(r"CREATE \(stack halted Db\)")  # Db's first answer (IN_PROGRESS, with its ClusterId) is in
    printed = _stopped(server)

    [made] = clusters(project)  # Db only: the grace was long enough for Db to finish and Cache to start, but nothing started
    assert "stack halted Cache" not in printed, printed
    if kept:
        record = kept_stack(tmp_path / "kept", "halted")
        assert record is not None and record["status"] == "CREATE_IN_PROGRESS"  # for the next serve to carry on
        db = next(r for r in record["resources"] if r["logical_id"] == "Db")
        assert db["physical_id"] == made and db["status"] in ("CREATE_IN_PROGRESS", "CREATE_COMPLETE"), db
        assert not any(r["physical_id"] for r in record["resources"] if r["logical_id"] == "Cache")
    else:
        line = next(line for line in printed.splitlines() if "stack halted (CREATE_IN_PROGRESS): left: Db" in line)
        found = re.search(rf"left: Db \(Cfnrun::Sample::Cluster\) {made}: remove it with cfnrun invoke DELETE (\S+) --project cluster$", line)
        assert found, line
        # the request holds the model Db's handler last answered (as the service's DELETE would), not the identifier alone
        left = json.loads((tmp_path / found.group(1)).read_text())["desiredResourceState"]
        assert left["ClusterId"] == made and left["Name"] and left["NodeCount"] == 1, left


def test_a_create_stopped_mid_way_is_rolled_back_by_the_next_serve(tmp_path: Path) -> None:
    project = cluster_project(tmp_path, delay_s=60)
    first = serve_cluster(tmp_path, "--state", "kept", "--shutdown-grace", "120")
    _cloudformation(first).create_stack(StackName="halted", TemplateBody=DB_THEN_CACHE)
    first.has_printed(r"CREATE \(stack halted Db\)")
    _stopped(first)  # SIGTERM with --state: the stack is kept in flight
    [made] = clusters(project)

    second = serve_cluster(tmp_path, "--state", "kept", "--virtual-clock")
    try:
        cfn = _cloudformation(second)
        assert settled_status(cfn, "halted") == "ROLLBACK_COMPLETE"
        assert made not in clusters(project)
        db = cfn.describe_stack_resources(StackName="halted")["StackResources"]
        assert [(r["LogicalResourceId"], r["ResourceStatus"]) for r in db] == [("Db", "DELETE_COMPLETE")]
    finally:
        second.stop()


def _created(tmp_path: Path, name: str) -> Dict[str, Any]:
    """The stack ``name`` (one Db) created by a serve that then stops; the cluster it made."""
    server = serve_cluster(tmp_path, "--state", "kept", "--virtual-clock")
    try:
        cfn = _cloudformation(server)
        cfn.create_stack(StackName=name, TemplateBody=ONE_DB)
        assert settled_status(cfn, name) == "CREATE_COMPLETE"
    finally:
        server.stop()
    [made] = clusters(tmp_path / "cluster").values()
    return made


def test_an_update_killed_mid_way_is_rolled_back_to_the_previous_properties_by_the_next_serve(tmp_path: Path) -> None:
    project = cluster_project(tmp_path, delay_s=60)
    made = _created(tmp_path, "resized")
    second = serve_cluster(tmp_path, "--state", "kept")  # a real clock: the update stays in flight
    try:
        _cloudformation(second).update_stack(StackName="resized", TemplateBody=ONE_DB.replace('"NodeCount": 1', '"NodeCount": 3'))
        wait_until(lambda: clusters(project)[made["ClusterId"]]["NodeCount"] == 3, timeout=60, what="the update to reach the handler")
    finally:
        second.stop(signal.SIGKILL)

    third = serve_cluster(tmp_path, "--state", "kept", "--virtual-clock")
    try:
        cfn = _cloudformation(third)
        assert settled_status(cfn, "resized") == "UPDATE_ROLLBACK_COMPLETE"
        cluster = clusters(project)[made["ClusterId"]]
        assert (cluster["NodeCount"], cluster["Status"]) == (1, "ACTIVE")  # the handler was called with the previous properties
        stack_id = cfn.describe_stacks(StackName="resized")["Stacks"][0]["StackId"]  # a deleted stack answers to its id only
        cfn.delete_stack(StackName="resized")
        assert settled_status(cfn, stack_id) == "DELETE_COMPLETE"
        assert clusters(project) == {}
    finally:
        third.stop()


def test_a_delete_killed_mid_way_is_finished_by_the_next_serve(tmp_path: Path) -> None:
    project = cluster_project(tmp_path, delay_s=60)
    made = _created(tmp_path, "going")
    second = serve_cluster(tmp_path, "--state", "kept")
    try:
        cfn = _cloudformation(second)
        stack_id = cfn.describe_stacks(StackName="going")["Stacks"][0]["StackId"]
        cfn.delete_stack(StackName="going")
        wait_until(lambda: clusters(project)[made["ClusterId"]]["Status"] == "DELETING", timeout=60, what="the delete to reach the handler")
    finally:
        second.stop(signal.SIGKILL)

    third = serve_cluster(tmp_path, "--state", "kept", "--virtual-clock")
    try:
        third.has_printed("stack going: serve stopped during its operation: going on with its delete, as the service would")
        assert settled_status(_cloudformation(third), stack_id) == "DELETE_COMPLETE"
        assert clusters(project) == {}
    finally:
        third.stop()


def test_a_create_stack_retried_with_its_token_after_a_restart_is_answered_as_the_first_call(tmp_path: Path) -> None:
    cluster_project(tmp_path, delay_s=1)
    first = serve_cluster(tmp_path, "--state", "kept", "--virtual-clock")
    try:
        created = _cloudformation(first).create_stack(StackName="retried", TemplateBody=ONE_DB, ClientRequestToken="create-1")["StackId"]
        assert settled_status(_cloudformation(first), "retried") == "CREATE_COMPLETE"
    finally:
        first.stop()
    second = serve_cluster(tmp_path, "--state", "kept", "--virtual-clock")
    try:
        cfn = _cloudformation(second)
        assert cfn.create_stack(StackName="retried", TemplateBody=ONE_DB, ClientRequestToken="create-1")["StackId"] == created
        with pytest.raises(cfn.exceptions.AlreadyExistsException):
            cfn.create_stack(StackName="retried", TemplateBody=ONE_DB, ClientRequestToken="create-2")
    finally:
        second.stop()


def test_a_replacement_killed_mid_way_is_rolled_back_to_the_old_resource_by_the_next_serve(tmp_path: Path) -> None:
    project = cluster_project(tmp_path, delay_s=60)
    old = _created(tmp_path, "renamed")
    second = serve_cluster(tmp_path, "--state", "kept")
    try:  # Name is createOnly: the update makes a new cluster, and would delete the old one in its cleanup
        _cloudformation(second).update_stack(StackName="renamed", TemplateBody=ONE_DB.replace('"kept-db"', '"kept-db-2"'))
        wait_until(  # the new cluster's first answer is in the record (before it, no record could know the new cluster)
            lambda: kept_physical_id(tmp_path / "kept", "renamed", "Db") not in (None, old["ClusterId"]), timeout=60, what="the new id in --state"
        )
    finally:
        second.stop(signal.SIGKILL)
    [new] = [cluster_id for cluster_id in clusters(project) if cluster_id != old["ClusterId"]]

    third = serve_cluster(tmp_path, "--state", "kept", "--virtual-clock")
    try:
        cfn = _cloudformation(third)
        third.has_printed("stack renamed: serve stopped during its operation: rolling back its update, as the service would")
        assert settled_status(cfn, "renamed") == "UPDATE_ROLLBACK_COMPLETE"
        assert list(clusters(project)) == [old["ClusterId"]]  # the new one deleted, the old one kept
        db = cfn.describe_stack_resource(StackName="renamed", LogicalResourceId="Db")["StackResourceDetail"]
        assert db["PhysicalResourceId"] == old["ClusterId"], db
        deleted = [e["PhysicalResourceId"] for e in cfn.describe_stack_events(StackName="renamed")["StackEvents"] if e["ResourceStatus"] == "DELETE_COMPLETE"]
        assert deleted == [new]
        stack_id = cfn.describe_stacks(StackName="renamed")["Stacks"][0]["StackId"]  # a deleted stack answers to its id only
        cfn.delete_stack(StackName="renamed")
        assert settled_status(cfn, stack_id) == "DELETE_COMPLETE"
        assert clusters(project) == {}
    finally:
        third.stop()


def test_an_update_cleanup_killed_mid_way_is_finished_by_the_next_serve(tmp_path: Path) -> None:
    project = cluster_project(tmp_path, delay_s=4)  # the new cluster is made in two rounds, then the old one is deleted in two
    old = _created(tmp_path, "renamed")
    second = serve_cluster(tmp_path, "--state", "kept")
    try:
        _cloudformation(second).update_stack(StackName="renamed", TemplateBody=ONE_DB.replace('"kept-db"', '"kept-db-2"'))
        wait_until(lambda: clusters(project).get(old["ClusterId"], {}).get("Status") == "DELETING", timeout=120, what="the cleanup's delete")
    finally:
        second.stop(signal.SIGKILL)

    third = serve_cluster(tmp_path, "--state", "kept", "--virtual-clock")
    try:
        cfn = _cloudformation(third)
        third.has_printed("stack renamed: serve stopped during its operation: going on with its update's cleanup, as the service would")
        assert settled_status(cfn, "renamed") == "UPDATE_COMPLETE"
        [(cluster_id, cluster)] = clusters(project).items()
        assert cluster["Name"] == "kept-db-2" and cluster_id != old["ClusterId"]  # the old one deleted
        assert cfn.describe_stack_resource(StackName="renamed", LogicalResourceId="Db")["StackResourceDetail"]["PhysicalResourceId"] == cluster_id
    finally:
        third.stop()


def _killed_during_first_create(tmp_path: Path, project: Path, template: str = ONE_DB) -> str:
    """A create whose first CREATE call (Db's) was running when serve got SIGKILL: the cluster that call made."""
    marker = hold_first_create(project)
    first = serve_cluster(tmp_path, "--state", "kept")
    try:
        _cloudformation(first).create_stack(StackName="held", TemplateBody=template)
        wait_until(marker.exists, timeout=60, what="the handler to be inside its first CREATE call")
    finally:
        first.stop(signal.SIGKILL)
    made = marker.read_text()
    assert made in clusters(project) and kept_physical_id(tmp_path / "kept", "held", "Db") is None  # no record names it
    return made


def test_a_resource_whose_first_create_call_was_running_at_a_sigkill_is_found_by_its_token_and_rolled_back(tmp_path: Path) -> None:
    project = cluster_project(tmp_path, delay_s=1)
    _killed_during_first_create(tmp_path, project)

    second = serve_cluster(tmp_path, "--state", "kept", "--virtual-clock")
    try:
        cfn = _cloudformation(second)
        assert settled_status(cfn, "held") == "ROLLBACK_COMPLETE"
        assert clusters(project) == {}  # CREATE again with the same token named it (the sample takes its unfinished cluster over)
        events = stack_events(cfn, "held")
        named = [e for e in events if "Calling CREATE again with the same clientRequestToken named the resource" in e.get("ResourceStatusReason", "")]
        assert [e["LogicalResourceId"] for e in named] == ["Db"]
        deleted = [e for e in events if e["LogicalResourceId"] == "Db" and e["ResourceStatus"] == "DELETE_COMPLETE"]
        assert [e["PhysicalResourceId"] for e in deleted] == [named[0]["PhysicalResourceId"]]
    finally:
        second.stop()


def test_a_first_create_call_that_cannot_be_named_again_is_reported_with_how_to_remove_it(tmp_path: Path) -> None:
    project = cluster_project(tmp_path, delay_s=1)
    made = _killed_during_first_create(tmp_path, project)
    # the cluster became someone else's: CREATE again answers AlreadyExists
    change_cluster(project / ".state", made, Status="ACTIVE", _clientRequestToken="someone-else")

    second = serve_cluster(tmp_path, "--state", "kept", "--virtual-clock")
    try:
        cfn = _cloudformation(second)
        assert settled_status(cfn, "held") == "ROLLBACK_COMPLETE"
        line = second.has_printed(r"stack held: Db \(Cfnrun::Sample::Cluster\) may be left with no stack naming it")
        assert "HandlerErrorCode: AlreadyExists" in line and "cfnrun invoke LIST --project cluster" in line, line
        request = re.search(r"cfnrun invoke DELETE (\S+) --project cluster", line)
        assert request is not None, line
        assert json.loads((tmp_path / request.group(1)).read_text())["desiredResourceState"] == {"Name": "kept-db", "NodeCount": 1}
        reasons = [e.get("ResourceStatusReason", "") for e in stack_events(cfn, "held") if e["LogicalResourceId"] == "Db"]
        assert any("did not name it" in reason and "AlreadyExists" in reason for reason in reasons), reasons
        assert made in clusters(project)  # left, and said so
    finally:
        second.stop()


# -- a SIGKILL at any point of a create, update or delete ------------------------------------------------------------------

def _kept_status(tmp_path: Path, logical_id: str) -> str:
    record = kept_stack(tmp_path / "kept", "anywhere") or {"resources": []}
    return next((str(r["status"]) for r in record["resources"] if r["logical_id"] == logical_id), "")


def _killed_create(tmp_path: Path, project: Path, point: str) -> str:
    """A create of Db then Cache, serve SIGKILLed at ``point``; the stack's id."""
    marker = hold_first_create(project) if point == "during the first call" else None
    server = serve_cluster(tmp_path, "--state", "kept")
    try:
        stack_id = str(_cloudformation(server).create_stack(StackName="anywhere", TemplateBody=DB_THEN_CACHE)["StackId"])
        if marker is not None:
            wait_until(marker.exists, timeout=60, what="Db's first CREATE call to be running")
        elif point == "between IN_PROGRESS callbacks":
            wait_until(lambda: kept_physical_id(tmp_path / "kept", "anywhere", "Db") is not None, timeout=60, what="Db's IN_PROGRESS answer")
        elif point == "after one resource finished":
            wait_until(lambda: _kept_status(tmp_path, "Db") == "CREATE_COMPLETE", timeout=60, what="Db to be complete")
        return stack_id  # "before the first call": killed as soon as CreateStack has answered
    finally:
        server.stop(signal.SIGKILL)


def _killed_update_or_delete(tmp_path: Path, project: Path, point: str) -> str:
    """The stack of one Db created, then an update or a delete, serve SIGKILLed at ``point``; the stack's id."""
    made = _created(tmp_path, "anywhere")["ClusterId"]
    marker = hold_first_create(project) if point == "during a replacement's create" else None
    server = serve_cluster(tmp_path, "--state", "kept")
    try:
        cfn = _cloudformation(server)
        stack_id = str(cfn.describe_stacks(StackName="anywhere")["Stacks"][0]["StackId"])
        if point == "during the update call":
            cfn.update_stack(StackName="anywhere", TemplateBody=ONE_DB.replace('"NodeCount": 1', '"NodeCount": 3'))
            wait_until(lambda: clusters(project)[made]["NodeCount"] == 3, timeout=60, what="the UPDATE call")
        elif marker is not None:
            cfn.update_stack(StackName="anywhere", TemplateBody=ONE_DB.replace('"kept-db"', '"kept-db-2"'))
            wait_until(marker.exists, timeout=60, what="the new cluster's first CREATE call to be running")
        else:
            cfn.delete_stack(StackName="anywhere")
            wait_until(lambda: clusters(project)[made]["Status"] == "DELETING", timeout=60, what="the DELETE call")
        return stack_id
    finally:
        server.stop(signal.SIGKILL)


@pytest.mark.parametrize(
    "operation, point",
    [
        ("create", "before the first call"),
        ("create", "during the first call"),
        ("create", "between IN_PROGRESS callbacks"),
        ("create", "after one resource finished"),
        ("update", "during the update call"),
        ("update", "during a replacement's create"),
        ("delete", "during the delete call"),
    ],
)
def test_a_sigkill_at_any_point_leaves_every_resource_in_its_stack_or_removed_by_the_next_delete_stack(
    tmp_path: Path, operation: str, point: str
) -> None:
    project = cluster_project(tmp_path, delay_s=1 if point == "after one resource finished" else 60)
    killed = _killed_create if operation == "create" else _killed_update_or_delete
    stack_id = killed(tmp_path, project, point)

    server = serve_cluster(tmp_path, "--state", "kept", "--virtual-clock")
    try:
        cfn = _cloudformation(server)
        if settled_status(cfn, stack_id) != "DELETE_COMPLETE":
            resources = cfn.describe_stack_resources(StackName=stack_id)["StackResources"]
            in_stack = {r.get("PhysicalResourceId") for r in resources if r["ResourceStatus"] != "DELETE_COMPLETE"}
            assert set(clusters(project)) <= in_stack, (clusters(project), resources)  # the provider's own store: nothing unknown
            cfn.delete_stack(StackName=stack_id)
            assert settled_status(cfn, stack_id) == "DELETE_COMPLETE"
        assert clusters(project) == {}
    finally:
        server.stop()


# -- stopping serve: custom resources and nested stacks stop at once too ----------------------------------------------------

SILENT_FUNCTION = """\
AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Resources:
  SilentFunction:
    Type: AWS::Serverless::Function
    Properties:
      Handler: silent.handler
      Runtime: python3.11
      CodeUri: src/
      Timeout: 10
"""
SILENT_SOURCE = '''\
"""A custom resource's function that answers a Delete at once and a Create never (the stack waits for it, up to an hour)."""
import json
import urllib.request


def handler(event, context):
    if event["RequestType"] != "Delete":
        return
    body = json.dumps({"Status": "SUCCESS", "PhysicalResourceId": event.get("PhysicalResourceId") or "silent", "StackId": event["StackId"],
                       "RequestId": event["RequestId"], "LogicalResourceId": event["LogicalResourceId"], "Data": {}}).encode()
    request = urllib.request.Request(event["ResponseURL"], data=body, method="PUT", headers={"content-type": ""})
    with urllib.request.urlopen(request) as response:
        response.read()
'''


def _stopped_record(tmp_path: Path, stack: str, logical_id: str) -> Dict[str, Any]:
    record = kept_stack(tmp_path / "kept", stack)
    assert record is not None and record["status"] == "CREATE_IN_PROGRESS", record
    [resource] = [r for r in record["resources"] if r["logical_id"] == logical_id]
    assert resource["status"] == "CREATE_IN_PROGRESS", resource
    last = [e for e in record["events"] if e["logical_id"] == logical_id][-1]
    assert last["reason"].startswith("cfnrun serve stopped: no further handler calls were made"), last
    return resource


def test_stopping_serve_while_a_custom_resource_waits_for_its_answer_stops_at_once_and_keeps_it_in_flight(tmp_path: Path) -> None:
    cluster_project(tmp_path, delay_s=1)
    (tmp_path / "silent" / "src").mkdir(parents=True)
    (tmp_path / "silent" / "template.yaml").write_text(SILENT_FUNCTION)
    (tmp_path / "silent" / "src" / "silent.py").write_text(SILENT_SOURCE)
    template = json.dumps({"Resources": {"Thing": {"Type": "Custom::Silent", "Properties": {"ServiceToken": "SilentFunction"}}}})
    args = ("--functions", "silent/template.yaml", "--state", "kept")
    server = serve_cluster(tmp_path, *args, "--shutdown-grace", "120")
    _cloudformation(server).create_stack(StackName="waiting", TemplateBody=template)
    server.has_printed(r"custom resource Create Thing")  # the function returned without answering: the stack waits for the answer
    _stopped(server)  # within the stop's 30 s, though the grace is 120 s and the wait an hour
    _stopped_record(tmp_path, "waiting", "Thing")

    second = serve_cluster(tmp_path, *args, "--virtual-clock")
    try:  # its answer never came, so nothing names it: said so, not guessed at (a custom resource promises no idempotent create)
        assert settled_status(_cloudformation(second), "waiting") == "ROLLBACK_COMPLETE"
        line = second.has_printed(r"stack waiting: Thing \(Custom::Silent\) may be left with no stack naming it")
        assert "is not asked again" in line, line
    finally:
        second.stop()


CHILD_DB = json.dumps({"Resources": {"Db": DB}})


def test_stopping_serve_during_a_nested_stack_stops_parent_and_child_at_once_and_the_next_serve_rolls_both_back(tmp_path: Path) -> None:
    project = cluster_project(tmp_path, delay_s=60)
    (tmp_path / "child.json").write_text(CHILD_DB)
    parent = json.dumps({"Resources": {"Child": {"Type": "AWS::CloudFormation::Stack", "Properties": {"TemplateURL": str(tmp_path / "child.json")}}}})
    server = serve_cluster(tmp_path, "--state", "kept", "--shutdown-grace", "120")
    _cloudformation(server).create_stack(StackName="nest", TemplateBody=parent)
    server.has_printed(r"CREATE \(stack nest-Child-\w+ Db\)")  # the child's Db answered IN_PROGRESS; the parent polls the child
    _stopped(server)  # within the stop's 30 s, though the grace is 120 s
    child = _stopped_record(tmp_path, "nest", "Child")
    assert child["physical_id"] and "/nest-Child-" in child["physical_id"]  # the parent's record names the child from its CreateStack on
    [made] = clusters(project)

    second = serve_cluster(tmp_path, "--state", "kept", "--virtual-clock")
    try:
        cfn = _cloudformation(second)
        assert settled_status(cfn, "nest") == "ROLLBACK_COMPLETE"
        assert settled_status(cfn, child["physical_id"]) in ("ROLLBACK_COMPLETE", "DELETE_COMPLETE")
        assert made not in clusters(project) and clusters(project) == {}
    finally:
        second.stop()


WAITING_HOOK_FUNCTION = SILENT_FUNCTION.replace("SilentFunction", "WaitingFunction").replace("silent.handler", "waiting.handler")
WAITING_HOOK_SOURCE = '''\
"""A Lambda hook's function that asks to be called again in ten minutes."""


def handler(event, context):
    return {"hookStatus": "IN_PROGRESS", "callbackContext": {"asked": True}, "callbackDelaySeconds": 600}
'''
WAITING_HOOK = {
    "Type": "AWS::CloudFormation::LambdaHook",
    "Properties": {
        "Alias": "Cfnrun::Test::Waiting", "LambdaFunction": "WaitingFunction", "ExecutionRole": "arn:aws:iam::123456789012:role/hook",
        "FailureMode": "FAIL", "HookStatus": "ENABLED", "TargetOperations": ["RESOURCE"],
        "TargetFilters": {"TargetNames": ["Cfnrun::Sample::Cluster"]}, "StackFilters": {"FilteringCriteria": "ALL", "StackNames": {"Include": ["gated"]}},
    },
}


def test_stopping_serve_while_a_hook_waits_between_invocations_stops_at_once_and_provisions_nothing(tmp_path: Path) -> None:
    project = cluster_project(tmp_path, delay_s=1)
    (tmp_path / "waiting" / "src").mkdir(parents=True)
    (tmp_path / "waiting" / "template.yaml").write_text(WAITING_HOOK_FUNCTION)
    (tmp_path / "waiting" / "src" / "waiting.py").write_text(WAITING_HOOK_SOURCE)
    server = serve_cluster(tmp_path, "--functions", "waiting/template.yaml", "--state", "kept", "--shutdown-grace", "120")
    cfn = _cloudformation(server)
    cfn.create_stack(StackName="hooks", TemplateBody=json.dumps({"Resources": {"Waiting": WAITING_HOOK}}))
    assert settled_status(cfn, "hooks") == "CREATE_COMPLETE"
    cfn.create_stack(StackName="gated", TemplateBody=ONE_DB)
    server.has_printed(r"lambda hook Cfnrun::Test::Waiting CREATE_PRE_PROVISION gated Db")  # answered IN_PROGRESS: 600 s to wait
    _stopped(server)  # within the stop's 30 s, though the grace is 120 s
    _stopped_record(tmp_path, "gated", "Db")
    assert clusters(project) == {}  # the hook never let it through: never provisioned


def test_an_aws_resource_created_again_with_the_same_token_is_the_one_the_first_call_made(moto_url: str) -> None:
    import asyncio

    from cfnrun.app.stacks.aws_schemas import AwsSchemas
    from cfnrun.app.stacks.aws_types import AwsTypes
    from cfnrun.stacks.provisioning import ResourceWork, StackContext

    types = AwsTypes(moto_url, "us-east-1", AwsSchemas("us-east-1"))
    context = StackContext("arn:aws:cloudformation:us-east-1:123456789012:stack/web/1", "web", "us-east-1", "123456789012")
    work = ResourceWork(context, "Queue", "AWS::SQS::Queue", {"QueueName": "kept-queue"}, client_request_token="token-1")
    first = asyncio.run(types.create(work))
    again = asyncio.run(types.create(work))  # what the next serve does after a SIGKILL during the first (unanswered_creates.py)
    assert (again.physical_id, again.model) == (first.physical_id, first.model)
    endpoint = boto3.client("cloudformation", endpoint_url=moto_url, **CREDENTIALS)
    made = [s["StackName"] for s in endpoint.list_stacks()["StackSummaries"] if s["StackStatus"] != "DELETE_COMPLETE"]
    assert len(made) == 1 and made[0].startswith("web-Queue-"), made


def test_a_sigkill_during_the_create_made_again_leaves_it_for_the_serve_after(tmp_path: Path) -> None:
    project = cluster_project(tmp_path, delay_s=1)
    _killed_during_first_create(tmp_path, project)
    marker = tmp_path / "first-create-running"
    marker.unlink()  # the CREATE the next serve makes again holds too
    second = serve_cluster(tmp_path, "--state", "kept", "--virtual-clock")
    try:
        wait_until(marker.exists, timeout=60, what="the CREATE made again to be running")
    finally:
        second.stop(signal.SIGKILL)
    assert len(clusters(project)) == 1

    third = serve_cluster(tmp_path, "--state", "kept", "--virtual-clock")
    try:
        assert settled_status(_cloudformation(third), "held") == "ROLLBACK_COMPLETE"
        assert clusters(project) == {}
    finally:
        third.stop()
