"""A nested stack whose template file changed while the parent's template did not: the parent's update (or change
set) updates the child, as the service does when it compares the child's template."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from conftest import LOCAL_STATE, SAMPLES
from stack_waits import FAST, outputs, settled

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}

CHILD = """\
Resources:
  Handle:
    Type: AWS::CloudFormation::WaitConditionHandle
Outputs:
  Version:
    Value: {version}
"""

PARENT = """\
Resources:
  Child:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: {child}
Outputs:
  Version:
    Value: !GetAtt Child.Outputs.Version
"""


def test_a_changed_child_template_file_updates_the_child_when_the_parent_template_is_the_same(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    child = tmp_path / "child.yaml"
    child.write_text(CHILD.format(version="one"))
    server = serve(tmp_path / "note", "--no-reload")
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    parent = PARENT.format(child=child)
    cloudformation.create_stack(StackName="parent", TemplateBody=parent)
    settled(cloudformation, "parent", "stack_create_complete")
    child_id = cloudformation.describe_stack_resource(StackName="parent", LogicalResourceId="Child")["StackResourceDetail"]["PhysicalResourceId"]

    with pytest.raises(ClientError, match="No updates are to be performed."):  # nothing changed anywhere: as before
        cloudformation.update_stack(StackName="parent", TemplateBody=parent)

    child.write_text(CHILD.format(version="two"))
    cloudformation.create_change_set(StackName="parent", ChangeSetName="child-changed", TemplateBody=parent)
    cloudformation.get_waiter("change_set_create_complete").wait(StackName="parent", ChangeSetName="child-changed", WaiterConfig=FAST)
    [change] = cloudformation.describe_change_set(StackName="parent", ChangeSetName="child-changed")["Changes"]
    resource = change["ResourceChange"]
    assert (resource["Action"], resource["LogicalResourceId"], resource["Replacement"]) == ("Modify", "Child", "False")
    assert [d["ChangeSource"] for d in resource["Details"]] == ["Automatic"]
    cloudformation.delete_change_set(StackName="parent", ChangeSetName="child-changed")

    cloudformation.update_stack(StackName="parent", TemplateBody=parent)
    settled(cloudformation, "parent", "stack_update_complete")
    assert outputs(cloudformation, "parent") == {"Version": "two"}
    assert outputs(cloudformation, child_id) == {"Version": "two"}  # the same child, updated in place
    assert cloudformation.get_template(StackName=child_id)["TemplateBody"] == CHILD.format(version="two")

    cloudformation.delete_stack(StackName="parent")
    settled(cloudformation, "parent", "stack_delete_complete")
