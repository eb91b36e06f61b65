"""Lambda hooks in local stacks: an AWS::CloudFormation::LambdaHook makes a served function a hook, with real clients.

One serve (per module and xdist worker) serves the note sample, the hook functions of
``fixtures/lambda_hook`` and an embedded moto, on the virtual clock and with every limit scaled by
0.1 (a Lambda hook's 30 s answer limit is 3 s). A first stack declares the Lambda hooks, each
limited by StackFilters to the stacks of one test; each test then creates its own stacks of a note
and a bucket whose versioning comes from a Parameter. The policy: versioning must be Enabled.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Any, Dict, Iterator, List, Tuple

import pytest
from botocore.exceptions import WaiterError

from conftest import FIXTURES, LOCAL_STATE, SAMPLES, ServerProcess

FAST = {"Delay": 0.1, "MaxAttempts": 900}
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
ROLE = "arn:aws:iam::123456789012:role/lambda-hook-execution"
# logical id → (Alias, LambdaFunction, FailureMode, the stacks it targets)
HOOKS: Dict[str, Tuple[str, str, str, List[str]]] = {
    "VersioningHook": (
        "Cfnrun::Versioning::Hook", "arn:aws:lambda:us-east-1:123456789012:function:VersioningPolicyFunction", "FAIL",
        ["suspended", "enabled"],
    ),
    "WarningHook": ("Cfnrun::Versioning::Warning", "VersioningPolicyFunction", "WARN", ["warned"]),
    "PatientHook": ("Cfnrun::Versioning::Patient", "PatientPolicyFunction", "FAIL", ["patient-suspended", "patient-enabled"]),
    "RaisingHook": ("Cfnrun::Broken::Raising", "RaisingFunction", "FAIL", ["raising"]),
    "SlowHook": ("Cfnrun::Broken::Slow", "SlowFunction", "FAIL", ["slow"]),
    "GarbageHook": ("Cfnrun::Broken::Garbage", "GarbageFunction", "FAIL", ["garbage"]),
    "UnknownStatusHook": ("Cfnrun::Broken::Unknown", "UnknownStatusFunction", "FAIL", ["unknown-status"]),
    "StubbornHook": ("Cfnrun::Broken::Stubborn", "StubbornFunction", "FAIL", ["stubborn"]),
    "RaisingWarningHook": ("Cfnrun::Broken::RaisingWarn", "RaisingFunction", "WARN", ["raising-warned"]),
}
BUCKET_STACK = """
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Versioning:
    Type: String
    AllowedValues: [Enabled, Suspended]
Resources:
  Note:
    Type: Cfnrun::Sample::Note
    Properties:
      Title: !Sub "the notes of ${AWS::StackName}"
  Bucket:
    Type: AWS::S3::Bucket
    DependsOn: Note
    Properties:
      BucketName: !Sub "lambda-hooked-${AWS::StackName}"
      VersioningConfiguration:
        Status: !Ref Versioning
"""


def lambda_hook(alias: str, function: str, mode: str, stacks: List[str]) -> Dict[str, Any]:
    return {
        "Type": "AWS::CloudFormation::LambdaHook",
        "Properties": {
            "Alias": alias,
            "LambdaFunction": function,
            "ExecutionRole": ROLE,
            "FailureMode": mode,
            "HookStatus": "ENABLED",
            "TargetOperations": ["RESOURCE"],
            "TargetFilters": {"TargetNames": ["AWS::S3::Bucket"]},
            "StackFilters": {"FilteringCriteria": "ALL", "StackNames": {"Include": stacks}},
        },
    }


class Hooked:
    """The module's serve, with the Lambda hooks stack created, and a CloudFormation client on it."""

    def __init__(self, server: ServerProcess) -> None:
        import boto3

        self.server = server
        self.cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)

    def events(self, stack: str) -> List[Dict[str, Any]]:
        pages = self.cloudformation.get_paginator("describe_stack_events").paginate(StackName=stack)
        return list(reversed([e for page in pages for e in page["StackEvents"]]))

    def status(self, stack: str) -> str:
        return str(self.cloudformation.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"])

    def create(self, stack: str, body: str, **parameters: str) -> str:
        """Create the stack and wait for it to end (complete or rolled back); its status."""
        given = [{"ParameterKey": key, "ParameterValue": value} for key, value in parameters.items()]
        self.cloudformation.create_stack(StackName=stack, TemplateBody=body, Parameters=given)
        return self.settled(stack, "stack_create_complete")

    def settled(self, stack: str, waiter: str) -> str:
        """The stack's status once ``waiter`` stops waiting: complete, or rolled back (the waiter's failure state)."""
        try:
            self.cloudformation.get_waiter(waiter).wait(StackName=stack, WaiterConfig=FAST)
        except WaiterError:
            pass
        return self.status(stack)

    def hook_events(self, stack: str) -> List[Dict[str, Any]]:
        return [e for e in self.events(stack) if e.get("HookType")]


@pytest.fixture(scope="module")
def hooked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hooked]:
    folder = tmp_path_factory.mktemp("lambda_hooks")
    shutil.copytree(SAMPLES / "note", folder / "note", ignore=LOCAL_STATE)
    shutil.copytree(FIXTURES / "lambda_hook", folder / "lambda_hook")
    process = subprocess.Popen(
        [
            sys.executable, "-m", "cfnrun", "serve", "--port", "0", "--no-reload", "--moto", "--virtual-clock", "--time-scale", "0.1",
            "--provider", "note", "--functions", "lambda_hook/template.yaml",
        ],
        cwd=str(folder), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "NO_COLOR": "1"},
    )
    server = ServerProcess(folder, process=process)
    try:
        hooked = Hooked(server)
        template = {"Resources": {logical_id: lambda_hook(*declared) for logical_id, declared in HOOKS.items()}}
        assert hooked.create("lambda-hooks", json.dumps(template)) == "CREATE_COMPLETE", hooked.events("lambda-hooks")
        yield hooked
    finally:
        server.stop()


def test_a_suspended_bucket_rolls_back_with_the_hooks_message_and_an_enabled_one_is_created(hooked: Hooked) -> None:
    assert hooked.create("suspended", BUCKET_STACK, Versioning="Suspended") == "ROLLBACK_COMPLETE"
    events = hooked.events("suspended")
    verdict = [e for e in events if e.get("HookStatus") == "HOOK_COMPLETE_FAILED"]
    assert len(verdict) == 1 and verdict[0]["LogicalResourceId"] == "Bucket", events
    assert verdict[0]["HookType"] == "Cfnrun::Versioning::Hook"
    assert verdict[0]["HookInvocationPoint"] == "PRE_PROVISION" and verdict[0]["HookFailureMode"] == "FAIL"
    # its hook result names the public hook the Alias activates (GetHookResult's OriginalTypeName, botocore's model)
    result = hooked.cloudformation.get_hook_result(HookResultId=verdict[0]["HookInvocationId"])
    assert (result["TypeName"], result["OriginalTypeName"]) == ("Cfnrun::Versioning::Hook", "AWS::Hooks::LambdaHook")
    reason = verdict[0]["HookStatusReason"]
    assert reason.startswith("Hook failed with message: Bucket Bucket must have versioning Enabled, not Suspended")
    assert "Annotations: BucketVersioning FAILED HIGH" in reason and "→ fix: set VersioningConfiguration.Status to Enabled" in reason
    failed = [e for e in events if e["LogicalResourceId"] == "Bucket" and e["ResourceStatus"] == "CREATE_FAILED"]
    assert "Cfnrun::Versioning::Hook" in failed[0]["ResourceStatusReason"]
    note = [e["ResourceStatus"] for e in events if e["LogicalResourceId"] == "Note"]
    assert note[-1] == "DELETE_COMPLETE" and "CREATE_COMPLETE" in note  # created before the bucket, deleted by the rollback

    assert hooked.create("enabled", BUCKET_STACK, Versioning="Enabled") == "CREATE_COMPLETE"
    statuses = [(e["HookStatus"], e.get("HookStatusReason")) for e in hooked.hook_events("enabled")]
    assert statuses == [("HOOK_IN_PROGRESS", "Invoking hook"), ("HOOK_COMPLETE_SUCCEEDED", "Hook succeeded with message: versioning is Enabled")]
    hooked.server.has_printed(r"VersioningPolicyFunction lambda hook Cfnrun::Versioning::Hook CREATE_PRE_PROVISION enabled Bucket → SUCCESS")
    logged = hooked.server.has_printed(r'│ \{.*"lambda-hooked-enabled"')  # the function prints the request it was sent
    request = json.loads(logged.split("│ ", 1)[1])
    assert request["hookModel"] == {"LambdaFunction": HOOKS["VersioningHook"][1]}
    assert request["actionInvocationPoint"] == "CREATE_PRE_PROVISION" and request["requestContext"] == {"invocation": 1, "callbackContext": None}
    assert request["requestData"] == {
        "targetName": "AWS::S3::Bucket", "targetType": "AWS::S3::Bucket", "targetLogicalId": "Bucket",
        "targetModel": {"resourceProperties": {"BucketName": "lambda-hooked-enabled", "VersioningConfiguration": {"Status": "Enabled"}}},
    }
    assert request["stackId"].startswith("arn:aws:cloudformation:us-east-1:123456789012:stack/enabled/")
    assert request["changeSetId"] is None  # CreateStack: no change set (the Lambda hooks chapter)

    # An update to Suspended is refused before the bucket is touched (UPDATE_PRE_PROVISION), and rolled back.
    hooked.cloudformation.update_stack(
        StackName="enabled", UsePreviousTemplate=True, Parameters=[{"ParameterKey": "Versioning", "ParameterValue": "Suspended"}]
    )
    assert hooked.settled("enabled", "stack_update_complete") == "UPDATE_ROLLBACK_COMPLETE"
    refused = [e for e in hooked.hook_events("enabled") if e["HookStatus"] == "HOOK_COMPLETE_FAILED"]
    assert [e["ResourceStatus"] for e in refused] == ["UPDATE_IN_PROGRESS"]
    assert refused[0]["HookStatusReason"].startswith("Hook failed with message: Bucket Bucket must have versioning Enabled, not Suspended")
    logged = hooked.server.has_printed(r'│ \{.*"actionInvocationPoint": "UPDATE_PRE_PROVISION".*"lambda-hooked-enabled"')
    model = json.loads(logged.split("│ ", 1)[1])["requestData"]["targetModel"]
    assert model["resourceProperties"]["VersioningConfiguration"] == {"Status": "Suspended"}  # proposed
    assert model["previousResourceProperties"]["VersioningConfiguration"] == {"Status": "Enabled"}  # what it has now

    # The same update from a change set: the hook's request names the change set whose execution asks it (changeSetId).
    cfn = hooked.cloudformation
    suspend = [{"ParameterKey": "Versioning", "ParameterValue": "Suspended"}]
    change_set = cfn.create_change_set(StackName="enabled", ChangeSetName="suspend", UsePreviousTemplate=True, Parameters=suspend)
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=change_set["Id"], WaiterConfig=FAST)
    cfn.execute_change_set(ChangeSetName=change_set["Id"])
    assert hooked.settled("enabled", "stack_update_complete") == "UPDATE_ROLLBACK_COMPLETE"
    logged = hooked.server.has_printed(r'│ \{.*"changeSetId": "arn:aws:cloudformation:us-east-1:123456789012:changeSet/suspend/')
    request = json.loads(logged.split("│ ", 1)[1])
    assert (request["changeSetId"], request["actionInvocationPoint"]) == (change_set["Id"], "UPDATE_PRE_PROVISION")

    # Deleting the stack: the bucket's DELETE_PRE_PROVISION proposes no properties and gives the current ones as previous.
    cfn.delete_stack(StackName="enabled")
    cfn.get_waiter("stack_delete_complete").wait(StackName="enabled", WaiterConfig=FAST)
    logged = hooked.server.has_printed(r'│ \{.*"actionInvocationPoint": "DELETE_PRE_PROVISION".*"lambda-hooked-enabled"')
    assert json.loads(logged.split("│ ", 1)[1])["requestData"]["targetModel"] == {
        "resourceProperties": {}, "previousResourceProperties": {"BucketName": "lambda-hooked-enabled", "VersioningConfiguration": {"Status": "Enabled"}},
    }


def test_in_warn_mode_the_stack_goes_through_with_the_hooks_message_in_the_events(hooked: Hooked) -> None:
    assert hooked.create("warned", BUCKET_STACK, Versioning="Suspended") == "CREATE_COMPLETE"
    [verdict] = [e for e in hooked.hook_events("warned") if e["HookStatus"] != "HOOK_IN_PROGRESS"]
    assert verdict["HookStatus"] == "HOOK_COMPLETE_FAILED" and verdict["HookFailureMode"] == "WARN"
    # worded as in FAIL mode: the service's "Hook failed with message: ", with nothing of cfnrun's own after the hook's words
    assert verdict["HookStatusReason"].startswith("Hook failed with message: Bucket Bucket must have versioning Enabled, not Suspended")
    assert verdict["HookStatusReason"].endswith("→ fix: set VersioningConfiguration.Status to Enabled")


def test_in_progress_is_replayed_with_its_callback_context_after_the_delay_on_the_virtual_clock(hooked: Hooked) -> None:
    assert hooked.create("patient-suspended", BUCKET_STACK, Versioning="Suspended") == "ROLLBACK_COMPLETE"
    [verdict] = [e for e in hooked.hook_events("patient-suspended") if e["HookStatus"] == "HOOK_COMPLETE_FAILED"]
    assert verdict["HookStatusReason"] == (
        "Hook failed with message: Bucket Bucket must have versioning Enabled, not Suspended (invocation 2, callbackContext looked=Bucket)"
    )
    assert hooked.create("patient-enabled", BUCKET_STACK, Versioning="Enabled") == "CREATE_COMPLETE"
    assert any("invocation 2" in (e.get("HookStatusReason") or "") for e in hooked.hook_events("patient-enabled"))


@pytest.mark.parametrize(
    "stack, reason",
    [
        ("raising", "Lambda function RaisingFunction raised: RuntimeError: the policy store is unreachable"),
        ("slow", "Lambda function SlowFunction did not answer within the service's 30 s limit for a Lambda hook's answer scaled by --time-scale 0.1 (3 s)"),
        ("garbage", "Lambda function GarbageFunction did not answer as a Lambda hook: a Lambda hook answers with a JSON object"),
        ("unknown-status", "did not answer as a Lambda hook: hookStatus 'MAYBE' is not one of SUCCESS, FAILED, IN_PROGRESS"),
        ("stubborn", "Lambda function StubbornFunction answered IN_PROGRESS more than 3 times"),
    ],
)
def test_a_function_that_does_not_answer_as_a_hook_fails_the_hook_and_the_stack_rolls_back(hooked: Hooked, stack: str, reason: str) -> None:
    assert hooked.create(stack, BUCKET_STACK, Versioning="Enabled") == "ROLLBACK_COMPLETE"
    [failed] = [e for e in hooked.hook_events(stack) if e["HookStatus"] == "HOOK_FAILED"]
    assert reason in failed["HookStatusReason"], failed
    assert hooked.server.process.poll() is None  # serve keeps serving


def test_a_failing_function_in_warn_mode_lets_the_stack_through(hooked: Hooked) -> None:
    assert hooked.create("raising-warned", BUCKET_STACK, Versioning="Enabled") == "CREATE_COMPLETE"
    [failed] = [e for e in hooked.hook_events("raising-warned") if e["HookStatus"] == "HOOK_FAILED"]
    assert failed["HookStatusReason"].endswith("RuntimeError: the policy store is unreachable") and failed["HookFailureMode"] == "WARN"


def test_a_lambda_hook_whose_function_nothing_serves_fails_at_create_naming_the_served_functions(hooked: Hooked) -> None:
    template = {"Resources": {"Hook": lambda_hook("Cfnrun::Missing::Hook", "NoSuchFunction", "FAIL", ["nowhere"])}}
    assert hooked.create("unserved-hook", json.dumps(template)) == "ROLLBACK_COMPLETE"
    [failed] = [e for e in hooked.events("unserved-hook") if e["ResourceStatus"] == "CREATE_FAILED"]
    assert failed["LogicalResourceId"] == "Hook"
    reason = failed["ResourceStatusReason"]
    assert reason.startswith("Invalid LambdaFunction NoSuchFunction: cfnrun serves no such function")
    assert "--functions TEMPLATE" in reason and "VersioningPolicyFunction" in reason and "StubbornFunction" in reason
    assert hooked.status("lambda-hooks") == "CREATE_COMPLETE"  # serve keeps serving, the other hooks still active
