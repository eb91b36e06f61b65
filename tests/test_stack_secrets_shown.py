"""A stack's NoEcho values never reach serve's console or the history, whoever logs them: a served type's handler, a
custom resource's function, a macro's function (a real ``cfnrun serve --moto``, the aws CLI's client, boto3)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import LOCAL_STATE, SAMPLES
from stack_waits import settled

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
SECRET = "Correct-Horse-7731"

FUNCTIONS = """\
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Statement: [{Effect: Allow, Principal: {Service: lambda.amazonaws.com}, Action: sts:AssumeRole}]
  Echo:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: python3.12
      Handler: index.handler
      Role: !GetAtt Role.Arn
      Code:
        ZipFile: |
          import json
          import urllib.request

          def handler(event, context):
              print("event:", json.dumps(event))
              if "fragment" in event:  # a macro's call
                  return {"requestId": event["requestId"], "status": "success", "fragment": event["fragment"]}
              body = json.dumps({"Status": "SUCCESS", "PhysicalResourceId": "echoed", "StackId": event["StackId"],
                                 "RequestId": event["RequestId"], "LogicalResourceId": event["LogicalResourceId"]}).encode()
              urllib.request.urlopen(urllib.request.Request(event["ResponseURL"], data=body, method="PUT")).read()
  Macro:
    Type: AWS::CloudFormation::Macro
    Properties:
      Name: Echo
      FunctionName: !GetAtt Echo.Arn
Outputs:
  EchoArn:
    Value: !GetAtt Echo.Arn
    Export: {Name: EchoArn}
"""

SECRETIVE = """\
Transform: Echo
Parameters:
  Password:
    Type: String
    NoEcho: true
Resources:
  Note:
    Type: Cfnrun::Sample::Note
    Properties:
      Title: kept
      Content: !Sub "password=${Password}"
  Custom:
    Type: Custom::Echo
    Properties:
      ServiceToken: !ImportValue EchoArn
      Given: !Ref Password
"""


def test_no_echo_values_logged_by_a_handler_a_custom_resource_or_a_macro_are_masked_on_the_console_and_in_the_history(
    serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import boto3

    monkeypatch.setenv("CFNRUN_HISTORY", "on")

    project = tmp_path / "note"
    shutil.copytree(SAMPLES / "note", project, ignore=LOCAL_STATE)
    handlers = project / "src" / "cfnrun_sample_note" / "handlers.py"
    code = handlers.read_text()
    logged = "    model = request.desiredResourceState\n"
    assert code.count(logged) >= 1
    handlers.write_text(code.replace(logged, logged + '    print("content:", model.Content if model else None)\n', 1))

    server = serve(project, "--no-reload", "--moto")
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    cloudformation.create_stack(StackName="functions", TemplateBody=FUNCTIONS, Capabilities=["CAPABILITY_IAM"])
    settled(cloudformation, "functions", "stack_create_complete")
    cloudformation.create_stack(
        StackName="secretive", TemplateBody=SECRETIVE, Capabilities=["CAPABILITY_AUTO_EXPAND"],
        Parameters=[{"ParameterKey": "Password", "ParameterValue": SECRET}],
    )
    settled(cloudformation, "secretive", "stack_create_complete")

    handler_line = server.has_printed(r"│ content: ")
    custom_line = server.has_printed(r"│ event: .*\"RequestType\": \"Create\"")
    macro_line = server.has_printed(r"│ event: .*\"templateParameterValues\"")
    for line in (handler_line, custom_line, macro_line):
        assert SECRET not in line and ("****" in line or "*** masked ***" in line), line  # printed, the value masked
    server.stop_cleanly()
    assert SECRET not in "\n".join(server.output)
    history = project / ".cfnrun"
    stored = [path for path in history.iterdir() if path.name.startswith("history.sqlite3")]
    assert stored and all(SECRET.encode() not in path.read_bytes() for path in stored)
    assert b"password=" in b"".join(path.read_bytes() for path in stored)  # the handler's call is recorded, its value masked
