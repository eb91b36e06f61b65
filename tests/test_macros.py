"""The account's macros: an AWS::CloudFormation::Macro of one local stack, backed by that stack's inline-Python
function on serve's warm workers, transforms later templates (Transform and Fn::Transform) as the service does."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from conftest import LOCAL_STATE, SAMPLES
from stack_waits import outputs, settled

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}

MACRO_TEMPLATE = """\
Parameters:
  MacroName:
    Type: String
    Default: Stamp
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Statement: [{Effect: Allow, Principal: {Service: lambda.amazonaws.com}, Action: sts:AssumeRole}]
  StampFunction:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: python3.12
      Handler: index.handler
      Role: !GetAtt Role.Arn
      Code:
        ZipFile: |
          import json

          def handler(event, context):
              fragment, params = event["fragment"], event["params"]
              if "Fail" in params:
                  return {"requestId": event["requestId"], "status": "failure", "errorMessage": params["Fail"]}
              if "Raise" in params:
                  raise RuntimeError(params["Raise"])
              if "Resources" in fragment:  # the Transform section's call: the whole template
                  seen = {"keys": sorted(event), "transformId": event["transformId"], "params": params,
                          "values": event["templateParameterValues"], "region": event["region"],
                          "greeting": fragment["Outputs"]["Greeting"]["Value"]}
                  fragment["Outputs"]["Event"] = {"Value": json.dumps(seen, sort_keys=True)}
              else:  # an Fn::Transform's call: its siblings
                  fragment = dict(fragment, Value=params["Prefix"] + fragment["Value"])
              return {"requestId": event["requestId"], "status": "success", "fragment": fragment}
  Macro:
    Type: AWS::CloudFormation::Macro
    Properties:
      Name: !Ref MacroName
      FunctionName: !GetAtt StampFunction.Arn
"""

USER_TEMPLATE = """\
Transform: Stamp
Parameters:
  Word:
    Type: String
    Default: hello
Resources:
  Handle:
    Type: AWS::CloudFormation::WaitConditionHandle
Outputs:
  Greeting:
    Value: plain
    Fn::Transform:
      Name: Stamp
      Parameters: {Prefix: pre-}
"""

FAILING_TEMPLATE = """\
Resources:
  Handle:
    Type: AWS::CloudFormation::WaitConditionHandle
    Fn::Transform: {Name: Stamp, Parameters: {Fail: the macro says no}}
"""


def error_of(call: Any, **kwargs: Any) -> ClientError:
    with pytest.raises(ClientError) as raised:
        call(**kwargs)
    return raised.value


def test_a_macro_of_one_stack_transforms_another_stacks_template_in_the_services_order(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    server = serve(tmp_path / "note", "--no-reload", "--moto")
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    cloudformation.create_stack(StackName="macro", TemplateBody=MACRO_TEMPLATE, Capabilities=["CAPABILITY_IAM"])
    settled(cloudformation, "macro", "stack_create_complete")

    refused = error_of(cloudformation.create_stack, StackName="user", TemplateBody=USER_TEMPLATE,
                       Parameters=[{"ParameterKey": "Word", "ParameterValue": "bye"}])
    assert refused.response["Error"]["Code"] == "InsufficientCapabilitiesException"
    assert refused.response["Error"]["Message"] == "Requires capabilities : [CAPABILITY_AUTO_EXPAND]"

    cloudformation.create_stack(StackName="user", TemplateBody=USER_TEMPLATE, Capabilities=["CAPABILITY_AUTO_EXPAND"],
                                Parameters=[{"ParameterKey": "Word", "ParameterValue": "bye"}])
    settled(cloudformation, "user", "stack_create_complete")
    shown = outputs(cloudformation, "user")
    assert shown["Greeting"] == "pre-plain"  # Fn::Transform's siblings, transformed
    event = json.loads(shown["Event"])
    assert event["keys"] == ["accountId", "fragment", "params", "region", "requestId", "templateParameterValues", "transformId"]
    assert event["transformId"].endswith("::Stamp") and event["transformId"].split("::")[0].isdigit()
    assert event["params"] == {} and event["values"] == {"Word": "bye"} and event["region"] == "us-east-1"
    assert event["greeting"] == "pre-plain"  # the Fn::Transform ran first, the Transform section after it

    original = cloudformation.get_template(StackName="user", TemplateStage="Original")["TemplateBody"]
    assert original == USER_TEMPLATE
    processed = cloudformation.get_template(StackName="user", TemplateStage="Processed")["TemplateBody"]  # JSON: boto3 decodes it
    assert "Transform" not in processed and dict(processed["Outputs"]["Greeting"]) == {"Value": "pre-plain"}
    assert "Event" in processed["Outputs"]

    summary = cloudformation.get_template_summary(StackName="user")  # the summary reads the template as the macros made it
    assert [p["ParameterKey"] for p in summary["Parameters"]] == ["Word"]
    assert summary["DeclaredTransforms"] == ["Stamp"]  # as declared, though the processed template has no Transform left
    assert cloudformation.validate_template(TemplateBody=USER_TEMPLATE)["Parameters"][0]["ParameterKey"] == "Word"

    # a change set needs no CAPABILITY_AUTO_EXPAND (it is the review the capability stands for); its macros run too
    cloudformation.create_change_set(StackName="user", ChangeSetName="again", TemplateBody=USER_TEMPLATE,
                                     Parameters=[{"ParameterKey": "Word", "ParameterValue": "again"}])
    cloudformation.get_waiter("change_set_create_complete").wait(StackName="user", ChangeSetName="again",
                                                                   WaiterConfig={"Delay": 0.1, "MaxAttempts": 600})
    cloudformation.execute_change_set(StackName="user", ChangeSetName="again")
    settled(cloudformation, "user", "stack_update_complete")
    assert json.loads(outputs(cloudformation, "user")["Event"])["values"] == {"Word": "again"}

    # a failing macro fails the operation, not the API call: CreateStack rolls the new stack back with the macro's words
    said = f"Transform {event['transformId']} failed with: the macro says no"
    cloudformation.create_stack(StackName="failing", TemplateBody=FAILING_TEMPLATE, Capabilities=["CAPABILITY_AUTO_EXPAND"])
    assert cloudformation.describe_stacks(StackName="failing")["Stacks"][0]["StackStatus"] == "ROLLBACK_COMPLETE"
    events = cloudformation.describe_stack_events(StackName="failing")["StackEvents"]
    assert [(e["ResourceStatus"], e.get("ResourceStatusReason")) for e in reversed(events)] == [
        ("CREATE_IN_PROGRESS", "User Initiated"), ("ROLLBACK_IN_PROGRESS", f"{said}. Rollback requested by user."), ("ROLLBACK_COMPLETE", None)]
    assert cloudformation.list_stack_resources(StackName="failing")["StackResourceSummaries"] == []
    cloudformation.delete_stack(StackName="failing")
    settled(cloudformation, "failing", "stack_delete_complete")
    # a function that raises: the service's words name no error (LocalStack's AWS-recorded test_failed_state)
    cloudformation.create_stack(StackName="raising", TemplateBody=FAILING_TEMPLATE.replace("Fail:", "Raise:"),
                                Capabilities=["CAPABILITY_AUTO_EXPAND"])
    reasons = [e.get("ResourceStatusReason") for e in cloudformation.describe_stack_events(StackName="raising")["StackEvents"]]
    assert f"Received malformed response from transform {event['transformId']}. Rollback requested by user." in reasons
    # ...and a change set (of a new stack, or of one that exists) ends FAILED with them, nothing changed
    for stack, kind in (("failing-new", "CREATE"), ("user", "UPDATE")):
        cloudformation.create_change_set(StackName=stack, ChangeSetName="failing", ChangeSetType=kind, TemplateBody=FAILING_TEMPLATE)
        described = cloudformation.describe_change_set(StackName=stack, ChangeSetName="failing")
        assert (described["Status"], described["StatusReason"], described["ExecutionStatus"]) == ("FAILED", said, "UNAVAILABLE")
        assert described["Changes"] == []
        refused = error_of(cloudformation.execute_change_set, StackName=stack, ChangeSetName="failing")
        assert refused.response["Error"]["Code"] == "InvalidChangeSetStatus"
    assert cloudformation.describe_stacks(StackName="failing-new")["Stacks"][0]["StackStatus"] == "REVIEW_IN_PROGRESS"
    assert cloudformation.describe_stacks(StackName="user")["Stacks"][0]["StackStatus"] == "UPDATE_COMPLETE"
    cloudformation.delete_stack(StackName="failing-new")

    cloudformation.create_stack(StackName="twice", TemplateBody=MACRO_TEMPLATE, Capabilities=["CAPABILITY_IAM"])
    with pytest.raises(AssertionError) as rolled_back:  # settled() says why: each reason in the stack's events
        settled(cloudformation, "twice", "stack_create_complete")
    # the service's early validation finds the name taken (the Macro's provisioner refuses it too, were validation off)
    assert "[AWS::EarlyValidation::ResourceExistenceCheck]" in str(rolled_back.value)

    cloudformation.delete_stack(StackName="user")
    settled(cloudformation, "user", "stack_delete_complete")
    cloudformation.delete_stack(StackName="macro")
    settled(cloudformation, "macro", "stack_delete_complete")
    cloudformation.create_stack(StackName="late", TemplateBody=USER_TEMPLATE, Capabilities=["CAPABILITY_AUTO_EXPAND"])
    gone = cloudformation.describe_stack_events(StackName="late")["StackEvents"][1]
    assert (gone["ResourceStatus"], gone["ResourceStatusReason"]) == (
        "ROLLBACK_IN_PROGRESS", f"No transform named {event['transformId']} found.. Rollback requested by user.")
    assert error_of(cloudformation.validate_template, TemplateBody=USER_TEMPLATE).response["Error"]["Code"] == "ValidationError"


def test_a_stack_made_by_a_macro_is_read_back_from_state_without_running_the_macro_again(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    kept = str(tmp_path / "kept")
    server = serve(tmp_path / "note", "--no-reload", "--moto", "--state", kept)
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    cloudformation.create_stack(StackName="macro", TemplateBody=MACRO_TEMPLATE, Capabilities=["CAPABILITY_IAM"])
    settled(cloudformation, "macro", "stack_create_complete")
    cloudformation.create_stack(StackName="user", TemplateBody=USER_TEMPLATE, Capabilities=["CAPABILITY_AUTO_EXPAND"])
    settled(cloudformation, "user", "stack_create_complete")
    server.stop()

    again = serve(tmp_path / "note", "--no-reload", "--moto", "--state", kept)
    again.has_printed(r"function \S+ \(a stack's AWS::Lambda::Function\) served again")  # the macro's inline function
    cloudformation = boto3.client("cloudformation", endpoint_url=again.url, **CREDENTIALS)
    assert cloudformation.describe_stacks(StackName="user")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
    assert cloudformation.get_template(StackName="user", TemplateStage="Original")["TemplateBody"] == USER_TEMPLATE
    processed = cloudformation.get_template(StackName="user", TemplateStage="Processed")["TemplateBody"]
    assert dict(processed["Outputs"]["Greeting"]) == {"Value": "pre-plain"} and "Event" in processed["Outputs"]
    cloudformation.delete_stack(StackName="user")
    settled(cloudformation, "user", "stack_delete_complete")

    # the macro kept in state still transforms a new template: its stack's inline function is served again
    cloudformation.create_stack(StackName="after", TemplateBody=USER_TEMPLATE, Capabilities=["CAPABILITY_AUTO_EXPAND"],
                                Parameters=[{"ParameterKey": "Word", "ParameterValue": "after"}])
    settled(cloudformation, "after", "stack_create_complete")
    assert json.loads(outputs(cloudformation, "after")["Event"])["values"] == {"Word": "after"}
    cloudformation.delete_stack(StackName="after")
    settled(cloudformation, "after", "stack_delete_complete")


MACRO_FUNCTIONS = """\
Transform: AWS::Serverless-2016-10-31
Resources:
  StampFunction:
    Type: AWS::Serverless::Function
    Properties: {Handler: macro.handler, Runtime: python3.11, CodeUri: src/, Timeout: 10}
"""

MACRO_ONLY = """\
Resources:
  Macro:
    Type: AWS::CloudFormation::Macro
    Properties: {Name: Stamp, FunctionName: StampFunction}
"""


def test_a_macro_kept_in_state_with_a_functions_function_runs_for_cfnrun_stack_test(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    (tmp_path / "functions" / "src").mkdir(parents=True)
    (tmp_path / "functions" / "template.yaml").write_text(MACRO_FUNCTIONS)
    source = MACRO_TEMPLATE.split("ZipFile: |\n", 1)[1].split("  Macro:\n", 1)[0]
    (tmp_path / "functions" / "src" / "macro.py").write_text("\n".join(line[10:] for line in source.splitlines()) + "\n")
    # a note (the sample provider) rather than a WaitConditionHandle, whose leftover check needs an AWS endpoint
    (tmp_path / "user.yaml").write_text(USER_TEMPLATE.replace(
        "    Type: AWS::CloudFormation::WaitConditionHandle\n", "    Type: Cfnrun::Sample::Note\n    Properties: {Title: !Ref Word}\n"))
    functions, kept = str(tmp_path / "functions" / "template.yaml"), str(tmp_path / "kept")
    server = serve(tmp_path / "note", "--no-reload", "--functions", functions, "--state", kept)
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    cloudformation.create_stack(StackName="macro", TemplateBody=MACRO_ONLY)
    settled(cloudformation, "macro", "stack_create_complete")
    server.stop()

    from conftest import cfnrun

    tested = cfnrun("stack", "test", "user.yaml", "--provider", "note", "--functions", functions, "--state", kept,
                    "--parameters", "Word=tested", cwd=tmp_path, timeout=300)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    log = (tmp_path / ".cfnrun" / "stack-test.log").read_text()  # the handlers' output
    assert "StampFunction macro Stamp → success" in log, log
    assert "Macro (AWS::CloudFormation::Macro Stamp) is gone from the AWS endpoint" not in log  # it never was there
