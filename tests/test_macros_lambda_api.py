"""A macro whose function was made through serve's Lambda API (CreateFunction): defined by one stack, it transforms
another stack's template on create and update, and its new code (UpdateFunctionCode) shows on the next update."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Callable

from conftest import ServerProcess
from stack_waits import outputs, settled
from test_lambda_api_functions import CREDENTIALS, ROLE, note_copy

STAMP = """\
import json

def handler(event, context):
    fragment = event["fragment"]
    fragment.setdefault("Outputs", {})["Stamped"] = {"Value": "%s:" + json.dumps(event["templateParameterValues"], sort_keys=True)}
    return {"requestId": event["requestId"], "status": "success", "fragment": fragment}
"""

MACRO_STACK = """\
Parameters:
  FunctionArn:
    Type: String
Resources:
  Macro:
    Type: AWS::CloudFormation::Macro
    Properties:
      Name: StampFromApi
      FunctionName: !Ref FunctionArn
"""

USER_STACK = """\
Transform: StampFromApi
Parameters:
  Title:
    Type: String
Resources:
  Note:
    Type: Cfnrun::Sample::Note
    Properties: {Title: !Ref Title}
"""


def stamp_zip(version: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("stamp.py", STAMP % version)
    return buffer.getvalue()


def test_a_macro_whose_function_was_made_by_create_function_transforms_a_stacks_template(
    serve: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    import boto3

    server = serve(note_copy(tmp_path), "--no-reload")
    lambda_client = boto3.client("lambda", endpoint_url=server.url, **CREDENTIALS)
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    arn = lambda_client.create_function(FunctionName="stamp", Runtime="python3.12", Role=ROLE, Handler="stamp.handler",
                                        Code={"ZipFile": stamp_zip("v1")})["FunctionArn"]
    cloudformation.create_stack(StackName="macro", TemplateBody=MACRO_STACK,
                                Parameters=[{"ParameterKey": "FunctionArn", "ParameterValue": arn}])
    settled(cloudformation, "macro", "stack_create_complete")

    def title(value: str) -> list:
        return [{"ParameterKey": "Title", "ParameterValue": value}]

    cloudformation.create_stack(StackName="user", TemplateBody=USER_STACK, Parameters=title("first"), Capabilities=["CAPABILITY_AUTO_EXPAND"])
    settled(cloudformation, "user", "stack_create_complete")
    assert outputs(cloudformation, "user")["Stamped"] == 'v1:{"Title": "first"}'
    server.has_printed(r"stamp +macro StampFromApi → success")

    lambda_client.update_function_code(FunctionName="stamp", ZipFile=stamp_zip("v2"))
    cloudformation.update_stack(StackName="user", TemplateBody=USER_STACK, Parameters=title("second"), Capabilities=["CAPABILITY_AUTO_EXPAND"])
    settled(cloudformation, "user", "stack_update_complete")
    assert outputs(cloudformation, "user")["Stamped"] == 'v2:{"Title": "second"}'  # the new code ran
    processed = cloudformation.get_template(StackName="user", TemplateStage="Processed")["TemplateBody"]
    assert "Transform" not in processed and "Stamped" in processed["Outputs"]
    note = cloudformation.describe_stack_resource(StackName="user", LogicalResourceId="Note")["StackResourceDetail"]
    assert note["ResourceStatus"] == "UPDATE_COMPLETE"  # the Title changed in place

    cloudformation.delete_stack(StackName="user")
    settled(cloudformation, "user", "stack_delete_complete")
    cloudformation.delete_stack(StackName="macro")
    settled(cloudformation, "macro", "stack_delete_complete")
    lambda_client.delete_function(FunctionName="stamp")
