"""A MODULE project served with ``--provider``: its module used twice in a stack beside a sample type and an S3 bucket (boto3, serve --moto)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from botocore.exceptions import WaiterError

from conftest import LOCAL_STATE, SAMPLES

FAST = {"Delay": 0.1, "MaxAttempts": 600}
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}

TEMPLATE = """\
Resources:
  Logs:
    Type: Cfnrun::Sample::Bucket::MODULE
    Properties:
      BucketName: !Sub "logs-${AWS::StackName}"
  Data:
    Type: Cfnrun::Sample::Bucket::MODULE
    DependsOn: Logs
    Properties:
      BucketName: !Sub "data-${AWS::StackName}"
  Plain:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: !Sub "plain-${AWS::StackName}"
  Note:
    Type: Cfnrun::Sample::Note
    Properties:
      Title: !Ref Logs.S3Bucket
      Content: !GetAtt Data.S3Bucket.Arn
Outputs:
  LogsArn:
    Value: !GetAtt Logs.Outputs.Arn
  DataName:
    Value: !Ref DataS3Bucket
"""


def test_a_served_module_expands_into_its_fragment_in_a_stack_created_and_deleted(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    shutil.copytree(SAMPLES / "module", tmp_path / "module")
    server = serve(tmp_path / "note", "--no-reload", "--moto", "--provider", str(tmp_path / "module"))
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)

    cloudformation.create_stack(StackName="mods", TemplateBody=TEMPLATE)
    try:
        cloudformation.get_waiter("stack_create_complete").wait(StackName="mods", WaiterConfig=FAST)
    except WaiterError:
        events = cloudformation.describe_stack_events(StackName="mods")["StackEvents"]
        raise AssertionError([e.get("ResourceStatusReason") for e in events if e.get("ResourceStatusReason")]) from None

    resources = {r["LogicalResourceId"]: r for r in cloudformation.describe_stack_resources(StackName="mods")["StackResources"]}
    assert sorted(resources) == ["DataS3Bucket", "LogsS3Bucket", "Note", "Plain"]
    assert resources["LogsS3Bucket"]["ResourceType"] == resources["DataS3Bucket"]["ResourceType"] == "AWS::S3::Bucket"
    assert resources["LogsS3Bucket"]["PhysicalResourceId"] == "logs-mods"
    outputs = {o["OutputKey"]: o["OutputValue"] for o in cloudformation.describe_stacks(StackName="mods")["Stacks"][0]["Outputs"]}
    assert outputs == {"LogsArn": "arn:aws:s3:::logs-mods", "DataName": "data-mods"}

    processed = cloudformation.get_template(StackName="mods", TemplateStage="Processed")["TemplateBody"]
    processed = processed if isinstance(processed, dict) else json.loads(processed)
    assert processed["Resources"]["Note"]["Properties"] == {"Title": {"Ref": "LogsS3Bucket"},
                                                             "Content": {"Fn::GetAtt": ["DataS3Bucket", "Arn"]}}
    assert processed["Resources"]["DataS3Bucket"]["DependsOn"] == ["LogsS3Bucket"]

    cloudformation.delete_stack(StackName="mods")
    cloudformation.get_waiter("stack_delete_complete").wait(StackName="mods", WaiterConfig=FAST)
