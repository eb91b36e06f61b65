"""CAPABILITY_IAM and CAPABILITY_NAMED_IAM on ``cfnrun serve``'s local stacks, as the service answers them: CreateStack and
UpdateStack refused at the call, CreateChangeSet too for a plain template and FAILED for one with a Transform (SAM's function
role counts), ValidateTemplate naming what is needed, and a nested stack given only its parent's acknowledgement."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError, WaiterError

from conftest import LOCAL_STATE, SAMPLES
from stack_waits import FAST, settled

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
TRUST = {"Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
ROLE = json.dumps({"Resources": {"Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
                                 "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": TRUST}}}})
NAMED_ROLE = json.dumps({"Resources": {"Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": TRUST,
                                                                                         "RoleName": "named-role"}}}})
SAM_FUNCTION = """\
Transform: AWS::Serverless-2016-10-31
Resources:
  Greeter:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: index.handler
      InlineCode: |
        def handler(event, context):
            return {}
"""


def refusal(call: Any, **kwargs: Any) -> Any:
    with pytest.raises(ClientError) as raised:
        call(**kwargs)
    error = raised.value.response["Error"]
    return error["Code"], error["Message"]


def test_iam_resources_need_their_capability_acknowledged_as_the_service_asks(serve, tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    server = serve(tmp_path / "note", "--no-reload", "--moto")
    cfn = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    insufficient = "InsufficientCapabilitiesException"

    # ValidateTemplate and GetTemplateSummary say what a template needs, and why
    validated = cfn.validate_template(TemplateBody=ROLE)
    assert (validated["Capabilities"], validated["CapabilitiesReason"]) == (
        ["CAPABILITY_IAM"], "The following resource(s) require capabilities: [AWS::IAM::Role]")
    assert cfn.get_template_summary(TemplateBody=NAMED_ROLE)["Capabilities"] == ["CAPABILITY_NAMED_IAM"]
    assert "Capabilities" not in cfn.validate_template(TemplateBody=json.dumps({"Resources": {
        "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"}}}))

    # CreateStack: refused at the call, in the service's words; accepted once acknowledged
    assert refusal(cfn.create_stack, StackName="roles", TemplateBody=ROLE) == (insufficient, "Requires capabilities : [CAPABILITY_IAM]")
    assert refusal(cfn.create_stack, StackName="roles", TemplateBody=NAMED_ROLE, Capabilities=["CAPABILITY_IAM"]) == (
        insufficient, "Requires capabilities : [CAPABILITY_NAMED_IAM]")
    with pytest.raises(ClientError, match="does not exist"):
        cfn.describe_stacks(StackName="roles")  # nothing was made
    cfn.create_stack(StackName="roles", TemplateBody=ROLE, Capabilities=["CAPABILITY_IAM"])
    settled(cfn, "roles", "stack_create_complete")
    assert cfn.describe_stacks(StackName="roles")["Stacks"][0]["Capabilities"] == ["CAPABILITY_IAM"]
    assert refusal(cfn.update_stack, StackName="roles", TemplateBody=NAMED_ROLE, Capabilities=["CAPABILITY_IAM"]) == (
        insufficient, "Requires capabilities : [CAPABILITY_NAMED_IAM]")

    # CreateChangeSet: a plain template is refused at the call; a SAM one is processed as the change set is made: it FAILs
    assert refusal(cfn.create_change_set, StackName="planned", ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=ROLE) == (
        insufficient, "Requires capabilities : [CAPABILITY_IAM]")
    made = cfn.create_change_set(StackName="sam", ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=SAM_FUNCTION)
    with pytest.raises(WaiterError):
        cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=made["Id"], WaiterConfig=FAST)
    described = cfn.describe_change_set(ChangeSetName=made["Id"])
    assert (described["Status"], described["ExecutionStatus"], described["StatusReason"]) == (
        "FAILED", "UNAVAILABLE", "Requires capabilities : [CAPABILITY_IAM]")
    assert cfn.describe_stacks(StackName="sam")["Stacks"][0]["StackStatus"] == "REVIEW_IN_PROGRESS"

    # A nested stack is given its parent's acknowledgement: a named role the parent did not acknowledge fails its resource
    (tmp_path / "child.json").write_text(NAMED_ROLE)
    parent = json.dumps({"Resources": {"Child": {"Type": "AWS::CloudFormation::Stack",
                                                 "Properties": {"TemplateURL": str(tmp_path / "child.json")}}}})
    cfn.create_stack(StackName="nest", TemplateBody=parent, Capabilities=["CAPABILITY_IAM"])
    with pytest.raises(WaiterError):
        cfn.get_waiter("stack_create_complete").wait(StackName="nest", WaiterConfig=FAST)
    events = cfn.describe_stack_events(StackName="nest")["StackEvents"]
    failed = [e["ResourceStatusReason"] for e in events if e["LogicalResourceId"] == "Child" and e["ResourceStatus"] == "CREATE_FAILED"]
    assert failed == ["Requires capabilities : [CAPABILITY_NAMED_IAM]"], failed
    cfn.create_stack(StackName="nest-acknowledged", TemplateBody=parent, Capabilities=["CAPABILITY_NAMED_IAM"])
    settled(cfn, "nest-acknowledged", "stack_create_complete")
