"""Pre-deployment validation as the service runs it in 2026, through a real ``cfnrun serve`` and boto3 (issue #29 §3).

Property syntax (your type's schema) and resource-name conflicts stop CreateChangeSet, CreateStack
and UpdateStack before any resource is touched: a change set that fails ends FAILED and cannot be
executed, with the service's status reason; the failures are VALIDATION_ERROR events of the
operation in DescribeEvents, under the OperationId every stack operation now has;
``DisableValidation`` skips it. One serve (the note sample, moto for AWS::* types) answers every test
of the module; each test works on its own stack names.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from botocore.exceptions import ClientError

from conftest import LOCAL_STATE, SAMPLES, ServerProcess, wait_until

NOTE = "Cfnrun::Sample::Note"
FAST = {"Delay": 0.1, "MaxAttempts": 600}
SETTLE_SECONDS = 60.0  # a stack of a few resources settles in well under a second; a loaded CI machine is slower
PROPERTY_VALIDATION = "AWS::EarlyValidation::PropertyValidation"
RESOURCE_EXISTENCE = "AWS::EarlyValidation::ResourceExistenceCheck"


def _failed(*names: str) -> str:
    return (
        f"The following hook(s)/validation failed: [{', '.join(names)}]. "
        "To troubleshoot Early Validation errors, use the DescribeEvents API for detailed failure information."
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    note = tmp_path_factory.mktemp("validation") / "note"
    shutil.copytree(SAMPLES / "note", note, ignore=LOCAL_STATE)
    process = ServerProcess(note, "--no-reload", "--moto")
    yield process
    process.stop()


@pytest.fixture
def cfn(server: ServerProcess) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "cloudformation", endpoint_url=server.url, region_name="us-east-1", aws_access_key_id="testing",
        aws_secret_access_key="testing", config=Config(retries={"max_attempts": 0}),
    )


# The priority comes from a parameter: the template is well formed, only its value breaks the type's schema (maximum 5).
PRIORITY = json.dumps({
    "Parameters": {"Priority": {"Type": "Number", "Default": 1}},
    "Resources": {
        "Fine": {"Type": NOTE, "Properties": {"Title": "fine"}},
        "Urgent": {"Type": NOTE, "Properties": {"Title": "urgent", "Priority": {"Ref": "Priority"}}},
    },
})
TOO_HIGH = [{"ParameterKey": "Priority", "ParameterValue": "9"}]


def _bucket(*names: str) -> str:
    return json.dumps({"Resources": {f"Bucket{i}": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": n}} for i, n in enumerate(names)}})


def _validation_errors(events: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [e for e in events if e["EventType"] == "VALIDATION_ERROR"]


def _settled(cfn: Any, stack: str) -> Dict[str, Any]:
    """The stack once its operation has ended, however it ended."""
    found: List[Dict[str, Any]] = []

    def ended() -> bool:
        found[:] = cfn.describe_stacks(StackName=stack)["Stacks"]
        return not found[0]["StackStatus"].endswith("_IN_PROGRESS")

    wait_until(ended, SETTLE_SECONDS, f"stack {stack} to settle")
    return found[0]


def test_a_change_set_that_breaks_a_types_schema_fails_and_cannot_be_executed(cfn: Any) -> None:
    made = cfn.create_change_set(StackName="schema", ChangeSetName="urgent", ChangeSetType="CREATE", TemplateBody=PRIORITY, Parameters=TOO_HIGH)
    with pytest.raises(Exception, match="FAILED"):
        cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=made["Id"], WaiterConfig=FAST)
    described = cfn.describe_change_set(ChangeSetName=made["Id"])
    assert (described["Status"], described["ExecutionStatus"]) == ("FAILED", "UNAVAILABLE")
    assert described["StatusReason"] == _failed(PROPERTY_VALIDATION)
    with pytest.raises(ClientError) as refused:
        cfn.execute_change_set(ChangeSetName=made["Id"])
    assert refused.value.response["Error"]["Code"] == "InvalidChangeSetStatus"

    [error] = cfn.describe_events(ChangeSetName=made["Id"])["OperationEvents"]
    assert error["EventType"] == "VALIDATION_ERROR"
    assert (error["OperationType"], error["OperationStatus"]) == ("CREATE_CHANGESET", "FAILED")
    assert (error["LogicalResourceId"], error["ResourceType"], error["StackId"]) == ("Urgent", NOTE, made["StackId"])
    assert (error["ValidationName"], error["ValidationStatus"], error["ValidationFailureMode"]) == (PROPERTY_VALIDATION, "FAILED", "FAIL")
    assert error["ValidationPath"] == "/Resources/Urgent/Properties/Priority"
    assert error["ValidationStatusReason"] == "failed validation constraint for keyword [maximum]"  # the value never shown
    assert error["OperationId"]
    assert cfn.describe_events(OperationId=error["OperationId"])["OperationEvents"] == [error]

    # DisableValidation: the same change set is made, and would fail only when its resource is provisioned.
    unchecked = cfn.create_change_set(
        StackName="schema", ChangeSetName="unchecked", ChangeSetType="CREATE", TemplateBody=PRIORITY, Parameters=TOO_HIGH, DisableValidation=True,
    )
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=unchecked["Id"], WaiterConfig=FAST)
    assert cfn.describe_change_set(ChangeSetName=unchecked["Id"])["ExecutionStatus"] == "AVAILABLE"
    assert cfn.describe_events(ChangeSetName=unchecked["Id"])["OperationEvents"] == []


def test_create_stack_stops_before_any_resource_and_says_why_under_its_operation_id(cfn: Any) -> None:
    created = cfn.create_stack(StackName="stopped", TemplateBody=PRIORITY, Parameters=TOO_HIGH)
    operation = created["OperationId"]
    stack = _settled(cfn, "stopped")
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE"
    assert stack["LastOperations"] == [{"OperationType": "CREATE_STACK", "OperationId": operation}]
    stack_events = cfn.describe_stack_events(StackName="stopped")["StackEvents"]
    assert {e["LogicalResourceId"] for e in stack_events} == {"stopped"}  # not one resource touched
    assert {e["OperationId"] for e in stack_events} == {operation}
    assert _failed(PROPERTY_VALIDATION) in [e.get("ResourceStatusReason") for e in stack_events]

    events = cfn.describe_events(StackName="stopped")["OperationEvents"]
    assert {(e["OperationId"], e["OperationType"], e["OperationStatus"]) for e in events} == {(operation, "CREATE_STACK", "FAILED")}
    [error] = _validation_errors(events)
    assert (error["ValidationName"], error["ValidationPath"]) == (PROPERTY_VALIDATION, "/Resources/Urgent/Properties/Priority")
    failed = cfn.describe_events(OperationId=operation, Filters={"FailedEvents": True})["OperationEvents"]
    assert error in failed and all(e["EventType"] != "PROGRESS_EVENT" for e in failed)

    # DisableValidation skips it: the type's own check stops the resource when it is provisioned, and the stack rolls back.
    unchecked = cfn.create_stack(StackName="unchecked", TemplateBody=PRIORITY, Parameters=TOO_HIGH, DisableValidation=True)
    assert _settled(cfn, "unchecked")["StackStatus"] == "ROLLBACK_COMPLETE"
    statuses = [e["ResourceStatus"] for e in cfn.describe_stack_events(StackName="unchecked")["StackEvents"] if e["LogicalResourceId"] == "Urgent"]
    assert "CREATE_FAILED" in statuses
    assert _validation_errors(cfn.describe_events(OperationId=unchecked["OperationId"])["OperationEvents"]) == []


def test_a_name_another_stacks_resource_has_stops_a_change_set_and_an_update(cfn: Any) -> None:
    cfn.create_stack(StackName="owner", TemplateBody=_bucket("cfnrun-taken-name"))
    assert _settled(cfn, "owner")["StackStatus"] == "CREATE_COMPLETE"
    cfn.create_stack(StackName="latecomer", TemplateBody=_bucket("cfnrun-own-name"))
    assert _settled(cfn, "latecomer")["StackStatus"] == "CREATE_COMPLETE"

    made = cfn.create_change_set(StackName="latecomer", ChangeSetName="take", TemplateBody=_bucket("cfnrun-own-name", "cfnrun-taken-name"))
    with pytest.raises(Exception, match="FAILED"):
        cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=made["Id"], WaiterConfig=FAST)
    assert cfn.describe_change_set(ChangeSetName=made["Id"])["StatusReason"] == _failed(RESOURCE_EXISTENCE)
    [error] = cfn.describe_events(ChangeSetName="take", StackName="latecomer")["OperationEvents"]
    assert (error["ValidationName"], error["LogicalResourceId"], error["ResourceType"]) == (RESOURCE_EXISTENCE, "Bucket1", "AWS::S3::Bucket")
    assert error["ValidationPath"] == "/Resources/Bucket1/Properties/BucketName"
    assert error["ValidationStatusReason"] == "Resource of type 'AWS::S3::Bucket' with identifier 'cfnrun-taken-name' already exists."

    updated = cfn.update_stack(StackName="latecomer", TemplateBody=_bucket("cfnrun-own-name", "cfnrun-taken-name"))
    stack = _settled(cfn, "latecomer")
    assert stack["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    assert stack["LastOperations"][0] == {"OperationType": "UPDATE_STACK", "OperationId": updated["OperationId"]}
    touched = {e["LogicalResourceId"] for e in cfn.describe_stack_events(StackName="latecomer")["StackEvents"]}
    assert "Bucket1" not in touched
    [error] = _validation_errors(cfn.describe_events(OperationId=updated["OperationId"])["OperationEvents"])
    assert (error["ValidationName"], error["OperationType"]) == (RESOURCE_EXISTENCE, "UPDATE_STACK")


def test_a_no_echo_value_the_validation_refuses_is_masked_in_its_event(cfn: Any) -> None:
    secret = json.dumps({
        "Parameters": {"Folder": {"Type": "String", "NoEcho": True}},
        "Resources": {"Note": {"Type": NOTE, "Properties": {"Title": "t", "Folder": {"Ref": "Folder"}}}},
    })
    made = cfn.create_change_set(
        StackName="masked", ChangeSetName="hidden", ChangeSetType="CREATE", TemplateBody=secret,
        Parameters=[{"ParameterKey": "Folder", "ParameterValue": "Not A Folder hunter4"}],
    )
    with pytest.raises(Exception, match="FAILED"):
        cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=made["Id"], WaiterConfig=FAST)
    [error] = cfn.describe_events(ChangeSetName=made["Id"])["OperationEvents"]
    assert error["ValidationPath"] == "/Resources/Note/Properties/Folder"
    assert "hunter4" not in json.dumps(error, default=str)
    assert error["ValidationStatusReason"] == "failed validation constraint for keyword [pattern]"


def test_the_aws_cli_creates_a_stack_past_the_validation_or_shows_its_events(cfn: Any, server: ServerProcess, tmp_path: Path) -> None:
    aws = shutil.which("aws", path=os.path.dirname(sys.executable)) or shutil.which("aws")
    assert aws, "the aws CLI is a test dependency"
    template = tmp_path / "priority.json"
    template.write_text(PRIORITY, encoding="utf-8")
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}

    def aws_cli(*args: str) -> Dict[str, Any]:
        done = subprocess.run([aws, "cloudformation", *args, "--endpoint-url", server.url], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return dict(json.loads(done.stdout)) if done.stdout.strip() else {}

    stopped = aws_cli("create-stack", "--stack-name", "cli-stopped", "--template-body", f"file://{template}", "--parameters", "ParameterKey=Priority,ParameterValue=9")
    assert _settled(cfn, "cli-stopped")["StackStatus"] == "ROLLBACK_COMPLETE"
    events = aws_cli("describe-events", "--operation-id", stopped["OperationId"], "--filters", "FailedEvents=true")["OperationEvents"]
    assert [(e["EventType"], e["ValidationName"]) for e in _validation_errors(events)] == [("VALIDATION_ERROR", PROPERTY_VALIDATION)]

    fine = aws_cli("create-stack", "--stack-name", "cli-fine", "--template-body", f"file://{template}", "--disable-validation")
    assert _settled(cfn, "cli-fine")["StackStatus"] == "CREATE_COMPLETE"
    assert fine["OperationId"] and _validation_errors(aws_cli("describe-events", "--stack-name", "cli-fine")["OperationEvents"]) == []


# An output that reads an attribute its resource's type does not have. Not the pre-deployment validation's (no
# VALIDATION_ERROR, DisableValidation does not skip it): the service refuses the template as the operation starts, before
# any resource, as LocalStack's test_invalid_getatt_fails recorded it against AWS (its change set was made and executed).
def _unsupported(path: str, type_name: str, attribute: str) -> str:
    return f"[Error] {path}: Resource type {type_name} does not support attribute {{{attribute}}}"


def _history(cfn: Any, stack: str) -> List[Tuple[str, str, Optional[str]]]:
    """The stack's events, oldest first: (LogicalResourceId, ResourceStatus, ResourceStatusReason)."""
    events = cfn.describe_stack_events(StackName=stack)["StackEvents"]
    return [(e["LogicalResourceId"], e["ResourceStatus"], e.get("ResourceStatusReason")) for e in reversed(events)]


TOPIC_OUTPUTS = json.dumps({
    "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}, "Note": {"Type": NOTE, "Properties": {"Title": "read"}}},
    "Outputs": {
        "Name": {"Value": {"Fn::GetAtt": ["Topic", "TopicName"]}},  # a property of the type's schema: fine
        "Id": {"Value": {"Fn::GetAtt": "Note.NoteId"}},  # a readOnly property of your type: fine
        "Invalid": {"Value": {"Fn::Join": ["-", ["topic", {"Fn::GetAtt": ["Topic", "Invalid"]}]]}},
    },
})


def test_an_output_reading_an_attribute_its_type_lacks_stops_create_stack_before_any_resource(cfn: Any) -> None:
    reason = _unsupported("/Outputs/Invalid/Value/Fn::Join/1/1/Fn::GetAtt", "AWS::SNS::Topic", "Invalid")
    cfn.create_stack(StackName="lacking", TemplateBody=TOPIC_OUTPUTS)
    assert _settled(cfn, "lacking")["StackStatus"] == "ROLLBACK_COMPLETE"
    assert _history(cfn, "lacking") == [
        ("lacking", "CREATE_IN_PROGRESS", "User Initiated"),
        ("lacking", "ROLLBACK_IN_PROGRESS", f"{reason}. Rollback requested by user."),
        ("lacking", "ROLLBACK_COMPLETE", None),
    ]
    assert cfn.list_stack_resources(StackName="lacking")["StackResourceSummaries"] == []
    # the refusing event's DetailedStatus says its reason shows where the template is wrong (StackEvent, OperationEvent)
    detailed = {e["ResourceStatus"]: e.get("DetailedStatus") for e in cfn.describe_stack_events(StackName="lacking")["StackEvents"]}
    assert detailed == {"CREATE_IN_PROGRESS": None, "ROLLBACK_IN_PROGRESS": "VALIDATION_FAILED", "ROLLBACK_COMPLETE": None}
    events = cfn.describe_events(StackName="lacking")["OperationEvents"]
    assert _validation_errors(events) == []
    assert [e["ResourceStatus"] for e in events if e.get("DetailedStatus") == "VALIDATION_FAILED"] == ["ROLLBACK_IN_PROGRESS"]

    # DisableValidation does not skip it; with DisableRollback the stack ends CREATE_FAILED with the reason alone
    cfn.create_stack(StackName="lacking-kept", TemplateBody=TOPIC_OUTPUTS, DisableValidation=True, DisableRollback=True)
    stack = _settled(cfn, "lacking-kept")
    assert (stack["StackStatus"], stack["StackStatusReason"]) == ("CREATE_FAILED", reason)
    [failed] = [e for e in cfn.describe_stack_events(StackName="lacking-kept")["StackEvents"] if e["ResourceStatus"] == "CREATE_FAILED"]
    assert failed["DetailedStatus"] == "VALIDATION_FAILED"
    assert cfn.list_stack_resources(StackName="lacking-kept")["StackResourceSummaries"] == []


def test_a_change_set_reading_a_property_your_type_does_not_make_readonly_is_made_and_its_execution_stops(cfn: Any) -> None:
    template = json.dumps({
        "Resources": {"Note": {"Type": NOTE, "Properties": {"Title": "read", "Folder": "inbox"}}},
        "Outputs": {"Folder": {"Value": {"Fn::Sub": "in ${Note.Folder}"}}},  # Folder is a property, not a readOnly one
    })
    made = cfn.create_change_set(StackName="unreadable", ChangeSetName="make", ChangeSetType="CREATE", TemplateBody=template)
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=made["Id"], WaiterConfig=FAST)
    assert cfn.describe_change_set(ChangeSetName=made["Id"])["ExecutionStatus"] == "AVAILABLE"
    cfn.execute_change_set(ChangeSetName=made["Id"])
    assert _settled(cfn, "unreadable")["StackStatus"] == "ROLLBACK_COMPLETE"
    reason = _unsupported("/Outputs/Folder/Value/Fn::Sub", NOTE, "Folder")
    assert [(status, why) for _, status, why in _history(cfn, "unreadable")] == [  # the recording's sequence
        ("REVIEW_IN_PROGRESS", "User Initiated"),
        ("CREATE_IN_PROGRESS", "User Initiated"),
        ("ROLLBACK_IN_PROGRESS", f"{reason}. Rollback requested by user."),
        ("ROLLBACK_COMPLETE", None),
    ]
    assert cfn.describe_change_set(ChangeSetName=made["Id"])["ExecutionStatus"] == "EXECUTE_FAILED"


def test_an_update_whose_output_reads_an_attribute_its_type_lacks_rolls_back_before_any_resource(cfn: Any) -> None:
    def noted(title: str, output: str) -> str:
        return json.dumps({"Resources": {"Note": {"Type": NOTE, "Properties": {"Title": title}}}, "Outputs": {"Out": {"Value": {"Fn::GetAtt": ["Note", output]}}}})

    cfn.create_stack(StackName="kept-output", TemplateBody=noted("first", "NoteId"))
    created = _settled(cfn, "kept-output")
    assert created["StackStatus"] == "CREATE_COMPLETE"
    before = len(_history(cfn, "kept-output"))
    cfn.update_stack(StackName="kept-output", TemplateBody=noted("second", "Nope"))
    stack = _settled(cfn, "kept-output")
    assert stack["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    assert stack["Outputs"] == created["Outputs"]
    update = _history(cfn, "kept-output")[before:]
    assert {logical_id for logical_id, _, _ in update} == {"kept-output"}  # the note was not touched
    assert update[:2] == [
        ("kept-output", "UPDATE_IN_PROGRESS", "User Initiated"),
        ("kept-output", "UPDATE_ROLLBACK_IN_PROGRESS", _unsupported("/Outputs/Out/Value/Fn::GetAtt", NOTE, "Nope")),
    ]
    newest = cfn.describe_stack_events(StackName="kept-output")["StackEvents"]
    assert [e["ResourceStatus"] for e in newest if e.get("DetailedStatus")] == ["UPDATE_ROLLBACK_IN_PROGRESS"]


def test_a_resource_reading_a_property_your_type_does_not_make_readonly_fails_as_one_reading_no_property(cfn: Any) -> None:
    # Fn::GetAtt of a registry type reads its readOnly properties: in a resource's properties that is found when it runs
    template = json.dumps({"Resources": {
        "First": {"Type": NOTE, "Properties": {"Title": "first"}},
        "Second": {"Type": NOTE, "Properties": {"Title": {"Fn::GetAtt": ["First", "Title"]}}},
    }})
    cfn.create_stack(StackName="title-read", TemplateBody=template)
    assert _settled(cfn, "title-read")["StackStatus"] == "ROLLBACK_COMPLETE"
    failed = [(lid, why) for lid, status, why in _history(cfn, "title-read") if status == "CREATE_FAILED"]
    assert failed == [("Second", f"Requested attribute Title does not exist in schema for {NOTE} (at Resources.Second.Properties.Title)")]
