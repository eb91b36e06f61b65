"""An update may read, by Fn::GetAtt, an attribute of a resource it leaves unchanged that nothing read before.

The service reads any attribute of a resource it made whenever a template asks for it; cfnrun reads a resource's
attributes when it provisions it, the ones its template wants then. An update that asks for a new one of an
unchanged resource must still succeed: a served type's from its handler's last model, an AWS::* type's from the
endpoint that made it.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import boto3

from conftest import LOCAL_STATE, SAMPLES
from stack_waits import outputs, settled

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}

BEFORE = """\
Resources:
  Note:
    Type: Cfnrun::Sample::Note
    Properties:
      Title: kept as it is
  Plain:
    Type: AWS::S3::Bucket
"""
AFTER = BEFORE + """\
Outputs:
  NoteCreatedAt:
    Value: !GetAtt Note.CreatedAt
  BucketArn:
    Value: !GetAtt Plain.Arn
"""


def test_an_update_reads_a_new_attribute_of_unchanged_resources(serve, tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    server = serve(tmp_path / "note", "--no-reload", "--moto")
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    cloudformation.create_stack(StackName="later", TemplateBody=BEFORE)
    settled(cloudformation, "later", "stack_create_complete")
    bucket = cloudformation.describe_stack_resource(StackName="later", LogicalResourceId="Plain")["StackResourceDetail"]

    cloudformation.update_stack(StackName="later", TemplateBody=AFTER)
    settled(cloudformation, "later", "stack_update_complete")

    read = outputs(cloudformation, "later")
    assert read["BucketArn"] == f"arn:aws:s3:::{bucket['PhysicalResourceId']}"
    note = cloudformation.describe_stack_resource(StackName="later", LogicalResourceId="Note")["StackResourceDetail"]
    assert read["NoteCreatedAt"] and note["ResourceStatus"] == "CREATE_COMPLETE"  # read, not updated: the handler not called
