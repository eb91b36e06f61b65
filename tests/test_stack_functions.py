"""A stack's own inline-Python AWS::Lambda::Function backs its custom resource: run by cfnrun's warm workers, not moto."""
from __future__ import annotations

import shutil
from pathlib import Path

from botocore.exceptions import ClientError

from conftest import LOCAL_STATE, SAMPLES
from stack_waits import outputs, settled

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}

TEMPLATE = """\
Parameters:
  Word:
    Type: String
    Default: hello
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Statement: [{Effect: Allow, Principal: {Service: lambda.amazonaws.com}, Action: sts:AssumeRole}]
  Shouter:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: python3.12
      Handler: index.handler
      Role: !GetAtt Role.Arn
      Environment:
        Variables: {SUFFIX: "!"}
      Code:
        ZipFile: |
          import os
          import cfnresponse

          def handler(event, context):
              word = event["ResourceProperties"]["Word"]
              data = {"Shouted": word.upper() + os.environ["SUFFIX"], "Request": event["RequestType"]}
              cfnresponse.send(event, context, cfnresponse.SUCCESS, data, "shout-" + word)
  Shout:
    Type: Custom::Shout
    Properties:
      ServiceToken: !GetAtt Shouter.Arn
      Word: !Ref Word
Outputs:
  Shouted:
    Value: !GetAtt Shout.Shouted
"""


def test_a_custom_resource_backed_by_inline_python_of_the_same_template_creates_updates_and_deletes(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    server = serve(tmp_path / "note", "--no-reload", "--moto")
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)

    cloudformation.create_stack(StackName="inline", TemplateBody=TEMPLATE, Capabilities=["CAPABILITY_IAM"])
    settled(cloudformation, "inline", "stack_create_complete")
    assert outputs(cloudformation, "inline") == {"Shouted": "HELLO!"}
    shout = cloudformation.describe_stack_resource(StackName="inline", LogicalResourceId="Shout")["StackResourceDetail"]
    assert shout["PhysicalResourceId"] == "shout-hello"
    function = cloudformation.describe_stack_resource(StackName="inline", LogicalResourceId="Shouter")["StackResourceDetail"]
    name = function["PhysicalResourceId"]
    assert server.worker_pids(name), "the inline function ran on no worker of serve's"

    cloudformation.update_stack(StackName="inline", TemplateBody=TEMPLATE,
                                Parameters=[{"ParameterKey": "Word", "ParameterValue": "again"}], Capabilities=["CAPABILITY_IAM"])
    settled(cloudformation, "inline", "stack_update_complete")
    assert outputs(cloudformation, "inline") == {"Shouted": "AGAIN!"}

    cloudformation.delete_stack(StackName="inline")
    settled(cloudformation, "inline", "stack_delete_complete")
    server.has_printed("custom resource Delete Shout")
    try:
        server.client().invoke(FunctionName=name, Payload=b"{}")
    except ClientError as error:  # the function went with its stack: serve no longer serves it
        assert error.response["Error"]["Code"] == "ResourceNotFoundException"
    else:
        raise AssertionError(f"{name} is still served after its stack was deleted")
