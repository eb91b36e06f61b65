"""A MODULE project served with ``--provider``: its module used twice in a stack beside a sample type and an S3 bucket (boto3, serve --moto)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
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
  Pair:
    Type: Cfnrun::Sample::Pair::MODULE
    Properties:
      Prefix: !Sub "pair-${AWS::StackName}"
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


PAIR_FRAGMENT = {
    "Parameters": {"Prefix": {"Type": "String"}},
    "Resources": {"Inner": {"Type": "Cfnrun::Sample::Bucket::MODULE", "Properties": {"BucketName": {"Fn::Sub": "${Prefix}-inner"}}}},
}


def pair_module(folder: Path) -> Path:
    """A second module project, as cfn init lays it out, whose fragment uses the sample module: a module in a module."""
    (folder / "fragments").mkdir(parents=True)
    (folder / ".rpdk-config").write_text(json.dumps({"artifact_type": "MODULE", "typeName": "Cfnrun::Sample::Pair::MODULE", "settings": {}}))
    (folder / "fragments" / "pair.json").write_text(json.dumps(PAIR_FRAGMENT))
    return folder


def test_served_modules_expand_in_a_stack_created_updated_with_the_aws_cli_and_deleted(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    shutil.copytree(SAMPLES / "module", tmp_path / "module")
    server = serve(tmp_path / "note", "--no-reload", "--moto", "--provider", str(tmp_path / "module"),
                   "--provider", str(pair_module(tmp_path / "pair")))
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)

    cloudformation.create_stack(StackName="mods", TemplateBody=TEMPLATE)
    try:
        cloudformation.get_waiter("stack_create_complete").wait(StackName="mods", WaiterConfig=FAST)
    except WaiterError:
        events = cloudformation.describe_stack_events(StackName="mods")["StackEvents"]
        raise AssertionError([e.get("ResourceStatusReason") for e in events if e.get("ResourceStatusReason")]) from None

    resources = {r["LogicalResourceId"]: r for r in cloudformation.describe_stack_resources(StackName="mods")["StackResources"]}
    assert sorted(resources) == ["DataS3Bucket", "LogsS3Bucket", "Note", "PairInnerS3Bucket", "Plain"]
    assert resources["PairInnerS3Bucket"]["PhysicalResourceId"] == "pair-mods-inner"
    assert resources["PairInnerS3Bucket"]["ModuleInfo"] == {
        "TypeHierarchy": "Cfnrun::Sample::Pair::MODULE/Cfnrun::Sample::Bucket::MODULE", "LogicalIdHierarchy": "Pair/Inner"}
    assert resources["LogsS3Bucket"]["ModuleInfo"] == {"TypeHierarchy": "Cfnrun::Sample::Bucket::MODULE", "LogicalIdHierarchy": "Logs"}
    assert "ModuleInfo" not in resources["Plain"]
    detail = cloudformation.describe_stack_resource(StackName="mods", LogicalResourceId="DataS3Bucket")["StackResourceDetail"]
    assert detail["ModuleInfo"] == {"TypeHierarchy": "Cfnrun::Sample::Bucket::MODULE", "LogicalIdHierarchy": "Data"}
    assert resources["LogsS3Bucket"]["ResourceType"] == resources["DataS3Bucket"]["ResourceType"] == "AWS::S3::Bucket"
    assert resources["LogsS3Bucket"]["PhysicalResourceId"] == "logs-mods"
    outputs = {o["OutputKey"]: o["OutputValue"] for o in cloudformation.describe_stacks(StackName="mods")["Stacks"][0]["Outputs"]}
    assert outputs == {"LogsArn": "arn:aws:s3:::logs-mods", "DataName": "data-mods"}

    processed = cloudformation.get_template(StackName="mods", TemplateStage="Processed")["TemplateBody"]
    processed = processed if isinstance(processed, dict) else json.loads(processed)
    assert processed["Resources"]["Note"]["Properties"] == {"Title": {"Ref": "LogsS3Bucket"},
                                                             "Content": {"Fn::GetAtt": ["DataS3Bucket", "Arn"]}}
    assert processed["Resources"]["DataS3Bucket"]["DependsOn"] == ["LogsS3Bucket"]

    aws = shutil.which("aws", path=os.path.dirname(sys.executable)) or shutil.which("aws")
    assert aws, "the aws CLI is a test dependency"
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}

    def aws_cli(*args: str) -> "subprocess.CompletedProcess[str]":
        return subprocess.run([aws, "cloudformation", *args, "--endpoint-url", server.url], env=env, capture_output=True, text=True, timeout=120)

    updated_template = tmp_path / "updated.yaml"
    updated_template.write_text(TEMPLATE.replace('"data-${AWS::StackName}"', '"data2-${AWS::StackName}"'), encoding="utf-8")
    updated = aws_cli("update-stack", "--stack-name", "mods", "--template-body", f"file://{updated_template}")
    assert updated.returncode == 0, updated.stdout + updated.stderr
    cloudformation.get_waiter("stack_update_complete").wait(StackName="mods", WaiterConfig=FAST)
    listed = json.loads(aws_cli("list-stack-resources", "--stack-name", "mods").stdout)["StackResourceSummaries"]
    assert {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in listed}["DataS3Bucket"] == "data2-mods"

    deleted = aws_cli("delete-stack", "--stack-name", "mods")
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr
    cloudformation.get_waiter("stack_delete_complete").wait(StackName="mods", WaiterConfig=FAST)
