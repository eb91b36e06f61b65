"""Values as the service resolves them, on a real ``cfnrun serve --moto`` driven by boto3 (issue #29 §4).

``AWS::SSM::Parameter::Value<...>`` parameters are read from the AWS endpoint's Systems Manager
(moto here) when the call arrives, shown as DescribeStacks' ``ResolvedValue``, read again on
every update, and a parameter that is not there refuses the call with the service's words.
"""
from __future__ import annotations

import json
import re
import shutil
from typing import Any, Dict, Iterator, List

import pytest
from botocore.exceptions import ClientError, WaiterError

from conftest import LOCAL_STATE, SAMPLES, ServerProcess

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
FAST = {"Delay": 0.1, "MaxAttempts": 600}


class Served:
    def __init__(self, server: ServerProcess) -> None:
        import boto3

        announced = re.search(r"at (http://[0-9.]+:[0-9]+)", server.has_printed(r"moto server \(AWS stand-in\) at"))
        assert announced, server.output
        self.cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        self.ssm = boto3.client("ssm", endpoint_url=announced.group(1), **CREDENTIALS)
        self.ec2 = boto3.client("ec2", endpoint_url=announced.group(1), **CREDENTIALS)

    def wait(self, waiter: str, stack: str) -> None:
        self.cloudformation.get_waiter(waiter).wait(StackName=stack, WaiterConfig=FAST)

    def described(self, stack: str) -> Dict[str, Any]:
        return self.cloudformation.describe_stacks(StackName=stack)["Stacks"][0]

    def outputs(self, stack: str) -> Dict[str, str]:
        return {o["OutputKey"]: o["OutputValue"] for o in self.described(stack).get("Outputs", [])}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("values") / "note"
    shutil.copytree(SAMPLES / "note", folder, ignore=LOCAL_STATE)
    server = ServerProcess(folder, "--no-reload", "--moto", "--virtual-clock")
    try:
        yield Served(server)
    finally:
        server.stop()


def _parameters(**values: str) -> List[Dict[str, str]]:
    return [{"ParameterKey": key, "ParameterValue": value} for key, value in values.items()]


SSM_TYPED = json.dumps(
    {
        "Parameters": {
            "Greeting": {"Type": "AWS::SSM::Parameter::Value<String>"},
            "Zones": {"Type": "AWS::SSM::Parameter::Value<List<String>>"},
            "Image": {"Type": "AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>", "Default": "/values/image"},
        },
        "Resources": {"Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
        "Outputs": {
            "Greeting": {"Value": {"Ref": "Greeting"}},
            "SecondZone": {"Value": {"Fn::Select": [1, {"Ref": "Zones"}]}},
            "Image": {"Value": {"Ref": "Image"}},
        },
    }
)


def test_ssm_typed_parameters_are_read_from_the_endpoint_shown_as_resolved_value_and_read_again_on_update(served: Served) -> None:
    served.ssm.put_parameter(Name="/values/greeting", Value="hello", Type="String", Overwrite=True)
    served.ssm.put_parameter(Name="/values/zones", Value="us-east-1a,us-east-1b", Type="StringList", Overwrite=True)
    served.ssm.put_parameter(Name="/values/image", Value="ami-0123456789abcdef0", Type="String", Overwrite=True)
    given = _parameters(Greeting="/values/greeting", Zones="/values/zones")
    served.cloudformation.create_stack(StackName="ssm-typed", TemplateBody=SSM_TYPED, Parameters=given)
    served.wait("stack_create_complete", "ssm-typed")
    assert served.outputs("ssm-typed") == {"Greeting": "hello", "SecondZone": "us-east-1b", "Image": "ami-0123456789abcdef0"}
    shown = {p["ParameterKey"]: p for p in served.described("ssm-typed")["Parameters"]}
    assert shown["Greeting"] == {"ParameterKey": "Greeting", "ParameterValue": "/values/greeting", "ResolvedValue": "hello"}
    assert shown["Zones"]["ResolvedValue"] == "us-east-1a,us-east-1b"
    assert shown["Image"] == {"ParameterKey": "Image", "ParameterValue": "/values/image", "ResolvedValue": "ami-0123456789abcdef0"}

    # The same template and parameter names: the service reads Systems Manager again, so a changed value updates the stack
    served.ssm.put_parameter(Name="/values/greeting", Value="hello again", Type="String", Overwrite=True)
    served.cloudformation.update_stack(StackName="ssm-typed", TemplateBody=SSM_TYPED, Parameters=given)
    served.wait("stack_update_complete", "ssm-typed")
    assert served.outputs("ssm-typed")["Greeting"] == "hello again"
    shown = {p["ParameterKey"]: p for p in served.described("ssm-typed")["Parameters"]}
    assert shown["Greeting"]["ResolvedValue"] == "hello again"
    served.ssm.put_parameter(Name="/values/greeting", Value="hello in a change set", Type="String", Overwrite=True)
    served.cloudformation.create_change_set(StackName="ssm-typed", ChangeSetName="reread", TemplateBody=SSM_TYPED, Parameters=given)
    served.cloudformation.get_waiter("change_set_create_complete").wait(StackName="ssm-typed", ChangeSetName="reread", WaiterConfig=FAST)
    planned = served.cloudformation.describe_change_set(StackName="ssm-typed", ChangeSetName="reread")["Parameters"]
    assert {p["ParameterKey"]: p.get("ResolvedValue") for p in planned}["Greeting"] == "hello in a change set"
    served.cloudformation.delete_change_set(StackName="ssm-typed", ChangeSetName="reread")
    served.ssm.put_parameter(Name="/values/greeting", Value="hello again", Type="String", Overwrite=True)
    with pytest.raises(ClientError) as unchanged:  # nothing read differs now
        served.cloudformation.update_stack(StackName="ssm-typed", TemplateBody=SSM_TYPED, Parameters=given)
    assert unchanged.value.response["Error"]["Message"] == "No updates are to be performed."


def test_an_ssm_typed_parameter_that_is_not_there_refuses_the_call_in_the_service_words(served: Served) -> None:
    given = _parameters(Greeting="/values/nowhere", Zones="/values/zones")
    served.ssm.put_parameter(Name="/values/zones", Value="a,b", Type="StringList", Overwrite=True)
    with pytest.raises(ClientError) as refused:
        served.cloudformation.create_stack(StackName="ssm-missing", TemplateBody=SSM_TYPED, Parameters=given)
    assert refused.value.response["Error"]["Code"] == "ValidationError"
    assert refused.value.response["Error"]["Message"] == "Unable to fetch parameters [/values/nowhere] from parameter store for this account."


def test_dynamic_references_are_resolved_on_the_endpoint_and_secure_values_never_shown(served: Served) -> None:
    import boto3

    served.ssm.put_parameter(Name="/values/plain", Value="plain-text", Type="String")
    served.ssm.put_parameter(Name="/values/secure", Value="s3cr3t-secure-value", Type="SecureString")
    secrets = boto3.client("secretsmanager", endpoint_url=served.ssm.meta.endpoint_url, **CREDENTIALS)
    secrets.create_secret(Name="values/db", SecretString=json.dumps({"password": "s3cr3t-manager-value"}))
    body = json.dumps(
        {
            "Resources": {
                "Plain": {"Type": "AWS::SSM::Parameter", "Properties": {
                    "Name": "/values/copied/plain", "Type": "String", "Value": "is {{resolve:ssm:/values/plain:1}}"}},
                "Secure": {"Type": "AWS::IAM::User", "Properties": {"LoginProfile": {"Password": "{{resolve:ssm-secure:/values/secure}}"}}},
                "Managed": {"Type": "AWS::SSM::Parameter", "Properties": {
                    "Name": "/values/copied/managed", "Type": "String",
                    "Value": "{{resolve:secretsmanager:values/db:SecretString:password}}"}},
            }
        }
    )
    served.cloudformation.create_stack(StackName="dynamic", TemplateBody=body, Capabilities=["CAPABILITY_IAM"])
    served.wait("stack_create_complete", "dynamic")
    copied = {p: served.ssm.get_parameter(Name=f"/values/copied/{p}")["Parameter"]["Value"] for p in ("plain", "managed")}
    assert copied == {"plain": "is plain-text", "managed": "s3cr3t-manager-value"}
    shown = json.dumps(
        [
            served.cloudformation.describe_stack_events(StackName="dynamic")["StackEvents"],
            served.cloudformation.describe_stack_resources(StackName="dynamic")["StackResources"],
            [served.cloudformation.describe_stack_resource(StackName="dynamic", LogicalResourceId=r)["StackResourceDetail"]
             for r in ("Secure", "Managed")],
        ],
        default=str,
    )
    assert "s3cr3t" not in shown


def test_a_dynamic_reference_to_a_parameter_that_is_not_there_fails_the_resource_in_the_service_words(served: Served) -> None:
    body = json.dumps({"Resources": {"Copy": {"Type": "AWS::SSM::Parameter", "Properties": {
        "Name": "/values/copied/none", "Type": "String", "Value": "{{resolve:ssm:/values/absent}}"}}}})
    served.cloudformation.create_stack(StackName="dynamic-missing", TemplateBody=body)
    with pytest.raises(WaiterError, match="ROLLBACK_COMPLETE"):  # create_complete's waiter stops on the rollback's end
        served.wait("stack_create_complete", "dynamic-missing")
    events = served.cloudformation.describe_stack_events(StackName="dynamic-missing")["StackEvents"]
    reasons = [e.get("ResourceStatusReason") for e in events if e["LogicalResourceId"] == "Copy" and e["ResourceStatus"] == "CREATE_FAILED"]
    assert reasons == ["Parameters: [ssm:/values/absent] cannot be found."]


def test_getatt_of_an_attribute_the_endpoint_does_not_give_is_read_from_the_resource(served: Served) -> None:
    body = json.dumps(
        {
            "Resources": {"Setting": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": "/values/setting", "Type": "String", "Value": "on"}}},
            "Outputs": {
                "Name": {"Value": {"Ref": "Setting"}},
                "Value": {"Value": {"Fn::GetAtt": ["Setting", "Value"]}},
                "Type": {"Value": {"Fn::GetAtt": ["Setting", "Type"]}},
            },
        }
    )
    served.cloudformation.create_stack(StackName="getatt-aws", TemplateBody=body)
    served.wait("stack_create_complete", "getatt-aws")
    assert served.outputs("getatt-aws") == {"Name": "/values/setting", "Value": "on", "Type": "String"}
    assert served.ssm.get_parameter(Name="/values/setting")["Parameter"]["Value"] == "on"


def test_an_unnamed_ssm_parameter_gets_the_name_cloudformation_would_generate_and_keeps_it_on_update(served: Served) -> None:
    def body(value: str) -> str:
        return json.dumps(
            {
                "Resources": {"UnnamedSetting": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": value}}},
                "Outputs": {"Name": {"Value": {"Ref": "UnnamedSetting"}}},
            }
        )

    served.cloudformation.create_stack(StackName="generated-name", TemplateBody=body("first"))
    served.wait("stack_create_complete", "generated-name")
    name = served.outputs("generated-name")["Name"]
    assert re.fullmatch(r"CFN-UnnamedSetting-[A-Za-z0-9]{12}", name), name
    assert served.ssm.get_parameter(Name=name)["Parameter"]["Value"] == "first"
    physical = served.cloudformation.describe_stack_resource(StackName="generated-name", LogicalResourceId="UnnamedSetting")
    assert physical["StackResourceDetail"]["PhysicalResourceId"] == name

    served.cloudformation.update_stack(StackName="generated-name", TemplateBody=body("second"))
    served.wait("stack_update_complete", "generated-name")
    assert served.outputs("generated-name")["Name"] == name
    assert served.ssm.get_parameter(Name=name)["Parameter"]["Value"] == "second"


def test_a_deletion_policy_given_by_an_intrinsic_function_is_accepted_without_a_transform_and_applied(served: Served) -> None:
    body = json.dumps(
        {
            "Parameters": {"Stage": {"Type": "String"}, "Replaced": {"Type": "String", "Default": "Delete"}},
            "Conditions": {"IsProd": {"Fn::Equals": [{"Ref": "Stage"}, "prod"]}},
            "Resources": {
                "Kept": {
                    "Type": "AWS::SSM::Parameter",
                    "DeletionPolicy": {"Fn::If": ["IsProd", "Retain", "Delete"]},
                    "UpdateReplacePolicy": {"Ref": "Replaced"},
                    "Properties": {"Name": "/values/kept", "Type": "String", "Value": "stays"},
                },
                "Gone": {
                    "Type": "AWS::SSM::Parameter",
                    "DeletionPolicy": {"Fn::If": ["IsProd", "Delete", "Retain"]},
                    "Properties": {"Name": "/values/gone", "Type": "String", "Value": "goes"},
                },
            },
        }
    )
    served.cloudformation.create_stack(StackName="policies", TemplateBody=body, Parameters=_parameters(Stage="prod"))
    served.wait("stack_create_complete", "policies")
    served.cloudformation.delete_stack(StackName="policies")
    served.wait("stack_delete_complete", "policies")
    assert served.ssm.get_parameter(Name="/values/kept")["Parameter"]["Value"] == "stays"
    with pytest.raises(ClientError, match="ParameterNotFound"):
        served.ssm.get_parameter(Name="/values/gone")


def test_ssm_secure_is_refused_where_the_service_does_not_take_it_and_read_where_it_does(served: Served) -> None:
    cfn = served.cloudformation
    copied = {"Type": "AWS::SSM::Parameter", "Properties": {"Name": "/values/copied/refused", "Type": "String",
                                                           "Value": "{{resolve:ssm-secure:/values/secure}}"}}
    body = json.dumps({"Resources": {"Copy": copied}, "Outputs": {"Shown": {"Value": "{{resolve:ssm-secure:/values/secure}}"}}})
    expected = "SSM Secure reference is not supported in: [AWS::SSM::Parameter/Properties/Value,Outputs/Shown/Value]"
    made = cfn.create_change_set(StackName="secure-refused", ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=body)
    with pytest.raises(WaiterError):
        cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=made["Id"], WaiterConfig={"Delay": 0.1, "MaxAttempts": 600})
    described = cfn.describe_change_set(ChangeSetName=made["Id"])
    assert (described["Status"], described["ExecutionStatus"], described["StatusReason"]) == ("FAILED", "UNAVAILABLE", expected)
    with pytest.raises(ClientError) as refused:
        cfn.create_stack(StackName="secure-refused-stack", TemplateBody=body)
    assert (refused.value.response["Error"]["Code"], refused.value.response["Error"]["Message"]) == ("ValidationError", expected)
    custom = json.dumps({"Resources": {"Custom": {"Type": "Custom::Thing", "Properties": {
        "ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:nothing", "Secret": {"Fn::Sub": "x{{resolve:ssm-secure:/a}}"}}}}})
    with pytest.raises(ClientError, match=r"SSM Secure reference is not supported in: \[Custom::Thing/Properties/Secret\]"):
        cfn.create_stack(StackName="secure-custom", TemplateBody=custom)

    # Where the service takes it, it is read on the endpoint: a secure parameter that is not there fails the resource.
    absent = json.dumps({"Resources": {"User": {"Type": "AWS::IAM::User", "Properties": {
        "LoginProfile": {"Password": "{{resolve:ssm-secure:/values/absent-secure}}"}}}}})
    cfn.create_stack(StackName="secure-absent", TemplateBody=absent, Capabilities=["CAPABILITY_IAM"])
    with pytest.raises(WaiterError, match="ROLLBACK_COMPLETE"):
        served.wait("stack_create_complete", "secure-absent")
    events = cfn.describe_stack_events(StackName="secure-absent")["StackEvents"]
    reasons = [e.get("ResourceStatusReason") for e in events if e["LogicalResourceId"] == "User" and e["ResourceStatus"] == "CREATE_FAILED"]
    assert reasons == ["Parameters: [ssm-secure:/values/absent-secure] cannot be found."]


def test_outputs_that_are_booleans_or_numbers_read_as_the_service_writes_them(served: Served) -> None:
    """YAML's ``true`` (and YAML 1.1's ``yes``), a branch of Fn::If that is a boolean, a number: DescribeStacks shows
    ``true``/``false`` and the number's text, as Fn::Join and Fn::Sub already wrote them, never Python's ``True``."""
    body = (
        "Conditions: {Always: !Equals [a, a]}\n"
        "Resources: {Handle: {Type: AWS::CloudFormation::WaitConditionHandle}}\n"
        "Outputs:\n"
        "  Literal: {Value: true}\n"
        "  Affirmed: {Value: yes}\n"
        "  Branch: {Value: !If [Always, false, true]}\n"
        "  Joined: {Value: !Join [',', [true, 1]]}\n"
        "  Number: {Value: 2.0}\n"
    )
    served.cloudformation.create_stack(StackName="scalar-outputs", TemplateBody=body)
    served.wait("stack_create_complete", "scalar-outputs")
    assert served.outputs("scalar-outputs") == {"Literal": "true", "Affirmed": "true", "Branch": "false", "Joined": "true,1", "Number": "2"}


TYPED_LIST = "Template format error: The Value field of every Outputs member must evaluate to a String."


@pytest.mark.parametrize("name, value, refusal", [
    ("list-parameter", {"Ref": "Names"}, TYPED_LIST),
    ("list-attribute", {"Fn::GetAtt": ["Vpc", "CidrBlockAssociations"]}, TYPED_LIST),  # an array in AWS::EC2::VPC's schema
    ("split", {"Fn::Split": [",", "a,b"]}, TYPED_LIST),
    ("found-list", {"Fn::FindInMap": ["Zones", "dev", "Names"]}, TYPED_LIST[:-1] + " and not a List."),
], ids=["list-parameter", "list-attribute", "split", "found-list"])
def test_an_output_whose_value_is_a_list_refuses_the_call_and_makes_nothing(served: Served, name: str, value: Any, refusal: str) -> None:
    """The service's CreateStack answers as users quote them; the stack is never made, nor the VPC it declares."""
    vpcs = len(served.ec2.describe_vpcs()["Vpcs"])
    body = json.dumps({
        "Parameters": {"Names": {"Type": "CommaDelimitedList", "Default": "a,b"}},
        "Mappings": {"Zones": {"dev": {"Names": ["a", "b"]}}},
        "Resources": {"Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.9.0.0/16"}}},
        "Outputs": {"Out": {"Value": value}, "Joined": {"Value": {"Fn::Join": [",", {"Ref": "Names"}]}}},
    })
    with pytest.raises(ClientError) as refused:
        served.cloudformation.create_stack(StackName=name, TemplateBody=body)
    assert (refused.value.response["Error"]["Code"], refused.value.response["Error"]["Message"]) == ("ValidationError", refusal)
    with pytest.raises(ClientError, match="does not exist"):
        served.cloudformation.describe_stacks(StackName=name)
    assert len(served.ec2.describe_vpcs()["Vpcs"]) == vpcs


AWS_TYPED = json.dumps(
    {
        "Parameters": {
            "Key": {"Type": "AWS::EC2::KeyPair::KeyName", "NoEcho": True},
            "Vpc": {"Type": "AWS::EC2::VPC::Id"},
            "Subnets": {"Type": "List<AWS::EC2::Subnet::Id>"},
        },
        "Resources": {"Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
        "Outputs": {"Vpc": {"Value": {"Ref": "Vpc"}}},
    }
)


def test_aws_specific_parameter_values_naming_nothing_on_the_endpoint_stop_the_operation_as_it_starts(served: Served) -> None:
    served.ec2.create_key_pair(KeyName="deployer")
    vpc = served.ec2.describe_vpcs()["Vpcs"][0]["VpcId"]
    subnets = [subnet["SubnetId"] for subnet in served.ec2.describe_subnets()["Subnets"]][:2]
    served.cloudformation.create_stack(StackName="aws-typed", TemplateBody=AWS_TYPED,
                                       Parameters=_parameters(Key="deployer", Vpc=vpc, Subnets=",".join(subnets)))
    served.wait("stack_create_complete", "aws-typed")
    assert served.outputs("aws-typed") == {"Vpc": vpc}

    # a list's second item: the stack is made, then rolled back, its reason the service's words (nothing else is touched)
    served.cloudformation.create_stack(StackName="no-subnet", TemplateBody=AWS_TYPED,
                                       Parameters=_parameters(Key="deployer", Vpc=vpc, Subnets=f"{subnets[0]},subnet-0nothere"))
    with pytest.raises(WaiterError, match="ROLLBACK_COMPLETE"):
        served.wait("stack_create_complete", "no-subnet")
    events = served.cloudformation.describe_stack_events(StackName="no-subnet")["StackEvents"]
    assert [(e["LogicalResourceId"], e["ResourceStatus"]) for e in events][::-1] == [
        ("no-subnet", "CREATE_IN_PROGRESS"), ("no-subnet", "ROLLBACK_IN_PROGRESS"), ("no-subnet", "ROLLBACK_COMPLETE"),
    ]
    assert events[1]["ResourceStatusReason"] == (
        "Parameter validation failed: parameter value subnet-0nothere for parameter name Subnets does not exist. Rollback requested by user."
    )
    assert events[1]["DetailedStatus"] == "VALIDATION_FAILED"

    # an update: rolled back, the stack keeps its values; a NoEcho parameter's value is not shown
    served.cloudformation.update_stack(StackName="aws-typed", TemplateBody=AWS_TYPED,
                                       Parameters=_parameters(Key="not-a-key", Vpc=vpc, Subnets=",".join(subnets)))
    with pytest.raises(WaiterError, match="UPDATE_ROLLBACK_COMPLETE"):
        served.wait("stack_update_complete", "aws-typed")
    reasons = [e.get("ResourceStatusReason") for e in served.cloudformation.describe_stack_events(StackName="aws-typed")["StackEvents"]]
    assert "Parameter validation failed: parameter value **** for parameter name Key does not exist" in reasons
    assert not any("not-a-key" in (reason or "") for reason in reasons)
    assert served.outputs("aws-typed") == {"Vpc": vpc}


def test_an_image_and_an_instance_are_looked_up_by_their_ids(served: Served) -> None:
    """Asked for the values given (moto's EC2 holds 1,301 images: listing them all took seconds per operation)."""
    instance = served.ec2.run_instances(ImageId="ami-12345678", MinCount=1, MaxCount=1)["Instances"][0]["InstanceId"]
    image = served.ec2.create_image(InstanceId=instance, Name="golden")["ImageId"]
    template = json.dumps({
        "Parameters": {"Image": {"Type": "AWS::EC2::Image::Id"}, "Server": {"Type": "AWS::EC2::Instance::Id"}},
        "Resources": {"Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
    })
    served.cloudformation.create_stack(StackName="by-id", TemplateBody=template, Parameters=_parameters(Image=image, Server=instance))
    served.wait("stack_create_complete", "by-id")
    served.cloudformation.create_stack(StackName="no-image", TemplateBody=template,
                                       Parameters=_parameters(Image="ami-0nothere", Server=instance))
    with pytest.raises(WaiterError, match="ROLLBACK_COMPLETE"):
        served.wait("stack_create_complete", "no-image")
    reasons = [e.get("ResourceStatusReason") for e in served.cloudformation.describe_stack_events(StackName="no-image")["StackEvents"]]
    assert ("Parameter validation failed: parameter value ami-0nothere for parameter name Image does not exist. "
            "Rollback requested by user.") in reasons
