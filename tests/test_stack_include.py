"""AWS::Include on ``cfnrun serve``: snippets from disk and from the endpoint's S3, in Transform and Fn::Transform."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from botocore.exceptions import ClientError, WaiterError

from conftest import LOCAL_STATE, SAMPLES
from stack_waits import FAST

moto_server = pytest.importorskip("moto.server")

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}

TOP_SNIPPET = """\
Outputs:
  FromTop:
    Value: !GetAtt Included.NoteId
"""
RESOURCE_SNIPPET = """\
Included:
  Type: Cfnrun::Sample::Note
  Properties:
    Title: from s3
"""
TEMPLATE = """\
Transform:
  Name: AWS::Include
  Parameters:
    Location: {top}
Resources:
  Own:
    Type: Cfnrun::Sample::Note
    Properties:
      Title: own
      Content:
        Fn::Transform:
          Name: AWS::Include
          Parameters:
            Location: {content}
  Fn::Transform:
    Name: AWS::Include
    Parameters:
      Location: s3://snippets/resource.yaml
"""


def test_include_snippets_from_disk_and_s3_become_part_of_the_processed_template(serve, tmp_path: Path, moto_url: str) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    (tmp_path / "top.yaml").write_text(TOP_SNIPPET)
    (tmp_path / "content.json").write_text('"included text"')
    s3 = boto3.client("s3", endpoint_url=moto_url, **CREDENTIALS)
    s3.create_bucket(Bucket="snippets")
    s3.put_object(Bucket="snippets", Key="resource.yaml", Body=RESOURCE_SNIPPET.encode())
    server = serve(tmp_path / "note", "--no-reload", "--aws-endpoint", moto_url)
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)

    body = TEMPLATE.format(top=tmp_path / "top.yaml", content=tmp_path / "content.json")
    cloudformation.create_stack(StackName="included", TemplateBody=body, Capabilities=["CAPABILITY_AUTO_EXPAND"])
    try:
        cloudformation.get_waiter("stack_create_complete").wait(StackName="included", WaiterConfig=FAST)
    except WaiterError:
        events = cloudformation.describe_stack_events(StackName="included")["StackEvents"]
        raise AssertionError([e.get("ResourceStatusReason") for e in events if e.get("ResourceStatusReason")]) from None

    resources = sorted(r["LogicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="included")["StackResources"])
    assert resources == ["Included", "Own"]
    outputs = cloudformation.describe_stacks(StackName="included")["Stacks"][0]["Outputs"]
    assert [o["OutputKey"] for o in outputs] == ["FromTop"] and outputs[0]["OutputValue"]
    processed = cloudformation.get_template(StackName="included", TemplateStage="Processed")["TemplateBody"]
    processed = processed if isinstance(processed, dict) else json.loads(processed)
    assert "Transform" not in processed
    assert processed["Resources"]["Own"]["Properties"]["Content"] == "included text"
    assert "AWS::Include" in json.dumps(cloudformation.get_template(StackName="included")["TemplateBody"])

    # ValidateTemplate and GetTemplateSummary read the snippets as CreateStack does (they said "not supported locally here")
    summary = cloudformation.get_template_summary(TemplateBody=body)
    assert summary["ResourceTypes"] == ["Cfnrun::Sample::Note"] and summary["DeclaredTransforms"] == ["AWS::Include"]
    assert cloudformation.get_template_summary(StackName="included")["DeclaredTransforms"] == ["AWS::Include"]
    assert cloudformation.validate_template(TemplateBody=body)["DeclaredTransforms"] == ["AWS::Include"]

    with pytest.raises(ClientError) as refused:
        cloudformation.create_stack(StackName="missing", TemplateBody=body.replace("top.yaml", "nowhere.yaml"),
                                    Capabilities=["CAPABILITY_AUTO_EXPAND"])
    assert refused.value.response["Error"]["Code"] == "ValidationError"
    assert refused.value.response["Error"]["Message"].startswith("Transform AWS::Include failed with: ")
    assert "nowhere.yaml: no such file" in refused.value.response["Error"]["Message"]

    cloudformation.delete_stack(StackName="included")
    cloudformation.get_waiter("stack_delete_complete").wait(StackName="included", WaiterConfig=FAST)
