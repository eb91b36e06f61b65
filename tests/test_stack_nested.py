"""Nested stacks (AWS::CloudFormation::Stack) on ``cfnrun serve``: children from disk and from the endpoint's S3, run locally."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from botocore.exceptions import WaiterError

from conftest import LOCAL_STATE, SAMPLES
from stack_waits import FAST, outputs, settled

moto_server = pytest.importorskip("moto.server")

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}

CHILD = """\
Parameters:
  Title:
    Type: String
Resources:
  Note:
    Type: Cfnrun::Sample::Note
    Properties:
      Title: !Ref Title
Outputs:
  NoteId:
    Value: !GetAtt Note.NoteId
  Title:
    Value: !Ref Title
"""

PARENT = """\
Parameters:
  Word:
    Type: String
    Default: first
Resources:
  FromDisk:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: {disk}
      Parameters:
        Title: !Sub "disk ${{Word}}"
  FromS3:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: https://templates.s3.amazonaws.com/child.yaml
      Parameters:
        Title: !GetAtt FromDisk.Outputs.Title
Outputs:
  DiskTitle:
    Value: !GetAtt FromDisk.Outputs.Title
  S3Title:
    Value: !GetAtt FromS3.Outputs.Title
"""


def test_a_parent_with_a_child_on_disk_and_one_in_s3_is_created_updated_in_place_and_deleted(serve, tmp_path: Path, moto_url: str) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    (tmp_path / "child.yaml").write_text(CHILD)
    s3 = boto3.client("s3", endpoint_url=moto_url, **CREDENTIALS)
    s3.create_bucket(Bucket="templates")
    s3.put_object(Bucket="templates", Key="child.yaml", Body=CHILD.encode())
    server = serve(tmp_path / "note", "--no-reload", "--aws-endpoint", moto_url)
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)

    cloudformation.create_stack(StackName="parent", TemplateBody=PARENT.format(disk=tmp_path / "child.yaml"))
    settled(cloudformation, "parent", "stack_create_complete")
    assert outputs(cloudformation, "parent") == {"DiskTitle": "disk first", "S3Title": "disk first"}
    children = {r["LogicalResourceId"]: r["PhysicalResourceId"]
                for r in cloudformation.describe_stack_resources(StackName="parent")["StackResources"]}
    child = cloudformation.describe_stacks(StackName=children["FromDisk"])["Stacks"][0]
    assert child["StackName"].startswith("parent-FromDisk-") and child["StackStatus"] == "CREATE_COMPLETE"
    parent_id = cloudformation.describe_stacks(StackName="parent")["Stacks"][0]["StackId"]
    assert (child["ParentId"], child["RootId"]) == (parent_id, parent_id)
    assert "ParentId" not in cloudformation.describe_stacks(StackName="parent")["Stacks"][0]
    listed = {summary["StackId"]: summary for summary in cloudformation.list_stacks()["StackSummaries"]}
    assert (listed[child["StackId"]]["ParentId"], listed[child["StackId"]]["RootId"]) == (parent_id, parent_id)
    assert "ParentId" not in listed[parent_id]
    note_id = outputs(cloudformation, children["FromDisk"])["NoteId"]

    cloudformation.update_stack(StackName="parent", TemplateBody=PARENT.format(disk=tmp_path / "child.yaml"),
                                Parameters=[{"ParameterKey": "Word", "ParameterValue": "second"}])
    settled(cloudformation, "parent", "stack_update_complete")
    assert outputs(cloudformation, "parent") == {"DiskTitle": "disk second", "S3Title": "disk second"}
    after = {r["LogicalResourceId"]: r["PhysicalResourceId"]
             for r in cloudformation.describe_stack_resources(StackName="parent")["StackResources"]}
    assert after == children  # updated in place: the same child stacks
    assert outputs(cloudformation, children["FromDisk"])["NoteId"] == note_id

    cloudformation.delete_stack(StackName="parent")
    settled(cloudformation, "parent", "stack_delete_complete")
    for stack_id in children.values():
        assert cloudformation.describe_stacks(StackName=stack_id)["Stacks"][0]["StackStatus"] == "DELETE_COMPLETE"


def test_a_failing_child_rolls_the_parent_back_with_the_services_words(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    (tmp_path / "child.yaml").write_text(CHILD)
    server = serve(tmp_path / "note", "--no-reload")
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    parent = f"""\
Resources:
  Good:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: {tmp_path / "child.yaml"}
      Parameters: {{Title: fine}}
  Bad:
    Type: AWS::CloudFormation::Stack
    DependsOn: Good
    Properties:
      TemplateURL: {tmp_path / "child.yaml"}
      Parameters: {{Title: "{'x' * 200}"}}
"""
    cloudformation.create_stack(StackName="fails", TemplateBody=parent)
    with pytest.raises(WaiterError):  # the create waiter stops at ROLLBACK_COMPLETE, a failure state
        cloudformation.get_waiter("stack_create_complete").wait(StackName="fails", WaiterConfig=FAST)
    assert cloudformation.describe_stacks(StackName="fails")["Stacks"][0]["StackStatus"] == "ROLLBACK_COMPLETE"
    events = cloudformation.describe_stack_events(StackName="fails")["StackEvents"]
    bad = [e for e in events if e["LogicalResourceId"] == "Bad" and e["ResourceStatus"] == "CREATE_FAILED"]
    assert bad and bad[0]["ResourceStatusReason"].startswith("Embedded stack arn:aws:cloudformation:"), bad
    # the reason the child began its rollback with (here its pre-deployment validation's), as the service quotes it
    # ("... was not successfully created: The following resource(s) failed to create: [X]." in users' reports); not its status
    assert " was not successfully created: The following hook(s)/validation failed: [AWS::EarlyValidation::PropertyValidation]." \
        in bad[0]["ResourceStatusReason"], bad[0]["ResourceStatusReason"]
    good = [e for e in events if e["LogicalResourceId"] == "Good" and e["ResourceStatus"] == "DELETE_COMPLETE"]
    assert good, "the child that was created was not deleted by the parent's rollback"
    statuses = {s["StackName"].split("-")[1]: s["StackStatus"] for s in cloudformation.list_stacks()["StackSummaries"]
                if s["StackName"].startswith("fails-")}
    assert statuses == {"Good": "DELETE_COMPLETE", "Bad": "DELETE_COMPLETE"}


def test_a_child_stack_is_notified_as_its_resource_says_and_its_notification_arns_pseudo_parameter_says_so(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    (tmp_path / "told.yaml").write_text('Resources:\n  Handle:\n    Type: AWS::CloudFormation::WaitConditionHandle\n'
                                        'Outputs:\n  Topics:\n    Value: !Join ["", ["[", !Join [",", !Ref AWS::NotificationARNs], "]"]]\n')
    server = serve(tmp_path / "note", "--no-reload")
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    parent_topic, child_topic = "arn:aws:sns:us-east-1:123456789012:parent", "arn:aws:sns:us-east-1:123456789012:child"
    parent = f"""\
Resources:
  Told:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: {tmp_path / "told.yaml"}
      NotificationARNs: [{child_topic}]
  Untold:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: {tmp_path / "told.yaml"}
Outputs:
  Told:
    Value: !GetAtt Told.Outputs.Topics
  Untold:
    Value: !GetAtt Untold.Outputs.Topics
"""
    cloudformation.create_stack(StackName="notifying", TemplateBody=parent, NotificationARNs=[parent_topic])
    settled(cloudformation, "notifying", "stack_create_complete")
    assert outputs(cloudformation, "notifying") == {"Told": f"[{child_topic}]", "Untold": "[]"}
    children = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="notifying")["StackResources"]}
    assert cloudformation.describe_stacks(StackName=children["Told"])["Stacks"][0]["NotificationARNs"] == [child_topic]
