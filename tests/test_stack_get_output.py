"""Fn::GetStackOutput on ``cfnrun serve``: one local stack reads another's output without an Export."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from botocore.exceptions import ClientError, WaiterError

from conftest import LOCAL_STATE, SAMPLES
from stack_waits import FAST

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}

PRODUCER = """\
Resources:
  Note:
    Type: Cfnrun::Sample::Note
    Properties:
      Title: produced
Outputs:
  Title:
    Value: produced title
"""
CONSUMER = """\
Resources:
  Copy:
    Type: Cfnrun::Sample::Note
    Properties:
      Title:
        Fn::GetStackOutput:
          StackName: producer
          OutputName: {output}
          Region: us-east-1
Outputs:
  Read:
    Value: {{"Fn::GetStackOutput": {{StackName: producer, OutputName: Title}}}}
"""


def test_a_stack_reads_another_stacks_output_and_a_missing_one_is_named(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    server = serve(tmp_path / "note", "--no-reload")
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    cloudformation.create_stack(StackName="producer", TemplateBody=PRODUCER)
    cloudformation.get_waiter("stack_create_complete").wait(StackName="producer", WaiterConfig=FAST)

    cloudformation.create_stack(StackName="consumer", TemplateBody=CONSUMER.format(output="Title"))
    try:
        cloudformation.get_waiter("stack_create_complete").wait(StackName="consumer", WaiterConfig=FAST)
    except WaiterError:
        events = cloudformation.describe_stack_events(StackName="consumer")["StackEvents"]
        raise AssertionError([e.get("ResourceStatusReason") for e in events if e.get("ResourceStatusReason")]) from None
    outputs = cloudformation.describe_stacks(StackName="consumer")["Stacks"][0]["Outputs"]
    assert outputs == [{"OutputKey": "Read", "OutputValue": "produced title"}]
    note = cloudformation.describe_stack_resource(StackName="consumer", LogicalResourceId="Copy")["StackResourceDetail"]
    assert note["ResourceStatus"] == "CREATE_COMPLETE"

    cloudformation.create_stack(StackName="missing", TemplateBody=CONSUMER.format(output="Nope"))
    with pytest.raises(WaiterError):
        cloudformation.get_waiter("stack_create_complete").wait(StackName="missing", WaiterConfig=FAST)
    reasons = [e.get("ResourceStatusReason") or "" for e in cloudformation.describe_stack_events(StackName="missing")["StackEvents"]]
    assert any("stack producer has no output Nope" in reason for reason in reasons), reasons

    with pytest.raises(ClientError) as refused:
        cloudformation.create_stack(StackName="conditional", TemplateBody=(
            "Conditions:\n  C: !Equals [{Fn::GetStackOutput: {StackName: producer, OutputName: Title}}, x]\n"
            "Resources:\n  N: {Type: Cfnrun::Sample::Note, Condition: C, Properties: {Title: t}}\n"))
    assert "Fn::GetStackOutput cannot be used in the Conditions block" in refused.value.response["Error"]["Message"]
