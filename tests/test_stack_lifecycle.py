"""A stack's lifecycle as the service runs it, on ``cfnrun serve`` through boto3: the order of clean-up and rollback
deletes, a resource updated in place keeping its physical id, and the events of a resource's creation.

One serve (per test module and xdist worker) serves the note sample's type and a custom resource's function; each test works on its own stack names.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from botocore.exceptions import ClientError, WaiterError

from conftest import FIXTURES, LOCAL_STATE, PATIENCE_S, SAMPLES, ServerProcess, wait_until

FAST = {"Delay": 0.1, "MaxAttempts": 600}
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
NOTE = "Cfnrun::Sample::Note"


class Served:
    def __init__(self, server: ServerProcess) -> None:
        import boto3

        self.server = server
        self.cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        self.cloudcontrol = boto3.client("cloudcontrol", endpoint_url=server.url, **CREDENTIALS)

    def events(self, stack: str) -> List[Dict[str, Any]]:
        pages = self.cloudformation.get_paginator("describe_stack_events").paginate(StackName=stack)
        return list(reversed([e for page in pages for e in page["StackEvents"]]))

    def wait(self, waiter: str, **arguments: Any) -> None:
        self.cloudformation.get_waiter(waiter).wait(WaiterConfig=FAST, **arguments)

    def wait_for_event(self, stack: str, logical_id: str, status: str, budget_s: float = PATIENCE_S) -> None:
        """Poll the events (as a waiter does) until ``logical_id`` has reached ``status``."""
        deadline = time.monotonic() + budget_s
        while not any(e["LogicalResourceId"] == logical_id and e["ResourceStatus"] == status for e in self.events(stack)):
            assert time.monotonic() < deadline, [(e["LogicalResourceId"], e["ResourceStatus"], e.get("ResourceStatusReason")) for e in self.events(stack)]
            time.sleep(FAST["Delay"])

    def physical_ids(self, stack: str) -> Dict[str, str]:
        described = self.cloudformation.describe_stack_resources(StackName=stack)["StackResources"]
        return {r["LogicalResourceId"]: r.get("PhysicalResourceId", "") for r in described}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("lifecycle")
    shutil.copytree(SAMPLES / "note", folder / "note", ignore=LOCAL_STATE)
    shutil.copytree(FIXTURES / "custom_resource", folder / "custom_resource")
    process = subprocess.Popen(
        [
            sys.executable, "-m", "cfnrun", "serve", "--port", "0", "--no-reload", "--virtual-clock", "--provider", "note",
            "--functions", "custom_resource/template.yaml",
        ],
        cwd=str(folder), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "NO_COLOR": "1"},
    )
    server = ServerProcess(folder, process=process)
    try:
        yield Served(server)
    finally:
        server.stop()


def _chain(names: List[str], folder: Any) -> Dict[str, Any]:
    """Notes each depending on the one before it (its Title names it), all in ``folder`` (createOnly)."""
    resources: Dict[str, Any] = {}
    for index, name in enumerate(names):
        title: Any = {"Fn::Sub": f"after ${{{names[index - 1]}}}"} if index else "first"
        resources[name] = {"Type": NOTE, "Properties": {"Title": title, "Folder": folder}}
    return resources


def _template(resources: Dict[str, Any]) -> str:
    return json.dumps({"Parameters": {"Folder": {"Type": "String"}}, "Resources": resources})


def _folder(value: str) -> List[Dict[str, Any]]:
    return [{"ParameterKey": "Folder", "ParameterValue": value}]


def _deleted_order(events: List[Dict[str, Any]], after: int) -> List[str]:
    return [e["LogicalResourceId"] for e in events[after:] if e["ResourceStatus"] == "DELETE_COMPLETE"]


def _last_stack_event(events: List[Dict[str, Any]], stack: str, status: str) -> int:
    return max(i for i, e in enumerate(events) if e["LogicalResourceId"] == stack and e["ResourceStatus"] == status)


def test_the_old_resources_of_a_replacement_go_in_reverse_dependency_order(served: Served) -> None:
    # The folder (createOnly) changes in each declaration: every note is replaced, each after the one it names.
    cfn, names = served.cloudformation, ["Vpc", "Subnet", "Instance"]
    cfn.create_stack(StackName="cleanup-order", TemplateBody=_template(_chain(names, "inbox")), Parameters=_folder("inbox"))
    served.wait("stack_create_complete", StackName="cleanup-order")
    old = served.physical_ids("cleanup-order")
    cfn.update_stack(StackName="cleanup-order", TemplateBody=_template(_chain(names, "archive")), Parameters=_folder("inbox"))
    served.wait("stack_update_complete", StackName="cleanup-order")
    events = served.events("cleanup-order")
    cleanup = _last_stack_event(events, "cleanup-order", "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS")
    assert _deleted_order(events, cleanup) == ["Instance", "Subnet", "Vpc"]
    deleted = [e["PhysicalResourceId"] for e in events[cleanup:] if e["ResourceStatus"] == "DELETE_COMPLETE"]
    assert deleted == [old["Instance"], old["Subnet"], old["Vpc"]]
    assert set(served.physical_ids("cleanup-order").values()).isdisjoint(old.values())


def test_a_rolled_back_update_deletes_what_it_added_in_reverse_dependency_order(served: Served) -> None:
    cfn = served.cloudformation
    cfn.create_stack(StackName="rollback-order", TemplateBody=_template(_chain(["Kept"], "inbox")), Parameters=_folder("inbox"))
    served.wait("stack_create_complete", StackName="rollback-order")
    added = _chain(["Kept", "Vpc", "Subnet", "Instance", "Volume"], "inbox")
    added["Vpc"]["Properties"]["Title"] = "vpc"
    added["Broken"] = {"Type": NOTE, "DependsOn": "Volume", "Properties": {"Title": "broken", "Priority": 9}}
    cfn.update_stack(StackName="rollback-order", TemplateBody=_template(added), Parameters=_folder("inbox"), DisableValidation=True)
    with pytest.raises(WaiterError, match="UPDATE_ROLLBACK_COMPLETE"):
        served.wait("stack_update_complete", StackName="rollback-order")
    events = served.events("rollback-order")
    cleanup = _last_stack_event(events, "rollback-order", "UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS")
    assert _deleted_order(events, cleanup) == ["Volume", "Instance", "Subnet", "Vpc"]
    assert set(served.physical_ids("rollback-order")) == {"Kept"}


def test_an_update_in_place_keeps_the_physical_id_and_deletes_nothing(served: Served) -> None:
    cfn = served.cloudformation
    resources = _chain(["Note"], "inbox")
    cfn.create_stack(StackName="in-place", TemplateBody=_template(resources), Parameters=_folder("inbox"))
    served.wait("stack_create_complete", StackName="in-place")
    before = served.physical_ids("in-place")["Note"]
    resources["Note"]["Properties"]["Title"] = "renamed"
    cfn.update_stack(StackName="in-place", TemplateBody=_template(resources), Parameters=_folder("inbox"))
    served.wait("stack_update_complete", StackName="in-place")
    assert served.physical_ids("in-place")["Note"] == before
    events = served.events("in-place")
    update = _last_stack_event(events, "in-place", "UPDATE_IN_PROGRESS")
    assert [e["ResourceStatus"] for e in events[update:] if e["LogicalResourceId"] == "Note"] == ["UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"]
    model = json.loads(served.cloudcontrol.get_resource(TypeName=NOTE, Identifier=before)["ResourceDescription"]["Properties"])
    assert model["Title"] == "renamed"


def test_a_resource_is_created_with_two_in_progress_events_the_second_initiated(served: Served) -> None:
    cfn = served.cloudformation
    cfn.create_stack(StackName="initiated", TemplateBody=_template(_chain(["Note"], "inbox")), Parameters=_folder("inbox"))
    served.wait("stack_create_complete", StackName="initiated")
    note = [e for e in served.events("initiated") if e["LogicalResourceId"] == "Note"]
    assert [(e["ResourceStatus"], e.get("ResourceStatusReason")) for e in note] == [
        ("CREATE_IN_PROGRESS", None),
        ("CREATE_IN_PROGRESS", "Resource creation Initiated"),
        ("CREATE_COMPLETE", None),
    ]
    assert note[0].get("PhysicalResourceId", "") == ""
    assert note[2]["PhysicalResourceId"] == served.physical_ids("initiated")["Note"]


def _failing_create() -> str:
    """A note the handler refuses (Priority 9): sent with DisableValidation, so the pre-deployment validation lets it through."""
    resources = _chain(["Made"], "inbox")
    resources["Broken"] = {"Type": NOTE, "DependsOn": "Made", "Properties": {"Title": "broken", "Priority": 9}}
    return _template(resources)


def test_on_failure_delete_deletes_what_a_failed_create_made_and_then_the_stack(served: Served) -> None:
    cfn = served.cloudformation
    stack_id = cfn.create_stack(StackName="on-failure-delete", TemplateBody=_failing_create(), Parameters=_folder("inbox"), OnFailure="DELETE", DisableValidation=True)["StackId"]
    with pytest.raises(WaiterError, match="DELETE_COMPLETE"):
        served.wait("stack_create_complete", StackName=stack_id)
    assert cfn.describe_stacks(StackName=stack_id)["Stacks"][0]["StackStatus"] == "DELETE_COMPLETE"
    with pytest.raises(ClientError, match="Stack with id on-failure-delete does not exist"):
        cfn.describe_stacks(StackName="on-failure-delete")
    events = served.events(stack_id)
    stack_events = [(e["ResourceStatus"], e.get("ResourceStatusReason")) for e in events if e["LogicalResourceId"] == "on-failure-delete"]
    assert stack_events == [
        ("CREATE_IN_PROGRESS", "User Initiated"),
        ("DELETE_IN_PROGRESS", "The following resource(s) failed to create: [Broken]. Delete requested by user."),
        ("DELETE_COMPLETE", None),
    ]
    made = [e for e in events if e["LogicalResourceId"] == "Made"]
    assert [e["ResourceStatus"] for e in made][-2:] == ["DELETE_IN_PROGRESS", "DELETE_COMPLETE"]
    with pytest.raises(ClientError, match="ResourceNotFoundException"):
        served.cloudcontrol.get_resource(TypeName=NOTE, Identifier=made[-1]["PhysicalResourceId"])


def test_on_failure_do_nothing_keeps_what_was_made_and_both_options_at_once_are_refused(served: Served) -> None:
    cfn = served.cloudformation
    with pytest.raises(ClientError, match=r"Either DisableRollback or OnFailure can be specified, not both\.") as refused:
        cfn.create_stack(StackName="both-options", TemplateBody=_failing_create(), Parameters=_folder("inbox"), OnFailure="ROLLBACK", DisableRollback=False)
    assert refused.value.response["Error"]["Code"] == "ValidationError"
    cfn.create_stack(StackName="do-nothing", TemplateBody=_failing_create(), Parameters=_folder("inbox"), OnFailure="DO_NOTHING", DisableValidation=True)
    with pytest.raises(WaiterError, match="CREATE_FAILED"):
        served.wait("stack_create_complete", StackName="do-nothing")
    assert set(served.physical_ids("do-nothing")) == {"Made", "Broken"}


def test_an_update_with_rollback_disabled_stays_update_failed_until_rollback_stack(served: Served) -> None:
    cfn = served.cloudformation
    cfn.create_stack(StackName="kept-failed", TemplateBody=_template(_chain(["Kept"], "inbox")), Parameters=_folder("inbox"))
    served.wait("stack_create_complete", StackName="kept-failed")
    with pytest.raises(ClientError, match=r"is in CREATE_COMPLETE state and can not be rolled back"):  # inferred wording
        cfn.rollback_stack(StackName="kept-failed")
    failing = _chain(["Kept"], "inbox")
    failing["Kept"]["Properties"]["Title"] = "changed"
    failing["Added"] = {"Type": NOTE, "DeletionPolicy": "Retain", "Properties": {"Title": "added"}}
    failing["Broken"] = {"Type": NOTE, "DependsOn": ["Added", "Kept"], "Properties": {"Title": "broken", "Priority": 9}}
    cfn.update_stack(StackName="kept-failed", TemplateBody=_template(failing), Parameters=_folder("inbox"), DisableRollback=True, DisableValidation=True)
    with pytest.raises(WaiterError, match="UPDATE_FAILED"):
        served.wait("stack_update_complete", StackName="kept-failed")
    described = cfn.describe_stacks(StackName="kept-failed")["Stacks"][0]
    assert described["StackStatus"] == "UPDATE_FAILED"
    assert described["StackStatusReason"] == "The following resource(s) failed to create: [Broken]. "  # added by the update
    kept = served.physical_ids("kept-failed")
    added = kept["Added"]
    assert json.loads(served.cloudcontrol.get_resource(TypeName=NOTE, Identifier=kept["Kept"])["ResourceDescription"]["Properties"])["Title"] == "changed"

    cfn.rollback_stack(StackName="kept-failed", RetainExceptOnCreate=True)
    served.wait("stack_rollback_complete", StackName="kept-failed")
    assert cfn.describe_stacks(StackName="kept-failed")["Stacks"][0]["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    assert set(served.physical_ids("kept-failed")) == {"Kept"}
    assert json.loads(served.cloudcontrol.get_resource(TypeName=NOTE, Identifier=kept["Kept"])["ResourceDescription"]["Properties"])["Title"] == "first"
    with pytest.raises(ClientError, match="ResourceNotFoundException"):  # Retain, but RetainExceptOnCreate: it was made by the update
        served.cloudcontrol.get_resource(TypeName=NOTE, Identifier=added)


def test_rollback_stack_rolls_back_a_create_that_failed_with_rollback_disabled(served: Served) -> None:
    cfn = served.cloudformation
    cfn.create_stack(StackName="create-failed", TemplateBody=_failing_create(), Parameters=_folder("inbox"), DisableRollback=True, DisableValidation=True)
    with pytest.raises(WaiterError, match="CREATE_FAILED"):
        served.wait("stack_create_complete", StackName="create-failed")
    made = served.physical_ids("create-failed")["Made"]
    cfn.rollback_stack(StackName="create-failed")
    with pytest.raises(WaiterError, match="ROLLBACK_COMPLETE"):
        served.wait("stack_create_complete", StackName="create-failed")
    statuses = [(e["ResourceStatus"], e.get("ResourceStatusReason")) for e in served.events("create-failed") if e["LogicalResourceId"] == "create-failed"]
    assert statuses[-2:] == [("ROLLBACK_IN_PROGRESS", "User Initiated"), ("ROLLBACK_COMPLETE", None)]
    with pytest.raises(ClientError, match="ResourceNotFoundException"):
        served.cloudcontrol.get_resource(TypeName=NOTE, Identifier=made)


def test_force_delete_stack_deletes_a_delete_failed_stack_leaving_what_would_not_go(served: Served) -> None:
    cfn = served.cloudformation
    greeting = {"Type": "Custom::Greeting", "Properties": {"ServiceToken": "GreeterFunction", "Name": "undeletable", "Times": "1"}}
    template = json.dumps({"Resources": {"Greeting": greeting, "Note": {"Type": NOTE, "Properties": {"Title": "goes"}}}})
    cfn.create_stack(StackName="stuck", TemplateBody=template)
    served.wait("stack_create_complete", StackName="stuck")
    with pytest.raises(ClientError, match="FORCE_DELETE_STACK is only valid for a stack in DELETE_FAILED state"):  # inferred wording
        cfn.delete_stack(StackName="stuck", DeletionMode="FORCE_DELETE_STACK")
    cfn.delete_stack(StackName="stuck")
    with pytest.raises(WaiterError, match="DELETE_FAILED"):
        served.wait("stack_delete_complete", StackName="stuck")
    described = cfn.describe_stacks(StackName="stuck")["Stacks"][0]
    assert described["StackStatusReason"] == "The following resource(s) failed to delete: [Greeting]. "
    stack_id = described["StackId"]
    cfn.delete_stack(StackName="stuck", DeletionMode="FORCE_DELETE_STACK")
    served.wait("stack_delete_complete", StackName=stack_id)
    greeting_statuses = [e["ResourceStatus"] for e in served.events(stack_id) if e["LogicalResourceId"] == "Greeting"]
    assert greeting_statuses[-2:] == ["DELETE_FAILED", "DELETE_SKIPPED"]
    assert cfn.describe_stacks(StackName=stack_id)["Stacks"][0]["StackStatus"] == "DELETE_COMPLETE"


def test_continue_update_rollback_with_force_rollback_skips_what_the_failed_rollback_left_update_failed(served: Served) -> None:
    cfn = served.cloudformation

    def template(times: str, failing: bool = False) -> str:
        resources: Dict[str, Any] = {"Greeting": {"Type": "Custom::Greeting", "Properties": {"ServiceToken": "GreeterFunction", "Name": "sticky", "Times": times}}}
        if failing:
            resources["Bad"] = {"Type": "Custom::Greeting", "DependsOn": "Greeting", "Properties": {"ServiceToken": "GreeterFunction", "Name": "refuse"}}
        return json.dumps({"Resources": resources})

    cfn.create_stack(StackName="forced", TemplateBody=template("1"))
    served.wait("stack_create_complete", StackName="forced")
    cfn.update_stack(StackName="forced", TemplateBody=template("2", failing=True))
    wait_until(lambda: cfn.describe_stacks(StackName="forced")["Stacks"][0]["StackStatus"] == "UPDATE_ROLLBACK_FAILED", timeout=60, what="the failed rollback")
    with pytest.raises(ClientError, match="ForceRollback and ResourcesToSkip are mutually exclusive"):
        cfn.continue_update_rollback(StackName="forced", ForceRollback=True, ResourcesToSkip=["Greeting"])
    cfn.continue_update_rollback(StackName="forced", ForceRollback=True)  # Greeting, which the rollback failed to update, is skipped
    wait_until(lambda: cfn.describe_stacks(StackName="forced")["Stacks"][0]["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE", timeout=60, what="the rollback")
    # as the model documents it: the skipped resource is UPDATE_COMPLETE, holding what the failed update left
    assert cfn.describe_stack_resource(StackName="forced", LogicalResourceId="Greeting")["StackResourceDetail"]["ResourceStatus"] == "UPDATE_COMPLETE"
    cfn.delete_stack(StackName="forced")


def test_an_update_killed_mid_way_is_rolled_back_by_the_next_serve_to_the_previous_properties_and_resources(tmp_path: Path) -> None:
    """SIGKILL while an update waits on a custom resource it replaces; the restarted serve rolls the update back by itself
    (as ContinueUpdateRollback would): the note it had updated gets its previous properties, the greeting its old resource."""
    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    shutil.copytree(FIXTURES / "custom_resource", tmp_path / "custom_resource")
    arguments = ("serve", "--port", "0", "--no-reload", "--provider", "note", "--functions", "custom_resource/template.yaml", "--state", "kept")

    def start() -> Served:
        process = subprocess.Popen(
            [sys.executable, "-m", "cfnrun", *arguments], cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env={**os.environ, "NO_COLOR": "1"},
        )
        return Served(ServerProcess(tmp_path, process=process))

    def template(title: str, name: str) -> str:
        greeting = {"Type": "Custom::Greeting", "DependsOn": "Note", "Properties": {"ServiceToken": "GreeterFunction", "Name": name}}
        return json.dumps({"Resources": {"Note": {"Type": NOTE, "Properties": {"Title": title}}, "Greeting": greeting}})

    first = start()
    try:
        first.cloudformation.create_stack(StackName="killed", TemplateBody=template("before", "x"))
        first.wait("stack_create_complete", StackName="killed")
        note = first.physical_ids("killed")["Note"]
        first.cloudformation.update_stack(StackName="killed", TemplateBody=template("after", "slow"))
        first.wait_for_event("killed", "Greeting", "UPDATE_IN_PROGRESS")  # its function was asked, and does not answer
        assert [e["ResourceStatus"] for e in first.events("killed") if e["LogicalResourceId"] == "Note"][-1] == "UPDATE_COMPLETE"
    finally:
        first.server.stop(signal.SIGKILL)

    second = start()
    try:
        cfn = second.cloudformation
        second.wait("stack_rollback_complete", StackName="killed")
        model = json.loads(second.cloudcontrol.get_resource(TypeName=NOTE, Identifier=note)["ResourceDescription"]["Properties"])
        assert model["Title"] == "before"
        assert second.physical_ids("killed")["Greeting"] == "greeting-x"  # the old greeting, kept aside while it was replaced
        with pytest.raises(ClientError, match="can not continue update rollback"):
            cfn.continue_update_rollback(StackName="killed")
    finally:
        second.server.stop()


def test_a_tag_key_in_aws_namespace_is_refused_before_anything_is_made(served: Served) -> None:
    """CreateStack's answer as users quote it; UpdateStack and CreateChangeSet take the same Tags (inferred)."""
    cfn = served.cloudformation
    body = _template(_chain(["Kept"], "inbox"))
    for key in ("aws:cloudformation:owner", "AWS:team"):
        with pytest.raises(ClientError) as refused:
            cfn.create_stack(StackName="reserved-tag", TemplateBody=body, Parameters=_folder("inbox"), Tags=[{"Key": key, "Value": "x"}])
        error = refused.value.response["Error"]
        assert (error["Code"], error["Message"]) == ("ValidationError", "aws: prefixed tag key names are not allowed for external use.")
    with pytest.raises(ClientError, match="Stack with id reserved-tag does not exist"):
        cfn.describe_stacks(StackName="reserved-tag")
    cfn.create_stack(StackName="tagged", TemplateBody=body, Parameters=_folder("inbox"), Tags=[{"Key": "team", "Value": "notes"}])
    served.wait("stack_create_complete", StackName="tagged")
    with pytest.raises(ClientError, match="aws: prefixed tag key names are not allowed for external use"):
        cfn.update_stack(StackName="tagged", UsePreviousTemplate=True, Parameters=_folder("inbox"), Tags=[{"Key": "aws:x", "Value": "y"}])
    with pytest.raises(ClientError, match="aws: prefixed tag key names are not allowed for external use"):
        cfn.create_change_set(StackName="tagged", ChangeSetName="retag", UsePreviousTemplate=True, Parameters=_folder("inbox"),
                              Tags=[{"Key": "aws:x", "Value": "y"}])
    assert cfn.list_change_sets(StackName="tagged")["Summaries"] == []
    assert cfn.describe_stacks(StackName="tagged")["Stacks"][0]["Tags"] == [{"Key": "team", "Value": "notes"}]


def test_use_previous_template_beside_a_template_or_for_a_new_stack_is_refused_in_the_services_words(served: Served) -> None:
    cfn = served.cloudformation
    body = _template(_chain(["Kept"], "inbox"))
    cfn.create_stack(StackName="previous", TemplateBody=body, Parameters=_folder("inbox"))
    served.wait("stack_create_complete", StackName="previous")
    both = "You cannot specify both usePreviousTemplate and Template Body/Template URL"  # boto/boto#2843
    with pytest.raises(ClientError) as refused:
        cfn.update_stack(StackName="previous", UsePreviousTemplate=True, TemplateBody=body, Parameters=_folder("outbox"))
    assert (refused.value.response["Error"]["Code"], refused.value.response["Error"]["Message"]) == ("ValidationError", both)
    with pytest.raises(ClientError, match=both):
        cfn.create_change_set(StackName="previous", ChangeSetName="both", UsePreviousTemplate=True, TemplateBody=body, Parameters=_folder("outbox"))
    with pytest.raises(ClientError) as new_stack:  # glassechidna/stackit#38
        cfn.create_change_set(StackName="not-yet", ChangeSetName="first", ChangeSetType="CREATE", UsePreviousTemplate=True)
    assert new_stack.value.response["Error"]["Message"] == "Cannot specify usePreviousTemplate as true for a changeSetType CREATE"
    with pytest.raises(ClientError) as previous_value:  # mapbox/cfn-config#182
        cfn.create_change_set(StackName="not-yet", ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=body,
                              Parameters=[{"ParameterKey": "Folder", "UsePreviousValue": True}])
    assert previous_value.value.response["Error"]["Message"] == "Cannot specify UsePreviousValue on Parameters when ChangeSetType is CREATE"
    with pytest.raises(ClientError, match="Stack with id not-yet does not exist"):
        cfn.describe_stacks(StackName="not-yet")
    with pytest.raises(ClientError) as value_too:  # widdix/cfn-create-or-update#15
        cfn.update_stack(StackName="previous", UsePreviousTemplate=True, Parameters=[{"ParameterKey": "Folder", "ParameterValue": "outbox", "UsePreviousValue": True}])
    assert value_too.value.response["Error"]["Message"] == (
        "Invalid input for parameter key Folder. Cannot specify usePreviousValue as true and non empty value for a parameter"
    )
    assert cfn.list_change_sets(StackName="previous")["Summaries"] == []
    cfn.update_stack(StackName="previous", UsePreviousTemplate=True, Parameters=_folder("outbox"))  # alone: the stack's template
    served.wait("stack_update_complete", StackName="previous")
