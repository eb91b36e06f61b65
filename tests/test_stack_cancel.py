"""A create whose resource fails cancels the resources still in flight, as the service does: real serve, boto3.

The cluster sample stabilizes each create in two rounds of CallbackDelaySeconds (a minute each here, its deletes none),
so only a cancellation ends the other resource's create before the stack settles; the rollback deletes what it made.
"""
from __future__ import annotations

import json
from pathlib import Path

import boto3

from cluster_store import add_cluster
from conftest import PATIENCE_S, wait_until
from kept_state import CREDENTIALS, cluster_project, clusters, serve_cluster, settled_status, stack_events

TAKEN = {"ClusterId": "cl-00000000aa", "Name": "taken", "NodeCount": 1, "Status": "ACTIVE", "Endpoint": "cl-00000000aa.cluster.local:7000"}


def _slow_creates(project: Path) -> None:
    """The project's creates wait CALLBACK_DELAY_SECONDS between calls; its updates and deletes do not wait."""
    handlers = project / "src" / "cfnrun_sample_cluster" / "handlers.py"
    waits = "callbackDelaySeconds=_delay(),"
    source = handlers.read_text()
    assert waits in source
    handlers.write_text(source.replace(waits, 'callbackDelaySeconds=_delay() if stage == "create" else 0,'))


def _named_late(project: Path) -> None:
    """The project's create makes its cluster at the first call but answers IN_PROGRESS without its ClusterId (the
    primaryIdentifier) until a file ``go`` is in the store's folder; then it names it and stabilizes as before."""
    handlers = project / "src" / "cfnrun_sample_cluster" / "handlers.py"
    source = handlers.read_text()
    first_answer = '    return _in_progress(record, "create", STATUS_CHECKS)\n'
    opening = '    with store.change() as clusters:\n        if callback_context.get("stage") == "create":\n'
    assert source.count(first_answer) == 1 and source.count(opening) == 1
    unnamed = (
        "ProgressEvent(status=OperationStatus.IN_PROGRESS, callbackContext={'stage': 'naming'}, callbackDelaySeconds=1,"
        " resourceModel=ResourceModel._deserialize({'Name': model.Name, 'NodeCount': model.NodeCount}))"
    )
    naming = (
        '    with store.change() as clusters:\n        if callback_context.get("stage") == "naming":\n'
        '            if not os.path.exists(os.path.join(store._folder(None), "go")):\n'
        f"                return {unnamed}\n"
        '            return _in_progress(store.find(clusters, None, model.Name), "create", STATUS_CHECKS)\n'
        '        if callback_context.get("stage") == "create":\n'
    )
    handlers.write_text(source.replace(first_answer, f"    return {unnamed}\n").replace(opening, naming))


def _cluster(name: str) -> dict:
    return {"Type": "Cfnrun::Sample::Cluster", "Properties": {"Name": name, "NodeCount": 1}}


def test_a_failed_resource_cancels_the_create_in_flight_and_the_rollback_deletes_what_it_made(tmp_path: Path) -> None:
    project = cluster_project(tmp_path, delay_s=60)
    _slow_creates(project)
    add_cluster(project / ".state", TAKEN)  # "Taken" below fails at once: AlreadyExists
    server = serve_cluster(tmp_path)
    try:
        cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        template = {"Resources": {"Fresh": _cluster("fresh"), "Taken": _cluster("taken")}}
        cloudformation.create_stack(StackName="cut", TemplateBody=json.dumps(template))
        assert settled_status(cloudformation, "cut") == "ROLLBACK_COMPLETE"
        events = [(e["LogicalResourceId"], e["ResourceStatus"], e.get("ResourceStatusReason")) for e in stack_events(cloudformation, "cut")]
    finally:
        server.stop()
    assert ("Fresh", "CREATE_FAILED", "Resource creation cancelled") in events, events
    [taken_failed] = [reason for logical_id, status, reason in events if (logical_id, status) == ("Taken", "CREATE_FAILED")]
    assert "(HandlerErrorCode: AlreadyExists)" in (taken_failed or "")
    rollback = "The following resource(s) failed to create: [Fresh, Taken]. Rollback requested by user."
    assert ("cut", "ROLLBACK_IN_PROGRESS", rollback) in events, events
    assert [cluster["Name"] for cluster in clusters(project).values()] == ["taken"]  # nothing Fresh made is left


def test_a_create_cancelled_before_its_answers_name_the_resource_runs_on_until_they_do(tmp_path: Path) -> None:
    """Cancelled while what it made has no identifier the stack could keep, the create is not cut there (the rollback
    could not delete what no record names): its next answer names the cluster, the create then ends cancelled, and
    the rollback deletes it."""
    project = cluster_project(tmp_path, delay_s=60)
    _slow_creates(project)
    _named_late(project)
    add_cluster(project / ".state", TAKEN)
    server = serve_cluster(tmp_path)
    try:
        cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        template = {"Resources": {"Fresh": _cluster("fresh"), "Taken": _cluster("taken")}}
        cloudformation.create_stack(StackName="late", TemplateBody=json.dumps(template))

        def taken_failed() -> bool:
            return any((e["LogicalResourceId"], e["ResourceStatus"]) == ("Taken", "CREATE_FAILED") for e in stack_events(cloudformation, "late"))

        wait_until(taken_failed, timeout=PATIENCE_S, what="Taken's create to fail")
        wait_until(lambda: "fresh" in [c["Name"] for c in clusters(project).values()], timeout=PATIENCE_S, what="Fresh's cluster to be made")
        (project / ".state" / "go").write_text("")  # from its next call, Fresh's answers name its cluster
        assert settled_status(cloudformation, "late") == "ROLLBACK_COMPLETE"
        events = [(e["LogicalResourceId"], e["ResourceStatus"], e.get("ResourceStatusReason")) for e in stack_events(cloudformation, "late")]
    finally:
        server.stop()
    assert ("Fresh", "CREATE_FAILED", "Resource creation cancelled") in events, events
    assert ("Fresh", "DELETE_COMPLETE", None) in events, events
    assert [cluster["Name"] for cluster in clusters(project).values()] == ["taken"]  # the cluster Fresh made was deleted
