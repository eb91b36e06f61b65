"""SAM templates on ``cfnrun serve --moto``: aws-sam-translator expands them offline; their AWS::* resources run on moto."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, Tuple

import pytest
from botocore.exceptions import ClientError, WaiterError

from conftest import LOCAL_STATE, SAMPLES, aws_cli_polling_fast
from stack_waits import FAST, settled

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}

SAM_TEMPLATE = """\
Transform: AWS::Serverless-2016-10-31
Resources:
  Notes:
    Type: AWS::Serverless::SimpleTable
  Greeter:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: index.handler
      InlineCode: |
        def handler(event, context):
            return {"hello": event.get("name")}
      Policies: [AmazonDynamoDBReadOnlyAccess]
Outputs:
  TableName:
    Value: !Ref Notes
  GreeterArn:
    Value: !GetAtt Greeter.Arn
"""


def _on_moto(serve: Any, tmp_path: Path) -> Tuple[Any, Any]:
    """serve on a copy of the note sample with --moto, and a CloudFormation client of it."""
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    server = serve(tmp_path / "note", "--no-reload", "--moto")
    return server, boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)


def test_a_sam_template_becomes_aws_resources_on_the_endpoint(serve, tmp_path: Path) -> None:
    server, cloudformation = _on_moto(serve, tmp_path)

    with pytest.raises(ClientError) as refused:  # a hosted macro, acknowledged as any macro is (botocore's documentation)
        cloudformation.create_stack(StackName="sam", TemplateBody=SAM_TEMPLATE, Capabilities=["CAPABILITY_IAM"])
    assert refused.value.response["Error"] == {
        "Type": "Sender", "Code": "InsufficientCapabilitiesException", "Message": "Requires capabilities : [CAPABILITY_AUTO_EXPAND]"}
    cloudformation.create_stack(StackName="sam", TemplateBody=SAM_TEMPLATE, Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"])
    settled(cloudformation, "sam", "stack_create_complete")

    resources = {r["LogicalResourceId"]: r["ResourceType"]
                 for r in cloudformation.describe_stack_resources(StackName="sam")["StackResources"]}
    assert resources == {"Notes": "AWS::DynamoDB::Table", "Greeter": "AWS::Lambda::Function", "GreeterRole": "AWS::IAM::Role"}
    outputs = {o["OutputKey"]: o["OutputValue"] for o in cloudformation.describe_stacks(StackName="sam")["Stacks"][0]["Outputs"]}
    assert outputs["GreeterArn"].startswith("arn:aws:lambda:us-east-1:")

    processed = cloudformation.get_template(StackName="sam", TemplateStage="Processed")["TemplateBody"]
    processed = processed if isinstance(processed, dict) else json.loads(processed)
    assert "Transform" not in processed
    assert processed["Resources"]["GreeterRole"]["Properties"]["ManagedPolicyArns"] == [
        "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole", "arn:aws:iam::aws:policy/AmazonDynamoDBReadOnlyAccess"]
    original = cloudformation.get_template(StackName="sam", TemplateStage="Original")["TemplateBody"]
    assert "AWS::Serverless::Function" in json.dumps(original)

    cloudformation.delete_stack(StackName="sam")
    settled(cloudformation, "sam", "stack_delete_complete")


def test_a_sam_template_the_translator_refuses_is_refused_in_its_words(serve, tmp_path: Path) -> None:
    server, cloudformation = _on_moto(serve, tmp_path)
    broken = SAM_TEMPLATE.replace("      Runtime: python3.12\n      Handler: index.handler\n", "")
    broken = broken.replace("InlineCode", "CodeUri: s3://b/k\n      InlineCode")
    # the service runs the transform as the operation runs: a change set ends FAILED in its words (as `sam deploy` reports)...
    cloudformation.create_change_set(StackName="broken", ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=broken)
    described = cloudformation.describe_change_set(StackName="broken", ChangeSetName="first")
    assert described["Status"] == "FAILED" and described["StatusReason"].startswith("Transform AWS::Serverless-2016-10-31 failed with:")
    assert "Greeter" in described["StatusReason"] and described["Changes"] == []
    # ...and a CreateStack rolls the new stack back with them, no resource made
    cloudformation.create_stack(StackName="broken-too", TemplateBody=broken, Capabilities=["CAPABILITY_AUTO_EXPAND"])
    stack = cloudformation.describe_stacks(StackName="broken-too")["Stacks"][0]
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE", stack
    events = cloudformation.describe_stack_events(StackName="broken-too")["StackEvents"]
    assert [e.get("ResourceStatusReason") or "" for e in events if e["ResourceStatus"] == "ROLLBACK_IN_PROGRESS"][0].startswith(
        "Transform AWS::Serverless-2016-10-31 failed with:")
    assert cloudformation.list_stack_resources(StackName="broken-too")["StackResourceSummaries"] == []


BUILT_TEMPLATE = """\
AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Timeout: 3
Resources:
  HelloWorldFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: {code}
      Handler: app.lambda_handler
      Runtime: python3.12
    Metadata:
      SamResourceId: HelloWorldFunction
  Greeting:
    Type: Custom::Greeting
    Properties:
      ServiceToken: !GetAtt HelloWorldFunction.Arn
Outputs:
  Greeting:
    Value: !GetAtt Greeting.Text
"""


ANSWERING_HANDLER = """\
import json
import urllib.request


def lambda_handler(event, context):
    body = json.dumps({"Status": "SUCCESS", "PhysicalResourceId": "greeting", "StackId": event["StackId"],
                       "RequestId": event["RequestId"], "LogicalResourceId": event["LogicalResourceId"],
                       "Data": {"Text": "built " + event["RequestType"]}}).encode()
    urllib.request.urlopen(urllib.request.Request(event["ResponseURL"], data=body, method="PUT")).close()
"""


def test_sam_build_output_with_code_on_disk_deploys_and_missing_code_says_where_it_looked(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    code = tmp_path / ".aws-sam" / "build" / "HelloWorldFunction"  # what `sam build` writes: the transform stays
    code.mkdir(parents=True)
    (code / "app.py").write_text(ANSWERING_HANDLER)
    server = serve(tmp_path / "note", "--no-reload", "--moto")
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)

    cloudformation.create_stack(StackName="built", TemplateBody=BUILT_TEMPLATE.format(code=code), Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"])
    settled(cloudformation, "built", "stack_create_complete")
    resources = {r["LogicalResourceId"]: r for r in cloudformation.describe_stack_resources(StackName="built")["StackResources"]}
    assert resources["HelloWorldFunction"]["ResourceType"] == "AWS::Lambda::Function"
    assert resources["HelloWorldFunction"]["PhysicalResourceId"]
    outputs = cloudformation.describe_stacks(StackName="built")["Stacks"][0]["Outputs"]
    assert outputs == [{"OutputKey": "Greeting", "OutputValue": "built Create"}]  # the code on disk ran, on serve's workers
    cloudformation.delete_stack(StackName="built")
    settled(cloudformation, "built", "stack_delete_complete")

    missing = tmp_path / "nowhere"
    cloudformation.create_stack(StackName="unbuilt", TemplateBody=BUILT_TEMPLATE.format(code=missing),
                                Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"])
    try:
        cloudformation.get_waiter("stack_create_complete").wait(StackName="unbuilt", WaiterConfig=FAST)
    except WaiterError:
        pass
    events = cloudformation.describe_stack_events(StackName="unbuilt")["StackEvents"]
    failed = [e for e in events if e["LogicalResourceId"] == "HelloWorldFunction" and e["ResourceStatus"] == "CREATE_FAILED"]
    assert failed, [e.get("ResourceStatusReason") for e in events]
    assert failed and f"the local code {missing} does not exist" in failed[0]["ResourceStatusReason"]


def test_aws_cloudformation_deploy_takes_a_sam_template_through_a_change_set(serve, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    server = serve(tmp_path / "note", "--no-reload", "--moto")
    (tmp_path / "template.yaml").write_text(SAM_TEMPLATE)
    aws = shutil.which("aws", path=os.path.dirname(sys.executable)) or shutil.which("aws") or "aws"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("AWS_")}, "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"), **aws_cli_polling_fast(tmp_path)}
    run = subprocess.run([aws, "cloudformation", "deploy", "--template-file", str(tmp_path / "template.yaml"), "--stack-name", "deployed",
                          "--capabilities", "CAPABILITY_IAM", "--endpoint-url", server.url],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    types = {r["ResourceType"] for r in cloudformation.describe_stack_resources(StackName="deployed")["StackResources"]}
    assert types == {"AWS::DynamoDB::Table", "AWS::Lambda::Function", "AWS::IAM::Role"}


def test_a_sam_function_with_an_event_source_leaves_no_translator_warning_on_the_console(serve, tmp_path: Path) -> None:
    # sam init's event-driven apps: the translator times each push event source (here a Schedule) for metrics it never
    # sends, and printed "There are unpublished metrics..." on serve's console when the next translation replaced them

    server, cloudformation = _on_moto(serve, tmp_path)
    scheduled = SAM_TEMPLATE.replace(
        "      Policies: [AmazonDynamoDBReadOnlyAccess]\n",
        "      Events:\n        Daily:\n          Type: Schedule\n          Properties:\n            Schedule: rate(1 day)\n",
    )
    for name in ("first", "second"):
        cloudformation.create_change_set(StackName=name, ChangeSetName=name, ChangeSetType="CREATE", TemplateBody=scheduled,
                                         Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"])
        cloudformation.get_waiter("change_set_create_complete").wait(StackName=name, ChangeSetName=name, WaiterConfig=FAST)
    server.stop()
    assert "unpublished metrics" not in server.printed_until_exit()


def test_functions_sharing_a_code_folder_are_created_together(serve, tmp_path: Path) -> None:
    # sam init's web app: functions sharing one CodeUri. Each put the same zip again while moto's Lambda read it for
    # another; moto then read a closed file and one function's stack there never settled (its create hung)
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    code = tmp_path / "src"
    code.mkdir()
    (code / "app.py").write_text("def handler(event, context):\n    return {}\n" + "# padding\n" * 20000)
    functions = "".join(
        f"  F{n}:\n    Type: AWS::Serverless::Function\n    Properties:\n      CodeUri: {code}\n"
        f"      Handler: app.handler\n      Runtime: python3.12\n" for n in range(12)
    )
    server = serve(tmp_path / "note", "--no-reload", "--moto")
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    cloudformation.create_stack(StackName="shared", TemplateBody=f"Transform: AWS::Serverless-2016-10-31\nResources:\n{functions}",
                                Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"])
    cloudformation.get_waiter("stack_create_complete").wait(StackName="shared", WaiterConfig={"Delay": 0.2, "MaxAttempts": 150})
    assert not [line for line in server.output if "closed file" in line], server.output


def _published(greeting: str) -> str:
    return f"""\
Transform: AWS::Serverless-2016-10-31
Resources:
  Hello:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: index.handler
      InlineCode: |
        def handler(event, context):
            return {{"{greeting}": event.get("name")}}
      AutoPublishAlias: live
      FunctionUrlConfig:
        AuthType: NONE
Outputs:
  Alias:
    Value: !Ref HelloAliaslive
  Url:
    Value: !GetAtt HelloUrl.FunctionUrl
"""


def test_auto_publish_alias_publishes_a_version_per_code_change_and_the_alias_invokes_the_latest(serve, tmp_path: Path) -> None:
    # moto's CloudFormation reported no resource for a Version, has no Alias type and broke on a Url's Fn::GetAtt: SAM's
    # AutoPublishAlias and FunctionUrlConfig failed the stack (app/stacks/lambda_versions.py makes them through Lambda's API)
    import boto3

    server, cloudformation = _on_moto(serve, tmp_path)
    functions = boto3.client("lambda", endpoint_url=server.url, **CREDENTIALS)
    capabilities = ["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"]

    def invoked(name: str) -> dict:
        return json.loads(functions.invoke(FunctionName=name, Payload=json.dumps({"name": "ada"}))["Payload"].read())

    cloudformation.create_stack(StackName="published", TemplateBody=_published("hello"), Capabilities=capabilities)
    settled(cloudformation, "published", "stack_create_complete")
    outputs = {o["OutputKey"]: o["OutputValue"] for o in cloudformation.describe_stacks(StackName="published")["Stacks"][0]["Outputs"]}
    function = cloudformation.describe_stack_resource(StackName="published", LogicalResourceId="Hello")["StackResourceDetail"]["PhysicalResourceId"]
    assert outputs["Alias"].endswith(f":function:{function}:live") and outputs["Url"].startswith("https://")
    lambda_on_moto = boto3.client("lambda", endpoint_url=server.moto_url(), **CREDENTIALS)
    assert lambda_on_moto.get_alias(FunctionName=function, Name="live")["FunctionVersion"] == "1"
    assert invoked(outputs["Alias"]) == {"hello": "ada"}
    # the URL's permissions: statements named as the service names them, their ids the resources' physical ids
    permissions = [r["PhysicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="published")["StackResources"]
                   if r["ResourceType"] == "AWS::Lambda::Permission"]
    assert permissions and all(re.fullmatch(r"published-Hello\w+-[A-Z0-9]{12}", p) for p in permissions), permissions
    policy = lambda_on_moto.get_policy(FunctionName=outputs["Alias"])["Policy"]
    assert all(p in policy for p in permissions), policy

    cloudformation.update_stack(StackName="published", TemplateBody=_published("bonjour"), Capabilities=capabilities)
    settled(cloudformation, "published", "stack_update_complete")
    assert lambda_on_moto.get_alias(FunctionName=function, Name="live")["FunctionVersion"] == "2"
    assert invoked(outputs["Alias"]) == {"bonjour": "ada"}
    versions = [v["Version"] for v in lambda_on_moto.list_versions_by_function(FunctionName=function)["Versions"]]
    assert versions == ["$LATEST", "1", "2"]  # SAM retains each version it published (DeletionPolicy Retain)

    cloudformation.delete_stack(StackName="published")
    settled(cloudformation, "published", "stack_delete_complete")
    with pytest.raises(ClientError, match="ResourceNotFoundException"):
        lambda_on_moto.get_function(FunctionName=function)
