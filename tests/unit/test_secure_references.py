"""Where ``{{resolve:ssm-secure:…}}`` may stand: the places the service names when it refuses one."""
from __future__ import annotations

import json
from typing import Any, Dict

from cfnrun.stacks.template.loading import load_stack_template
from cfnrun.stacks.template.secure_references import secure_reference_problem, unsupported_secure_references

SECURE = "{{resolve:ssm-secure:/db/password:2}}"


def _places(resources: Dict[str, Any], outputs: Any = None) -> Any:
    document: Dict[str, Any] = {"Resources": resources}
    if outputs:
        document["Outputs"] = outputs
    return unsupported_secure_references(load_stack_template(json.dumps(document), {}, None, None))


def test_the_documented_properties_take_it_whole_or_inside_a_function() -> None:
    assert _places({
        "Db": {"Type": "AWS::RDS::DBInstance", "Properties": {"MasterUserPassword": SECURE}},
        "User": {"Type": "AWS::IAM::User", "Properties": {"LoginProfile": {"Password": {"Fn::Sub": f"x-{SECURE}"}}}},
        "Stack": {"Type": "AWS::OpsWorks::Stack", "Properties": {"RdsDbInstances": [{"DbPassword": SECURE}]}},
        "Mine": {"Type": "Company::Service::Thing", "Properties": {"Password": SECURE}},  # your own types (inferred)
    }) == []


def test_anywhere_else_is_named_as_the_service_names_it() -> None:
    places = _places(
        {
            "Fn": {"Type": "AWS::Lambda::Function", "Properties": {"Environment": {"Variables": {"API_KEY": SECURE}}}},
            "Custom": {"Type": "Custom::Thing", "Properties": {"ServiceToken": "arn", "Secret": SECURE}},
            "Plain": {"Type": "AWS::SSM::Parameter", "Properties": {"Value": "{{resolve:ssm:/db/plain}}"}},  # ssm is not ssm-secure
        },
        {"Shown": {"Value": {"Fn::Join": ["", [SECURE]]}}},
    )
    assert places == ["AWS::Lambda::Function/Properties/Environment/Variables/API_KEY", "Custom::Thing/Properties/Secret", "Outputs/Shown/Value"]


def test_the_refusal_lists_every_place_in_the_services_words() -> None:
    template = load_stack_template(json.dumps({"Resources": {
        "A": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": SECURE, "DisplayName": SECURE}}}}), {}, None, None)
    assert secure_reference_problem(template) == (
        "SSM Secure reference is not supported in: [AWS::SNS::Topic/Properties/TopicName,AWS::SNS::Topic/Properties/DisplayName]"
    )


def test_what_secure_references_read_joins_the_stacks_secrets_and_what_plain_ones_read_does_not() -> None:
    import asyncio

    from cfnrun.app.stacks.dynamic_references import EndpointValues, ResolvingProvisioner
    from cfnrun.stacks.provisioning import Provisioned, ResourceWork, StackContext

    class Held(EndpointValues):  # what the endpoint's Systems Manager holds (AWS itself is what tests stand in for)
        def value(self, service: str, key: str) -> str:
            return {"/db/password:2": "s3cret-value", "/db/plain": "plain-value"}[key]

    given: list = []

    class Inner:
        async def create(self, work: ResourceWork) -> Provisioned:
            given.append(work)
            return Provisioned("id", "id")

    provisioner = ResolvingProvisioner(Inner(), Held(None, "us-east-1"))  # type: ignore[arg-type]
    stack = StackContext("arn", "name", "us-east-1", "123456789012", secrets=("NoEchoValue",))
    properties = {"Password": SECURE, "Name": "{{resolve:ssm:/db/plain}}"}
    asyncio.run(provisioner.create(ResourceWork(stack, "Db", "Company::Service::Thing", properties)))
    [work] = given
    assert work.properties == {"Password": "s3cret-value", "Name": "plain-value"}
    assert work.stack.secrets == ("NoEchoValue", "s3cret-value")
