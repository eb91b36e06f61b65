"""Drift-aware change sets (CreateChangeSet's DeploymentMode REVERT_DRIFT) on serve's local stacks, driven by boto3: a
note changed and deleted behind the stack's back, then brought back to its template."""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any, Callable, Dict

import pytest
from botocore.exceptions import ClientError

from conftest import ServerProcess, wait_until
from test_serve_stack_drift import FAST, NOTE, client, detected

PASSWORD = "hunter2222"


def template(priority: int) -> str:
    note = {"Title": "drift me", "Priority": priority, "AccessPassword": {"Ref": "Password"}, "Tags": [{"Key": "a", "Value": "1"}]}
    return json.dumps({
        "Parameters": {"Password": {"Type": "String", "NoEcho": True}},
        "Resources": {"Note": {"Type": NOTE, "Properties": note}, "Marker": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
    })


PARAMETERS = [{"ParameterKey": "Password", "ParameterValue": PASSWORD}]


def changed_elsewhere(cloudcontrol: Any, note_id: str, patch: Any) -> None:
    """The note's handler changes it through Cloud Control on the same serve: behind the stack's back."""
    token = cloudcontrol.update_resource(TypeName=NOTE, Identifier=note_id, PatchDocument=json.dumps(patch))["ProgressEvent"]["RequestToken"]
    cloudcontrol.get_waiter("resource_request_success").wait(RequestToken=token, WaiterConfig=FAST)


def made(cloudformation: Any, name: str, **given: Any) -> Dict[str, Any]:
    """CreateChangeSet of the stack "notes", then DescribeChangeSet (with the values) once it is made."""
    cloudformation.create_change_set(StackName="notes", ChangeSetName=name, Parameters=PARAMETERS, **given)
    cloudformation.get_waiter("change_set_create_complete").wait(StackName="notes", ChangeSetName=name, WaiterConfig=FAST)
    described: Dict[str, Any] = cloudformation.describe_change_set(StackName="notes", ChangeSetName=name, IncludePropertyValues=True)
    return described


def settled(cloudformation: Any, name: str) -> Dict[str, Any]:
    """DescribeChangeSet once the change set is no longer CREATE_IN_PROGRESS (made, or FAILED: which the waiter raises on)."""
    described: Dict[str, Any] = {}

    def done() -> bool:
        described.update(cloudformation.describe_change_set(StackName="notes", ChangeSetName=name))
        return described["Status"] != "CREATE_IN_PROGRESS"

    wait_until(done, what=f"change set {name} to be made")
    return described


def note_now(cloudcontrol: Any, note_id: str) -> Dict[str, Any]:
    found: Dict[str, Any] = json.loads(cloudcontrol.get_resource(TypeName=NOTE, Identifier=note_id)["ResourceDescription"]["Properties"])
    return found


@pytest.fixture
def notes(sample: Callable[[str], Path], serve: Callable[..., ServerProcess]) -> Any:
    return stack_of_notes(serve(sample("note"), "--no-reload", "--virtual-clock"))


def stack_of_notes(server: ServerProcess) -> Any:
    """The stack "notes" made on ``server``: its CloudFormation and Cloud Control clients and the note's id."""
    cloudformation, cloudcontrol = client(server, "cloudformation"), client(server, "cloudcontrol")
    cloudformation.create_stack(StackName="notes", TemplateBody=template(2), Parameters=PARAMETERS)
    cloudformation.get_waiter("stack_create_complete").wait(StackName="notes", WaiterConfig=FAST)
    note_id = cloudformation.describe_stack_resource(StackName="notes", LogicalResourceId="Note")["StackResourceDetail"]["PhysicalResourceId"]
    return cloudformation, cloudcontrol, note_id


def test_a_drifted_property_is_reverted_and_one_the_template_now_matches_is_synced(notes: Any) -> None:
    cloudformation, cloudcontrol, note_id = notes
    changed_elsewhere(cloudcontrol, note_id, [
        {"op": "replace", "path": "/Title", "value": "changed elsewhere"}, {"op": "replace", "path": "/Priority", "value": 5},
    ])

    # A traditional change set sees only the template: Priority 2 → 5, the Title's drift invisible.
    plain = made(cloudformation, "plain", TemplateBody=template(5))
    [change] = plain["Changes"]
    assert "DeploymentMode" not in plain and "StackDriftStatus" not in plain and "ResourceDriftStatus" not in change["ResourceChange"]
    assert [d["Target"]["Name"] for d in change["ResourceChange"]["Details"]] == ["Priority"]

    aware = made(cloudformation, "aware", TemplateBody=template(5), DeploymentMode="REVERT_DRIFT")
    assert (aware["DeploymentMode"], aware["StackDriftStatus"], aware["ExecutionStatus"]) == ("REVERT_DRIFT", "DRIFTED", "AVAILABLE")
    [change] = aware["Changes"]
    resource = change["ResourceChange"]
    assert (resource["LogicalResourceId"], resource["Action"], resource["Replacement"]) == ("Note", "Modify", "False")
    assert resource["ResourceDriftStatus"] == "MODIFIED"
    assert resource["ResourceDriftIgnoredAttributes"] == [{"Path": "/Properties/AccessPassword", "Reason": "WRITE_ONLY_PROPERTY"}]
    details = {d["Target"]["Name"]: d for d in resource["Details"]}
    title, priority = details["Title"], details["Priority"]
    # The Title drifted and the template did not move it: it goes back, from its actual value to the template's.
    assert {k: title["Target"][k] for k in ("BeforeValue", "AfterValue", "BeforeValueFrom", "AfterValueFrom", "AttributeChangeType")} == {
        "BeforeValue": "changed elsewhere", "AfterValue": "drift me", "BeforeValueFrom": "ACTUAL_STATE", "AfterValueFrom": "TEMPLATE",
        "AttributeChangeType": "Modify",
    }
    drift = title["Target"]["Drift"]
    assert (drift["PreviousValue"], drift["ActualValue"]) == ("drift me", "changed elsewhere") and "DriftDetectionTimestamp" in drift
    assert (title["ChangeSource"], title["Evaluation"]) == ("DirectModification", "Static")
    # The template now says what the Priority actually is: only the record changes.
    assert (priority["Target"]["AttributeChangeType"], priority["ChangeSource"]) == ("SyncWithActual", "NoModification")
    assert (priority["Target"]["Drift"]["PreviousValue"], priority["Target"]["Drift"]["ActualValue"]) == ("2", "5")
    assert json.loads(resource["BeforeContext"])["Properties"]["Title"] == "changed elsewhere"
    assert json.loads(resource["PreviousDeploymentContext"])["Properties"]["Title"] == "drift me"
    assert PASSWORD not in json.dumps(aware, default=str)

    cloudformation.execute_change_set(StackName="notes", ChangeSetName="aware")
    cloudformation.get_waiter("stack_update_complete").wait(StackName="notes", WaiterConfig=FAST)
    now = note_now(cloudcontrol, note_id)
    assert (now["Title"], now["Priority"]) == ("drift me", 5)
    assert cloudformation.describe_stacks(StackName="notes")["Stacks"][0]["DriftInformation"]["StackDriftStatus"] == "NOT_CHECKED"
    assert detected(cloudformation, "notes")["StackDriftStatus"] == "IN_SYNC"


def test_a_resource_deleted_behind_the_stacks_back_is_made_again(notes: Any) -> None:
    cloudformation, cloudcontrol, note_id = notes
    token = cloudcontrol.delete_resource(TypeName=NOTE, Identifier=note_id)["ProgressEvent"]["RequestToken"]
    cloudcontrol.get_waiter("resource_request_success").wait(RequestToken=token, WaiterConfig=FAST)

    aware = made(cloudformation, "aware", UsePreviousTemplate=True, DeploymentMode="REVERT_DRIFT")
    [change] = aware["Changes"]  # the same template: a traditional change set would have no change at all
    assert (change["ResourceChange"]["Action"], change["ResourceChange"]["ResourceDriftStatus"]) == ("Add", "DELETED")
    assert aware["StackDriftStatus"] == "DRIFTED"
    cloudformation.execute_change_set(StackName="notes", ChangeSetName="aware")
    cloudformation.get_waiter("stack_update_complete").wait(StackName="notes", WaiterConfig=FAST)
    new_id = cloudformation.describe_stack_resource(StackName="notes", LogicalResourceId="Note")["StackResourceDetail"]["PhysicalResourceId"]
    assert new_id != note_id and note_now(cloudcontrol, new_id)["Title"] == "drift me"


def test_an_in_sync_stack_with_the_same_template_has_no_changes_and_the_mode_is_checked(notes: Any) -> None:
    cloudformation, _, _ = notes
    cloudformation.create_change_set(
        StackName="notes", ChangeSetName="same", UsePreviousTemplate=True, Parameters=PARAMETERS, DeploymentMode="REVERT_DRIFT"
    )
    same = settled(cloudformation, "same")
    assert (same["Status"], same["StackDriftStatus"]) == ("FAILED", "IN_SYNC")
    assert same["StatusReason"].startswith("The submitted information didn't contain changes.")
    with pytest.raises(ClientError, match="ChangeSetType UPDATE"):
        cloudformation.create_change_set(
            StackName="other", ChangeSetName="new", ChangeSetType="CREATE", TemplateBody=template(1), DeploymentMode="REVERT_DRIFT"
        )
    with pytest.raises(ClientError, match="enum value set: \\[REVERT_DRIFT\\]"):
        cloudformation.create_change_set(StackName="notes", ChangeSetName="odd", UsePreviousTemplate=True, DeploymentMode="KEEP_DRIFT")


def test_a_failed_drift_aware_update_rolls_back_to_what_actually_was(notes: Any) -> None:
    cloudformation, cloudcontrol, note_id = notes
    changed_elsewhere(cloudcontrol, note_id, [{"op": "replace", "path": "/Title", "value": "changed elsewhere"}])
    broken = json.loads(template(2))
    # It names its own NoteId, a readOnly property: with the template checks off, the handler refuses its CREATE.
    broken["Resources"]["Broken"] = {"Type": NOTE, "DependsOn": "Note", "Properties": {"Title": "t", "NoteId": {"Ref": "Marker"}}}
    made(cloudformation, "aware", TemplateBody=json.dumps(broken), DeploymentMode="REVERT_DRIFT", DisableValidation=True)

    cloudformation.execute_change_set(StackName="notes", ChangeSetName="aware")
    wait_until(
        lambda: cloudformation.describe_stacks(StackName="notes")["Stacks"][0]["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE",
        timeout=60, what="the update to roll back",
    )
    events = cloudformation.describe_stack_events(StackName="notes")["StackEvents"]
    assert [e["ResourceStatus"] for e in events if e["LogicalResourceId"] == "Note"][:4] == [
        "UPDATE_COMPLETE", "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE", "UPDATE_IN_PROGRESS"
    ]  # reverted, then put back
    assert note_now(cloudcontrol, note_id)["Title"] == "changed elsewhere"  # as it actually was, not as last deployed


def test_create_change_set_answers_at_once_and_the_reads_follow(sample: Callable[[str], Path], serve: Callable[..., ServerProcess]) -> None:
    """The service answers CreateChangeSet before it looks at the resources: here the note's workers are stopped
    (SIGSTOP) so no READ can answer; the change set is CREATE_IN_PROGRESS, cannot be executed, and is made once they go on."""
    server = serve(sample("note"), "--no-reload", "--virtual-clock")
    cloudformation, cloudcontrol, note_id = stack_of_notes(server)
    changed_elsewhere(cloudcontrol, note_id, [{"op": "replace", "path": "/Title", "value": "changed behind its back"}])
    workers = server.worker_pids()
    for pid in workers:
        os.kill(pid, signal.SIGSTOP)
    try:
        cloudformation.create_change_set(
            StackName="notes", ChangeSetName="waits", UsePreviousTemplate=True, Parameters=PARAMETERS, DeploymentMode="REVERT_DRIFT"
        )
        waiting = cloudformation.describe_change_set(StackName="notes", ChangeSetName="waits")
        assert (waiting["Status"], waiting["ExecutionStatus"], waiting["DeploymentMode"]) == ("CREATE_IN_PROGRESS", "UNAVAILABLE", "REVERT_DRIFT")
        with pytest.raises(ClientError, match="InvalidChangeSetStatus"):
            cloudformation.execute_change_set(StackName="notes", ChangeSetName="waits")
    finally:
        for pid in workers:
            os.kill(pid, signal.SIGCONT)
    made_now = settled(cloudformation, "waits")
    assert (made_now["Status"], made_now["StackDriftStatus"]) == ("CREATE_COMPLETE", "DRIFTED"), made_now
    assert [c["ResourceChange"]["LogicalResourceId"] for c in made_now["Changes"]] == ["Note"]
