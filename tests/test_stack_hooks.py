"""Custom hooks inside local stacks (``serve --hook DIR``): run before each bucket, configured with SetTypeConfiguration."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Any, Dict, Iterator, List

import pytest
from botocore.exceptions import ClientError, WaiterError

from conftest import FIXTURES, LOCAL_STATE, SAMPLES, ServerProcess, cfnrun

HOOK = "Cfnrun::Test::VersioningGuard"
FAST = {"Delay": 0.1, "MaxAttempts": 600}
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
TEMPLATE = json.dumps(
    {
        "Parameters": {"Versioning": {"Type": "String", "AllowedValues": ["Enabled", "Suspended"]}},
        "Resources": {
            "Note": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": "made before the bucket"}},
            "Bucket": {
                "Type": "AWS::S3::Bucket",
                "DependsOn": "Note",
                "Properties": {"VersioningConfiguration": {"Status": {"Ref": "Versioning"}}, "Tags": [{"Key": "team", "Value": "a"}]},
            },
        },
    }
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    folder = tmp_path_factory.mktemp("hooked")
    shutil.copytree(SAMPLES / "note", folder / "note", ignore=LOCAL_STATE)
    shutil.copytree(FIXTURES / "versioning_hook", folder / "versioning_hook", ignore=LOCAL_STATE)
    process = subprocess.Popen(
        [sys.executable, "-m", "cfnrun", "serve", "--port", "0", "--no-reload", "--moto", "--virtual-clock",
         "--provider", "note", "--hook", "versioning_hook"],
        cwd=str(folder), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "NO_COLOR": "1", "CFNRUN_HISTORY": "on"},
    )
    served = ServerProcess(folder, process=process)
    served.folder = folder  # type: ignore[attr-defined]
    try:
        yield served
    finally:
        served.stop()


def _clients(server: ServerProcess) -> Any:
    import boto3

    return boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS), boto3.client("cloudcontrol", endpoint_url=server.url, **CREDENTIALS)


def _configure(cfn: Any, **hook_configuration: Any) -> None:
    document = {"CloudFormationConfiguration": {"HookConfiguration": {"HookInvocationStatus": "ENABLED", "TargetOperations": ["RESOURCE"], **hook_configuration}}}
    cfn.set_type_configuration(TypeName=HOOK, Type="HOOK", Configuration=json.dumps(document))


def _deploy(cfn: Any, name: str, versioning: str) -> str:
    cfn.create_stack(StackName=name, TemplateBody=TEMPLATE, Parameters=[{"ParameterKey": "Versioning", "ParameterValue": versioning}])
    try:
        cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig=FAST)
    except WaiterError:
        pass
    return str(cfn.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"])


def _hook_events(cfn: Any, name: str) -> List[Dict[str, Any]]:
    return [e for e in reversed(cfn.describe_stack_events(StackName=name)["StackEvents"]) if e.get("HookType")]


def test_a_non_compliant_bucket_rolls_its_stack_back_and_a_compliant_one_is_made(server: ServerProcess) -> None:
    cfn, cloudcontrol = _clients(server)
    _configure(cfn, FailureMode="FAIL", Properties={"MinTags": 0})
    # Properties the hook's typeConfiguration refuses: SetTypeConfiguration's CFNRegistryException, one line per problem and
    # no value shown; the configuration set before stays
    with pytest.raises(ClientError) as refused:
        _configure(cfn, FailureMode="WARN", Properties={"MinTags": -3, "Owner": "team-a"})
    assert refused.value.response["Error"]["Code"] == "CFNRegistryException"
    head, *lines = refused.value.response["Error"]["Message"].split("\n")
    assert head == f"Configuration validation failed for type {HOOK} with message:"
    assert sorted(lines) == [
        "#/CloudFormationConfiguration/HookConfiguration/Properties/MinTags: failed validation constraint for keyword [minimum]",
        "#/CloudFormationConfiguration/HookConfiguration/Properties: extraneous key [Owner] is not permitted",
    ]
    assert _deploy(cfn, "suspended", "Suspended") == "ROLLBACK_COMPLETE"  # FailureMode FAIL still
    hooked = _hook_events(cfn, "suspended")
    assert [(e["LogicalResourceId"], e["HookStatus"]) for e in hooked] == [("Bucket", "HOOK_IN_PROGRESS"), ("Bucket", "HOOK_COMPLETE_FAILED")]
    # the service's words (the Hooks user guide's testing page, DescribeStackEvents of 2025): "Invoking hook", then the verdict
    assert hooked[0]["HookStatusReason"] == "Invoking hook"
    assert hooked[-1]["HookStatusReason"] == "Hook failed with message: bucket versioning must be Enabled (found Suspended)"
    assert hooked[-1]["HookInvocationPoint"] == "PRE_PROVISION" and hooked[-1]["HookFailureMode"] == "FAIL"
    # one invocation's events share its HookInvocationId (DescribeStackEvents, 2025), the HookResultId of its hook result
    invocation = hooked[0]["HookInvocationId"]
    assert hooked[-1]["HookInvocationId"] == invocation
    result = cfn.get_hook_result(HookResultId=invocation)
    assert (result["TypeName"], result["Status"], result["Target"]["TargetId"]) == (HOOK, "HOOK_COMPLETE_FAILED", "Bucket")
    pages = cfn.get_paginator("describe_events").paginate(StackName="suspended")  # its OperationEvents have no such field
    assert any(e.get("HookStatus") == "HOOK_COMPLETE_FAILED" for page in pages for e in page["OperationEvents"])
    events = list(reversed(cfn.describe_stack_events(StackName="suspended")["StackEvents"]))
    failed = [e for e in events if e.get("ResourceStatus") == "CREATE_FAILED"]
    assert failed[0]["ResourceStatusReason"] == f"The following hook(s) failed: [{HOOK}]"
    note = next(e["PhysicalResourceId"] for e in events if e["LogicalResourceId"] == "Note" and e.get("ResourceStatus") == "CREATE_COMPLETE")
    with pytest.raises(ClientError, match="ResourceNotFoundException"):  # the note made before the bucket was deleted
        cloudcontrol.get_resource(TypeName="Cfnrun::Sample::Note", Identifier=note)

    assert _deploy(cfn, "enabled", "Enabled") == "CREATE_COMPLETE"
    assert [(e["HookStatus"], e["HookStatusReason"]) for e in _hook_events(cfn, "enabled")][-1] == (
        "HOOK_COMPLETE_SUCCEEDED", "Hook succeeded with message: versioning Enabled, tags enough"
    )
    # once its hooks let it through, the resource's creation starts with the service's own event (the Hooks user guide)
    events = list(reversed(cfn.describe_stack_events(StackName="enabled")["StackEvents"]))
    bucket = [(e["ResourceStatus"], e.get("HookStatus"), e.get("ResourceStatusReason")) for e in events if e["LogicalResourceId"] == "Bucket"]
    assert bucket == [
        ("CREATE_IN_PROGRESS", None, None),
        ("CREATE_IN_PROGRESS", "HOOK_IN_PROGRESS", None),
        ("CREATE_IN_PROGRESS", "HOOK_COMPLETE_SUCCEEDED", None),
        ("CREATE_IN_PROGRESS", None, "Hook invocations complete.  Resource creation initiated"),
        ("CREATE_IN_PROGRESS", None, "Resource creation Initiated"),
        ("CREATE_COMPLETE", None, None),
    ]
    note = [e.get("ResourceStatusReason") for e in events if e["LogicalResourceId"] == "Note"]
    assert "Hook invocations complete.  Resource creation initiated" not in note  # no hook targets a note
    # the hook's calls are in its project's history, as stack operations
    history = cfnrun("history", cwd=server.folder / "versioning_hook")  # type: ignore[attr-defined]
    assert "CREATE_PRE_PROVISION" in history.stdout, history.stdout + history.stderr


def test_the_type_configuration_sets_properties_failure_mode_and_status(server: ServerProcess) -> None:
    cfn, _ = _clients(server)
    _configure(cfn, FailureMode="FAIL", Properties={"MinTags": 2})
    assert _deploy(cfn, "fewtags", "Enabled") == "ROLLBACK_COMPLETE"
    assert _hook_events(cfn, "fewtags")[-1]["HookStatusReason"] == "Hook failed with message: a bucket needs at least 2 tag(s), found 1"

    _configure(cfn, FailureMode="WARN", Properties={"MinTags": 0})
    assert _deploy(cfn, "warned", "Suspended") == "CREATE_COMPLETE"
    warned = _hook_events(cfn, "warned")[-1]
    assert warned["HookStatus"] == "HOOK_COMPLETE_FAILED" and warned["HookFailureMode"] == "WARN"
    assert "bucket versioning must be Enabled (found Suspended)" in warned["HookStatusReason"]

    _configure(cfn, HookInvocationStatus="DISABLED", FailureMode="FAIL")
    assert _deploy(cfn, "unhooked", "Suspended") == "CREATE_COMPLETE"
    assert _hook_events(cfn, "unhooked") == []

    with pytest.raises(ClientError, match="MinTags"):
        _configure(cfn, FailureMode="FAIL", Properties={"MinTags": "many"})
    with pytest.raises(ClientError, match="FailureMode"):
        _configure(cfn, FailureMode="SOMETIMES")
    # the Hooks user guide's target filters: Targets, or TargetNames/Actions/InvocationPoints, never both
    both = {"Actions": ["CREATE"], "Targets": [{"TargetName": "AWS::S3::Bucket", "Action": "UPDATE", "InvocationPoint": "PRE_PROVISION"}]}
    with pytest.raises(ClientError, match="TargetFilters cannot have both Targets and Actions"):
        _configure(cfn, FailureMode="FAIL", TargetFilters=both)
