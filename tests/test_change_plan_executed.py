"""A change set's plan is what its execution does, on ``cfnrun serve`` through boto3 (issue #29): the replacements
DescribeChangeSet promises are the ones made (also after a ``--state`` restart), a change to Metadata alone updates the
resource's Metadata without its handler, and ExecuteChangeSet's DisableRollback keeps a failed stack as it is.

Each serve is the note sample's type (its ``Folder`` is createOnly: changing it replaces the note).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from botocore.exceptions import WaiterError

from conftest import LOCAL_STATE, SAMPLES, ServerProcess, wait_until
from stack_waits import FAST, settled

NOTE = "Cfnrun::Sample::Note"
REPLACING = "Requested update requires the creation of a new physical resource; hence creating one."


def _client(server: ServerProcess) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "cloudformation", endpoint_url=server.url, region_name="us-east-1", aws_access_key_id="testing",
        aws_secret_access_key="testing", config=Config(retries={"max_attempts": 0}),
    )


def _note_project(folder: Path) -> Path:
    project = folder / "note"
    shutil.copytree(SAMPLES / "note", project, ignore=LOCAL_STATE)
    return project


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(_note_project(tmp_path_factory.mktemp("plan-executed")), "--no-reload", "--virtual-clock")
    yield process
    process.stop()


def _chain(names: List[str], metadata: str = "v1") -> str:
    """Notes whose createOnly Folder comes from the Folder parameter, each naming the one before it in its Content."""
    resources: Dict[str, Any] = {}
    for index, name in enumerate(names):
        properties: Dict[str, Any] = {"Title": f"note {index}", "Folder": {"Ref": "Folder"}}
        if index:
            properties["Content"] = {"Ref": names[index - 1]}
        resources[name] = {"Type": NOTE, "Metadata": {"Version": metadata, "Folder": {"Ref": "Folder"}}, "Properties": properties}
    resources["Plain"] = {"Type": NOTE, "Properties": {"Title": {"Fn::Sub": "plain in ${Folder}"}}}  # updated in place
    return json.dumps({"Parameters": {"Folder": {"Type": "String"}}, "Resources": resources})


def _folder(value: str) -> List[Dict[str, str]]:
    return [{"ParameterKey": "Folder", "ParameterValue": value}]


def _physical_ids(cfn: Any, stack: str) -> Dict[str, str]:
    return {r["LogicalResourceId"]: r.get("PhysicalResourceId", "") for r in cfn.describe_stack_resources(StackName=stack)["StackResources"]}


def _planned(cfn: Any, stack: str, name: str, **create: Any) -> Dict[str, Dict[str, Any]]:
    """The change set made and described: each change by logical id."""
    made = cfn.create_change_set(StackName=stack, ChangeSetName=name, **create)
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=made["Id"], WaiterConfig=FAST)
    described = cfn.describe_change_set(ChangeSetName=made["Id"])
    return {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"] for c in described["Changes"]}


def _executed(cfn: Any, stack: str, name: str, waiter: str = "stack_update_complete", **execute: Any) -> None:
    cfn.execute_change_set(ChangeSetName=name, StackName=stack, **execute)
    settled(cfn, stack, waiter)


def _assert_done_as_planned(cfn: Any, stack: str, planned: Dict[str, Dict[str, Any]], before: Dict[str, str]) -> None:
    """Each Replacement True made a new physical resource (its UPDATE_IN_PROGRESS says so); each False kept its id."""
    after = _physical_ids(cfn, stack)
    events = cfn.describe_stack_events(StackName=stack)["StackEvents"]
    replaced_by_events = {e["LogicalResourceId"] for e in events if e.get("ResourceStatusReason") == REPLACING}
    for logical_id, change in planned.items():
        assert change["Action"] == "Modify", change
        if change["Replacement"] == "True":
            assert after[logical_id] != before[logical_id], (logical_id, change)
            assert logical_id in replaced_by_events
            # as the service's events show a replacement: its reason, then the new resource's creation, then complete
            mine = [(e["ResourceStatus"], e.get("ResourceStatusReason")) for e in reversed(events) if e["LogicalResourceId"] == logical_id]
            start = mine.index(("UPDATE_IN_PROGRESS", REPLACING))
            assert mine[start + 1:start + 3] == [("UPDATE_IN_PROGRESS", "Resource creation Initiated"), ("UPDATE_COMPLETE", None)]
            replacing = next(e for e in events if e["LogicalResourceId"] == logical_id and e.get("ResourceStatusReason") == REPLACING)
            assert replacing["PhysicalResourceId"] == before[logical_id]  # the first event names the resource being replaced
        else:
            assert change["Replacement"] == "False", change
            assert after[logical_id] == before[logical_id], (logical_id, change)


def test_the_replacements_a_change_set_promises_are_the_ones_its_execution_makes(server: ServerProcess) -> None:
    cfn = _client(server)
    names = ["First", "Second", "Third"]
    cfn.create_stack(StackName="promised", TemplateBody=_chain(names), Parameters=_folder("inbox"))
    settled(cfn, "promised", "stack_create_complete")
    before = _physical_ids(cfn, "promised")

    planned = _planned(cfn, "promised", "move", TemplateBody=_chain(names), Parameters=_folder("archive"))
    assert {lid: c["Replacement"] for lid, c in planned.items()} == {"First": "True", "Second": "True", "Third": "True", "Plain": "False"}
    # Second's Folder changes by the parameter, its Content by First's replacement: both are in its details.
    causes = {(d["Target"].get("Name"), d["ChangeSource"], d.get("CausingEntity")) for d in planned["Second"]["Details"]}
    assert {("Folder", "ParameterReference", "Folder"), ("Content", "ResourceReference", "First")} <= causes
    _executed(cfn, "promised", "move")
    _assert_done_as_planned(cfn, "promised", planned, before)


def test_the_plan_is_carried_out_after_a_state_restart(tmp_path: Path) -> None:
    project = _note_project(tmp_path)
    names = ["First", "Second"]
    first = ServerProcess(project, "--no-reload", "--virtual-clock", "--state", str(tmp_path / "kept"))
    try:
        cfn = _client(first)
        cfn.create_stack(StackName="restarted", TemplateBody=_chain(names), Parameters=_folder("inbox"))
        settled(cfn, "restarted", "stack_create_complete")
    finally:
        first.stop()
    second = ServerProcess(project, "--no-reload", "--virtual-clock", "--state", str(tmp_path / "kept"))
    try:
        cfn = _client(second)
        before = _physical_ids(cfn, "restarted")
        # The stack read back plans as it did before: the same template and values are no change (its Metadata, which
        # uses a parameter, included).
        same = cfn.create_change_set(StackName="restarted", ChangeSetName="same", TemplateBody=_chain(names), Parameters=_folder("inbox"))
        with pytest.raises(WaiterError):
            cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=same["Id"], WaiterConfig=FAST)
        unchanged = cfn.describe_change_set(ChangeSetName=same["Id"])
        assert (unchanged["Status"], unchanged["Changes"]) == ("FAILED", [])
        planned = _planned(cfn, "restarted", "move", TemplateBody=_chain(names), Parameters=_folder("archive"))
        assert {lid: c["Replacement"] for lid, c in planned.items()} == {"First": "True", "Second": "True", "Plain": "False"}
        _executed(cfn, "restarted", "move")
        _assert_done_as_planned(cfn, "restarted", planned, before)
    finally:
        second.stop()


def test_a_change_to_metadata_alone_updates_the_metadata_without_the_handler(server: ServerProcess) -> None:
    cfn = _client(server)
    cfn.create_stack(StackName="described", TemplateBody=_chain(["Noted"]), Parameters=_folder("inbox"))
    settled(cfn, "described", "stack_create_complete")
    detail = cfn.describe_stack_resource(StackName="described", LogicalResourceId="Noted")["StackResourceDetail"]
    assert json.loads(detail["Metadata"]) == {"Version": "v1", "Folder": "inbox"}
    before = _physical_ids(cfn, "described")

    planned = _planned(cfn, "described", "metadata", TemplateBody=_chain(["Noted"], metadata="v2"), Parameters=_folder("inbox"))
    assert set(planned) == {"Noted"}
    assert (planned["Noted"]["Replacement"], planned["Noted"]["Scope"]) == ("False", ["Metadata"])
    events_before = len(cfn.describe_stack_events(StackName="described")["StackEvents"])
    _executed(cfn, "described", "metadata")

    detail = cfn.describe_stack_resource(StackName="described", LogicalResourceId="Noted")["StackResourceDetail"]
    assert json.loads(detail["Metadata"]) == {"Version": "v2", "Folder": "inbox"}
    assert _physical_ids(cfn, "described") == before
    events = list(reversed(cfn.describe_stack_events(StackName="described")["StackEvents"]))[events_before:]
    assert [(e["LogicalResourceId"], e["ResourceStatus"]) for e in events if e["LogicalResourceId"] == "Noted"] == [
        ("Noted", "UPDATE_IN_PROGRESS"), ("Noted", "UPDATE_COMPLETE"),
    ]
    # The handler was not asked: its invocations are on serve's console, and the stack's delete is the next one.
    cfn.delete_stack(StackName="described")
    server.has_printed(r"DELETE \(stack described Noted\)")
    assert not [line for line in server.output if "UPDATE (stack described" in line]


def test_execute_change_set_with_rollback_disabled_keeps_a_failed_create_and_a_failed_update(server: ServerProcess) -> None:
    cfn = _client(server)
    broken = {"Type": NOTE, "DependsOn": "Made", "Properties": {"Title": "broken", "Priority": 9}}  # the handler refuses it
    made = {"Type": NOTE, "Properties": {"Title": "made"}}
    body = json.dumps({"Resources": {"Made": made, "Broken": broken}})
    created = cfn.create_change_set(StackName="kept-create", ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=body, DisableValidation=True)
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=created["Id"], WaiterConfig=FAST)
    cfn.execute_change_set(ChangeSetName=created["Id"], DisableRollback=True)
    with pytest.raises(WaiterError, match="CREATE_FAILED"):
        cfn.get_waiter("stack_create_complete").wait(StackName="kept-create", WaiterConfig=FAST)
    described = cfn.describe_stacks(StackName="kept-create")["Stacks"][0]
    assert (described["StackStatus"], described["DisableRollback"]) == ("CREATE_FAILED", True)
    assert _physical_ids(cfn, "kept-create")["Made"]  # kept, not rolled back

    cfn.create_stack(StackName="kept-update", TemplateBody=json.dumps({"Resources": {"Made": made}}))
    settled(cfn, "kept-update", "stack_create_complete")
    changed = {"Type": NOTE, "Properties": {"Title": "changed"}}
    update = json.dumps({"Resources": {"Made": changed, "Broken": broken}})
    planned = cfn.create_change_set(StackName="kept-update", ChangeSetName="second", TemplateBody=update, DisableValidation=True)
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=planned["Id"], WaiterConfig=FAST)
    cfn.execute_change_set(ChangeSetName=planned["Id"], DisableRollback=True)
    with pytest.raises(WaiterError, match="UPDATE_FAILED"):
        cfn.get_waiter("stack_update_complete").wait(StackName="kept-update", WaiterConfig=FAST)
    described = cfn.describe_stacks(StackName="kept-update")["Stacks"][0]
    # Broken was being added: the service says "failed to create" for those, "failed to update" for the others
    assert (described["StackStatus"], described["StackStatusReason"]) == ("UPDATE_FAILED", "The following resource(s) failed to create: [Broken]. ")
    statuses = [e["ResourceStatus"] for e in cfn.describe_stack_events(StackName="kept-update")["StackEvents"] if e["LogicalResourceId"] == "kept-update"]
    assert "UPDATE_ROLLBACK_IN_PROGRESS" not in statuses


def test_a_change_set_planned_before_the_stack_changed_is_obsolete_not_executed(server: ServerProcess) -> None:
    """Its plan was made against the stack as it was: executed now, it would update in place a note whose createOnly
    Folder the update moved (the handler refuses that) — the service makes it OBSOLETE."""
    from botocore.exceptions import ClientError

    cfn = _client(server)
    cfn.create_stack(StackName="stale", TemplateBody=_chain(["Only"]), Parameters=_folder("inbox"))
    settled(cfn, "stale", "stack_create_complete")
    planned = _planned(cfn, "stale", "retitle", TemplateBody=_chain(["Only"], metadata="v2"), Parameters=_folder("inbox"))
    assert planned["Only"]["Replacement"] == "False"
    cfn.update_stack(StackName="stale", TemplateBody=_chain(["Only"]), Parameters=_folder("archive"))
    settled(cfn, "stale", "stack_update_complete")

    described = cfn.describe_change_set(ChangeSetName="retitle", StackName="stale")
    assert (described["Status"], described["ExecutionStatus"]) == ("CREATE_COMPLETE", "OBSOLETE")
    with pytest.raises(ClientError) as refused:
        cfn.execute_change_set(ChangeSetName="retitle", StackName="stale")
    assert refused.value.response["Error"]["Code"] == "InvalidChangeSetStatus"
    assert refused.value.response["Error"]["Message"].endswith("cannot be executed in its current execution status of [OBSOLETE]")
    assert cfn.describe_stacks(StackName="stale")["Stacks"][0]["StackStatus"] == "UPDATE_COMPLETE"


def test_a_create_change_set_s_on_stack_failure_decides_what_its_failed_execution_does(server: ServerProcess) -> None:
    """OnStackFailure (CreateChangeSet): DELETE deletes the stack a failed create made, DO_NOTHING keeps it CREATE_FAILED;
    DescribeChangeSet shows it; ExecuteChangeSet may not add DisableRollback to it; DELETE is a CREATE change set's only."""
    from botocore.exceptions import ClientError

    cfn = _client(server)
    broken = {"Type": NOTE, "DependsOn": "Made", "Properties": {"Title": "broken", "Priority": 9}}  # the handler refuses it
    body = json.dumps({"Resources": {"Made": {"Type": NOTE, "Properties": {"Title": "made"}}, "Broken": broken}})
    ids = {}
    for name, on_failure in (("on-failure-delete", "DELETE"), ("on-failure-keep", "DO_NOTHING")):
        made = cfn.create_change_set(StackName=name, ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=body,
                                     DisableValidation=True, OnStackFailure=on_failure)
        cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=made["Id"], WaiterConfig=FAST)
        assert cfn.describe_change_set(ChangeSetName=made["Id"])["OnStackFailure"] == on_failure
        ids[name] = made["StackId"]
    with pytest.raises(ClientError, match="Either DisableRollback or OnStackFailure can be specified, not both."):
        cfn.execute_change_set(ChangeSetName="first", StackName="on-failure-delete", DisableRollback=False)
    for name in ids:
        cfn.execute_change_set(ChangeSetName="first", StackName=name)
    def ended(stack_id: str) -> str:
        status = ""
        def done() -> bool:
            nonlocal status
            status = cfn.describe_stacks(StackName=stack_id)["Stacks"][0]["StackStatus"]
            return not status.endswith("_IN_PROGRESS")
        wait_until(done, timeout=60, what=f"{stack_id} to settle")
        return status

    assert ended(ids["on-failure-delete"]) == "DELETE_COMPLETE"
    assert ended(ids["on-failure-keep"]) == "CREATE_FAILED"
    assert {r["LogicalResourceId"] for r in cfn.describe_stack_resources(StackName="on-failure-keep")["StackResources"]} == {"Made", "Broken"}
    with pytest.raises(ClientError, match="OnStackFailure DELETE is only valid when ChangeSetType is CREATE"):
        cfn.create_change_set(StackName="on-failure-keep", ChangeSetName="second", TemplateBody=body, OnStackFailure="DELETE")
