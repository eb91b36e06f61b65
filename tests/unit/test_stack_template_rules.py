"""The Rules section checked with the operation's parameter values before anything runs (template/rules.py)."""
from __future__ import annotations

import json
from typing import Dict

import pytest

from cfnrun.stacks.blueprint import StackEnvironment, prepare
from cfnrun.stacks.template.errors import TemplateError

ENVIRONMENT = StackEnvironment("s", "arn:aws:cloudformation:us-east-1:123456789012:stack/s/1", "us-east-1", "123456789012")
NOTE = {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": "x"}}
CDK_BOOTSTRAP_RULE = {  # what every CDK v2 app's synthesized template carries
    "CheckBootstrapVersion": {"Assertions": [{
        "Assert": {"Fn::Not": [{"Fn::Contains": [["1", "2", "3", "4", "5"], {"Ref": "BootstrapVersion"}]}]},
        "AssertDescription": "CDK bootstrap stack version 6 required. Please run 'cdk bootstrap' with a recent version of the CDK CLI.",
    }]},
}
RULES = {
    **CDK_BOOTSTRAP_RULE,
    "ProdNeedsLarge": {  # the user guide's shape: a RuleCondition, then assertions
        "RuleCondition": {"Fn::Equals": [{"Ref": "Env"}, "prod"]},
        "Assertions": [{"Assert": {"Fn::Contains": [["m5.large", "m5.xlarge"], {"Ref": "Size"}]},
                        "AssertDescription": "prod needs a large instance"}],
    },
    "ZonesKnown": {"Assertions": [
        {"Assert": {"Fn::EachMemberIn": [{"Ref": "Zones"}, ["a", "b", "c"]]}, "AssertDescription": "unknown zone"},
        {"Assert": {"Fn::And": [{"Fn::EachMemberEquals": [{"Ref": "Zones"}, "a"]}, {"Fn::Not": [{"Fn::Equals": [{"Ref": "AWS::Region"}, "eu-west-1"]}]}]},
         "AssertDescription": "only zone a in this region"},
    ]},
    "NeedsTheAccount": {"Assertions": [  # Fn::ValueOf reads the account: not checked locally
        {"Assert": {"Fn::Equals": [{"Fn::ValueOf": ["Size", "Tags"]}, "x"]}, "AssertDescription": "never checked"}]},
}
PARAMETERS = {"BootstrapVersion": {"Type": "String", "Default": "20"}, "Env": {"Type": "String", "Default": "dev"},
              "Size": {"Type": "String", "Default": "t3.micro"}, "Zones": {"Type": "CommaDelimitedList", "Default": "a"}}
BODY = json.dumps({"Parameters": PARAMETERS, "Rules": RULES, "Resources": {"A": NOTE}})


def test_rules_that_hold_or_do_not_apply_let_the_operation_run() -> None:
    prepare(BODY, {}, {}, ENVIRONMENT)
    prepare(BODY, {"Env": "prod", "Size": "m5.large"}, {}, ENVIRONMENT)


@pytest.mark.parametrize("given, description", [
    ({"BootstrapVersion": "5"}, "CDK bootstrap stack version 6 required. Please run 'cdk bootstrap' with a recent version of the CDK CLI."),
    ({"Env": "prod"}, "prod needs a large instance"),
    ({"Zones": "a,d"}, "unknown zone"),
    ({"Zones": "a,b"}, "only zone a in this region"),
])
def test_a_false_assertion_refuses_the_operation_with_its_description(given: Dict[str, str], description: str) -> None:
    with pytest.raises(TemplateError) as refused:
        prepare(BODY, dict(given), {}, ENVIRONMENT)
    assert refused.value.message == description


def test_a_rule_cannot_read_a_resource() -> None:
    body = json.dumps({"Rules": {"R": {"Assertions": [{"Assert": {"Fn::Equals": [{"Ref": "A"}, "x"]}}]}}, "Resources": {"A": NOTE}})
    with pytest.raises(TemplateError, match=r"Unresolved dependencies \[A\]. Cannot reference resources in the Rules block"):
        prepare(body, {}, {}, ENVIRONMENT)
