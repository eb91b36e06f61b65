"""CreateChangeSet's ImportExistingResources on serve's local stacks, driven by boto3: a parameter made before its stack
is imported rather than created (the sample's primaryIdentifier, Name, is a custom name the template sets)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict

import pytest

from conftest import ServerProcess, wait_until
from test_serve_stack_drift import client

pytest.importorskip("moto.server")

PARAMETER = "Cfnrun::Sample::Parameter"
FAST = {"Delay": 0.1, "MaxAttempts": 1200}


def template(**more: Dict[str, Any]) -> str:
    resources = {
        "Existing": {"Type": PARAMETER, "DeletionPolicy": "Retain", "Properties": {"Name": "/made/before", "Value": "v"}},
        "Fresh": {"Type": PARAMETER, "DeletionPolicy": "Retain", "Properties": {"Name": "/made/by/the/stack", "Value": "v"}},
        **more,
    }
    return json.dumps({"Resources": resources})


def test_a_named_resource_that_exists_is_imported_and_the_others_are_created(
    sample: Callable[[str], Path], serve: Callable[..., ServerProcess]
) -> None:
    server = serve(sample("parameter"), "--moto", "--no-reload", "--virtual-clock")
    cfn, cloudcontrol = client(server, "cloudformation"), client(server, "cloudcontrol")
    token = cloudcontrol.create_resource(TypeName=PARAMETER, DesiredState=json.dumps({"Name": "/made/before", "Value": "v"}))["ProgressEvent"]["RequestToken"]
    cloudcontrol.get_waiter("resource_request_success").wait(RequestToken=token, WaiterConfig=FAST)
    # without the Retain the guide requires, a resource is never looked for: it stays an Add
    unretained = {"Type": PARAMETER, "Properties": {"Name": "/made/before/too", "Value": "v"}}

    cfn.create_change_set(
        StackName="params", ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=template(Unretained=unretained),
        ImportExistingResources=True,
    )
    cfn.get_waiter("change_set_create_complete").wait(StackName="params", ChangeSetName="first", WaiterConfig=FAST)
    described = cfn.describe_change_set(StackName="params", ChangeSetName="first")
    actions = {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"]["Action"] for c in described["Changes"]}
    assert actions == {"Existing": "Import", "Fresh": "Add", "Unretained": "Add"}
    [existing] = [c["ResourceChange"] for c in described["Changes"] if c["ResourceChange"]["Action"] == "Import"]
    assert existing["PhysicalResourceId"] == "/made/before" and described["ImportExistingResources"] is True
    assert cfn.list_change_sets(StackName="params")["Summaries"][0]["ImportExistingResources"] is True

    cfn.execute_change_set(StackName="params", ChangeSetName="first")
    cfn.get_waiter("stack_create_complete").wait(StackName="params", WaiterConfig=FAST)
    events = cfn.describe_stack_events(StackName="params")["StackEvents"]
    assert [e["ResourceStatus"] for e in events if e["LogicalResourceId"] == "Existing"] == ["IMPORT_COMPLETE", "IMPORT_IN_PROGRESS"]
    assert "CREATE_COMPLETE" in [e["ResourceStatus"] for e in events if e["LogicalResourceId"] == "Fresh"]
    resources = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cfn.describe_stack_resources(StackName="params")["StackResources"]}
    assert resources["Existing"] == "/made/before"


def test_an_update_that_imports_and_then_fails_lets_the_imported_resource_go_without_deleting_it(
    sample: Callable[[str], Path], serve: Callable[..., ServerProcess]
) -> None:
    server = serve(sample("parameter"), "--moto", "--no-reload", "--virtual-clock")
    cfn, cloudcontrol = client(server, "cloudformation"), client(server, "cloudcontrol")
    cfn.create_stack(StackName="params", TemplateBody=json.dumps({"Resources": {"Marker": {"Type": "AWS::CloudFormation::WaitConditionHandle"}}}))
    cfn.get_waiter("stack_create_complete").wait(StackName="params", WaiterConfig=FAST)
    token = cloudcontrol.create_resource(TypeName=PARAMETER, DesiredState=json.dumps({"Name": "/made/before", "Value": "v"}))["ProgressEvent"]["RequestToken"]
    cloudcontrol.get_waiter("resource_request_success").wait(RequestToken=token, WaiterConfig=FAST)
    # the stack's own new parameter names one that exists too and is not Retained: its CREATE fails, the update rolls back
    clash = {"Type": PARAMETER, "DependsOn": "Existing", "Properties": {"Name": "/made/before", "Value": "w"}}
    body = json.loads(template(Clash=clash))
    del body["Resources"]["Fresh"]
    body["Resources"]["Marker"] = {"Type": "AWS::CloudFormation::WaitConditionHandle"}
    cfn.create_change_set(StackName="params", ChangeSetName="second", TemplateBody=json.dumps(body), ImportExistingResources=True)
    cfn.get_waiter("change_set_create_complete").wait(StackName="params", ChangeSetName="second", WaiterConfig=FAST)
    cfn.execute_change_set(StackName="params", ChangeSetName="second")
    wait_until(lambda: cfn.describe_stacks(StackName="params")["Stacks"][0]["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE", timeout=120, what="the rollback")
    statuses = [e["ResourceStatus"] for e in cfn.describe_stack_events(StackName="params")["StackEvents"] if e["LogicalResourceId"] == "Existing"]
    assert statuses[0] == "DELETE_SKIPPED" and "IMPORT_COMPLETE" in statuses
    assert "Existing" not in {r["LogicalResourceId"] for r in cfn.describe_stack_resources(StackName="params")["StackResources"]}
    found = json.loads(cloudcontrol.get_resource(TypeName=PARAMETER, Identifier="/made/before")["ResourceDescription"]["Properties"])
    assert found["Name"] == "/made/before"  # still there: never the stack's to delete
