"""Fn::ForEach on ``cfnrun serve --moto``: a loop of the sample note type, created, read back and deleted with boto3."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from botocore.exceptions import ClientError, WaiterError

from conftest import LOCAL_STATE, SAMPLES

FAST = {"Delay": 0.1, "MaxAttempts": 600}
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}

TEMPLATE = """\
Transform: AWS::LanguageExtensions
Parameters:
  Titles:
    Type: CommaDelimitedList
    Default: alpha,beta
Resources:
  Fn::ForEach::Notes:
    - Title
    - !Ref Titles
    - Note${Title}:
        Type: Cfnrun::Sample::Note
        Properties:
          Title: !Sub "note ${Title}"
          Content: !Ref Title
Outputs:
  Fn::ForEach::Ids:
    - Title
    - !Ref Titles
    - Id${Title}:
        Value: !GetAtt [!Sub "Note${Title}", NoteId]
"""


def test_a_for_each_loop_makes_one_note_per_item_of_a_list_parameter(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    server = serve(tmp_path / "note", "--no-reload", "--moto")
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)

    cloudformation.create_stack(StackName="loops", TemplateBody=TEMPLATE, Capabilities=["CAPABILITY_AUTO_EXPAND"],
                                Parameters=[{"ParameterKey": "Titles", "ParameterValue": "one,two,three"}])
    try:
        cloudformation.get_waiter("stack_create_complete").wait(StackName="loops", WaiterConfig=FAST)
    except WaiterError:
        events = cloudformation.describe_stack_events(StackName="loops")["StackEvents"]
        raise AssertionError([e.get("ResourceStatusReason") for e in events if e.get("ResourceStatusReason")]) from None

    resources = cloudformation.describe_stack_resources(StackName="loops")["StackResources"]
    assert sorted(r["LogicalResourceId"] for r in resources) == ["Noteone", "Notethree", "Notetwo"]
    assert {r["ResourceType"] for r in resources} == {"Cfnrun::Sample::Note"}
    outputs = cloudformation.describe_stacks(StackName="loops")["Stacks"][0]["Outputs"]
    assert sorted(o["OutputKey"] for o in outputs) == ["Idone", "Idthree", "Idtwo"]

    original = cloudformation.get_template(StackName="loops")["TemplateBody"]
    assert "Fn::ForEach::Notes" in json.dumps(original)
    processed = cloudformation.get_template(StackName="loops", TemplateStage="Processed")["TemplateBody"]
    processed = processed if isinstance(processed, dict) else json.loads(processed)
    assert sorted(processed["Resources"]) == ["Noteone", "Notethree", "Notetwo"]
    assert processed["Resources"]["Notetwo"]["Properties"] == {"Title": "note two", "Content": "two"}
    assert "Transform" not in processed  # AWS::LanguageExtensions has run: the service's processed template names it no more

    cloudformation.delete_stack(StackName="loops")
    cloudformation.get_waiter("stack_delete_complete").wait(StackName="loops", WaiterConfig=FAST)


def test_a_loop_that_makes_a_key_twice_is_refused_before_anything_runs(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    server = serve(tmp_path / "note", "--no-reload", "--moto")
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    try:
        cloudformation.create_stack(StackName="twice", TemplateBody=TEMPLATE, Capabilities=["CAPABILITY_AUTO_EXPAND"],
                                    Parameters=[{"ParameterKey": "Titles", "ParameterValue": "same,same"}])
    except ClientError as error:
        assert error.response["Error"]["Code"] == "ValidationError"
        assert "Transform AWS::LanguageExtensions failed with: Fn::ForEach::Notes makes the key Notesame" in error.response["Error"]["Message"]
    else:
        raise AssertionError("a loop making Notesame twice was accepted")


LANGUAGE_FUNCTIONS = """\
Transform: AWS::LanguageExtensions
Parameters:
  QueueList:
    Type: CommaDelimitedList
Mappings:
  Sizes:
    small: {Count: "1"}
Resources:
  Counted:
    Type: Cfnrun::Sample::Note
    Properties:
      Title: counted
      Content:
        Fn::ToJsonString:
          count: {"Fn::Length": !Ref QueueList}
          items: [a, b, c]
          size: !FindInMap [Sizes, large, Count, {DefaultValue: "9"}]
      Tags:
        - {Key: read-later, Value: !ToJsonString [!GetAtt Other.NoteId]}
  Other:
    Type: Cfnrun::Sample::Note
    Properties:
      Title: other
"""


def test_the_processed_template_has_language_extensions_worked_out_as_the_service_shows_it(serve, tmp_path: Path) -> None:
    """LocalStack's tests recorded against AWS (api/test_transformers): GetTemplate's Processed stage holds Fn::Length's
    and Fn::ToJsonString's values, not the calls; a call that reads a resource stays, and so does the transform."""
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    server = serve(tmp_path / "note", "--no-reload")
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    body = LANGUAGE_FUNCTIONS.replace("      Tags:\n        - {Key: read-later, Value: !ToJsonString [!GetAtt Other.NoteId]}\n", "")
    cloudformation.create_stack(StackName="worked", TemplateBody=body, Capabilities=["CAPABILITY_AUTO_EXPAND"],
                                Parameters=[{"ParameterKey": "QueueList", "ParameterValue": "a,b,c"}])
    cloudformation.get_waiter("stack_create_complete").wait(StackName="worked", WaiterConfig=FAST)
    processed = cloudformation.get_template(StackName="worked", TemplateStage="Processed")["TemplateBody"]
    processed = processed if isinstance(processed, dict) else json.loads(processed)
    assert "Transform" not in processed
    assert processed["Resources"]["Counted"]["Properties"]["Content"] == '{"count":3,"items":["a","b","c"],"size":"9"}'

    cloudformation.create_stack(StackName="later", TemplateBody=LANGUAGE_FUNCTIONS, Capabilities=["CAPABILITY_AUTO_EXPAND"],
                                Parameters=[{"ParameterKey": "QueueList", "ParameterValue": "a"}])
    cloudformation.get_waiter("stack_create_complete").wait(StackName="later", WaiterConfig=FAST)
    processed = cloudformation.get_template(StackName="later", TemplateStage="Processed")["TemplateBody"]
    processed = processed if isinstance(processed, dict) else json.loads(processed)
    assert processed["Transform"] == "AWS::LanguageExtensions"
    assert processed["Resources"]["Counted"]["Properties"]["Tags"][0]["Value"] == {"Fn::ToJsonString": [{"Fn::GetAtt": ["Other", "NoteId"]}]}
