"""CreateChangeSet with IncludeNestedStacks: the nested stacks get change sets of their own, linked to the root's,
shown by DescribeChangeSet; executing the root executes them."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from conftest import LOCAL_STATE, SAMPLES
from stack_waits import FAST, outputs, settled

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
  Title:
    Value: !Ref Title
"""

PARENT = """\
Parameters:
  Word:
    Type: String
    Default: first
Resources:
  Child:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: {child}
      Parameters:
        Title: !Sub "note ${{Word}}"
Outputs:
  Title:
    Value: !GetAtt Child.Outputs.Title
"""


def test_a_change_set_with_nested_stacks_makes_shows_and_executes_the_childs_change_set(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    (tmp_path / "child.yaml").write_text(CHILD)
    server = serve(tmp_path / "note", "--no-reload")
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    parent = PARENT.format(child=tmp_path / "child.yaml")
    cloudformation.create_stack(StackName="parent", TemplateBody=parent)
    settled(cloudformation, "parent", "stack_create_complete")
    child_id = cloudformation.describe_stack_resource(StackName="parent", LogicalResourceId="Child")["StackResourceDetail"]["PhysicalResourceId"]

    root_id = cloudformation.create_change_set(
        StackName="parent", ChangeSetName="deep", TemplateBody=parent, IncludeNestedStacks=True,
        Parameters=[{"ParameterKey": "Word", "ParameterValue": "second"}],
    )["Id"]
    cloudformation.get_waiter("change_set_create_complete").wait(ChangeSetName=root_id, WaiterConfig=FAST)
    root = cloudformation.describe_change_set(ChangeSetName=root_id)
    assert root["IncludeNestedStacks"] is True and "ParentChangeSetId" not in root
    [change] = root["Changes"]
    nested_id = change["ResourceChange"]["ChangeSetId"]
    assert change["ResourceChange"]["LogicalResourceId"] == "Child" and change["ResourceChange"]["Action"] == "Modify"

    nested = cloudformation.describe_change_set(ChangeSetName=nested_id)
    assert nested["StackId"] == child_id and nested["Status"] == "CREATE_COMPLETE"
    assert (nested["ParentChangeSetId"], nested["RootChangeSetId"]) == (root_id, root_id)
    [inner] = nested["Changes"]
    assert (inner["ResourceChange"]["LogicalResourceId"], inner["ResourceChange"]["Action"]) == ("Note", "Modify")
    assert [p["ParameterValue"] for p in nested["Parameters"]] == ["note second"]
    listed = cloudformation.list_change_sets(StackName=child_id)["Summaries"]
    assert [(s["ChangeSetId"], s["RootChangeSetId"]) for s in listed] == [(nested_id, root_id)]

    for call in (cloudformation.execute_change_set, cloudformation.delete_change_set):  # only from the root, as the service says
        with pytest.raises(ClientError, match="is a nested change set"):
            call(ChangeSetName=nested_id)
    cloudformation.execute_change_set(ChangeSetName=root_id)
    settled(cloudformation, "parent", "stack_update_complete")
    assert outputs(cloudformation, "parent") == {"Title": "note second"}
    assert cloudformation.describe_change_set(ChangeSetName=nested_id)["ExecutionStatus"] == "EXECUTE_COMPLETE"
    assert cloudformation.describe_change_set(ChangeSetName=root_id)["ExecutionStatus"] == "EXECUTE_COMPLETE"

    # deleting a root change set deletes its nested ones
    cloudformation.create_change_set(StackName="parent", ChangeSetName="dropped", TemplateBody=parent, IncludeNestedStacks=True,
                                     Parameters=[{"ParameterKey": "Word", "ParameterValue": "third"}])
    cloudformation.get_waiter("change_set_create_complete").wait(StackName="parent", ChangeSetName="dropped", WaiterConfig=FAST)
    assert len(cloudformation.list_change_sets(StackName=child_id)["Summaries"]) == 2
    cloudformation.delete_change_set(StackName="parent", ChangeSetName="dropped")
    assert [s["ChangeSetId"] for s in cloudformation.list_change_sets(StackName=child_id)["Summaries"]] == [nested_id]

    cloudformation.delete_stack(StackName="parent")
    settled(cloudformation, "parent", "stack_delete_complete")


def test_a_new_parent_s_change_set_with_nested_stacks_makes_the_child_in_review_and_creates_it_on_execution(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    (tmp_path / "child.yaml").write_text(CHILD)
    server = serve(tmp_path / "note", "--no-reload")
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    root_id = cloudformation.create_change_set(StackName="fresh", ChangeSetName="first", ChangeSetType="CREATE",
                                               TemplateBody=PARENT.format(child=tmp_path / "child.yaml"), IncludeNestedStacks=True)["Id"]
    cloudformation.get_waiter("change_set_create_complete").wait(ChangeSetName=root_id, WaiterConfig=FAST)
    [change] = cloudformation.describe_change_set(ChangeSetName=root_id)["Changes"]
    assert change["ResourceChange"]["Action"] == "Add"
    nested = cloudformation.describe_change_set(ChangeSetName=change["ResourceChange"]["ChangeSetId"])
    assert nested["RootChangeSetId"] == root_id and [p["ParameterValue"] for p in nested["Parameters"]] == ["note first"]
    [child] = cloudformation.describe_stacks(StackName=nested["StackId"])["Stacks"]
    parent_id = cloudformation.describe_stacks(StackName="fresh")["Stacks"][0]["StackId"]
    assert child["StackStatus"] == "REVIEW_IN_PROGRESS" and child["ParentId"] == parent_id

    cloudformation.execute_change_set(ChangeSetName=root_id)
    settled(cloudformation, "fresh", "stack_create_complete")
    assert outputs(cloudformation, "fresh") == {"Title": "note first"}
    made = cloudformation.describe_stack_resource(StackName="fresh", LogicalResourceId="Child")["StackResourceDetail"]
    assert made["PhysicalResourceId"] == nested["StackId"]  # the child the nested change set made, not another
    assert cloudformation.describe_stacks(StackName=nested["StackId"])["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
    cloudformation.delete_stack(StackName="fresh")
    settled(cloudformation, "fresh", "stack_delete_complete")
