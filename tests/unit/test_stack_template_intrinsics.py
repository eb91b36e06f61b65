"""Intrinsic functions, conditions and pseudo parameters worked out as the service works them out."""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping

import pytest

from cfnrun.model.template_text import decode_template
from cfnrun.stacks.template.conditions import evaluate_conditions
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.intrinsics import resolve
from cfnrun.stacks.template.parameters import ParameterValue
from cfnrun.stacks.template.policies import deletion_policy, keeps_resource, update_replace_policy
from cfnrun.stacks.template.declarations import ResourceDeclaration
from cfnrun.stacks.template.pseudo import NO_VALUE, PseudoParameters, stack_id

PSEUDO = PseudoParameters("123456789012", "eu-west-1", "arn:aws:cloudformation:eu-west-1:123456789012:stack/s/1", "s")


@dataclass
class Stack:
    """A ResolveContext as the stack engine would give it, with two resources that exist."""

    parameters: Mapping[str, ParameterValue] = field(default_factory=lambda: {"Env": "prod", "Zones": ["a", "b", "c"], "Port": "80"})
    pseudo_parameters: PseudoParameters = PSEUDO
    conditions: Mapping[str, bool] = field(default_factory=lambda: {"IsProd": True, "IsDev": False})
    mappings: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(
        default_factory=lambda: {"Sizes": {"prod": {"Count": 3, "Names": ["x", "y"]}, "dev": {"Count": 1}}}
    )
    exports: Dict[str, str] = field(default_factory=lambda: {"shared-vpc": "vpc-9"})

    def ref(self, logical_id: str) -> Any:
        if logical_id not in ("Bucket", "Db"):
            raise TemplateError(f"Template format error: Unresolved resource dependencies [{logical_id}] in the Resources block of the template")
        return f"{logical_id.lower()}-physical"

    def get_att(self, logical_id: str, attribute: str) -> Any:
        attributes = {("Bucket", "Arn"): "arn:aws:s3:::bucket-physical", ("Db", "Endpoint.Address"): "db.local"}
        if (logical_id, attribute) not in attributes:
            raise TemplateError(f"Requested attribute {attribute} does not exist in schema for AWS::S3::Bucket")
        return attributes[(logical_id, attribute)]

    def import_value(self, name: str) -> Any:
        if name not in self.exports:
            raise TemplateError(f"No export named {name} found.")
        return self.exports[name]

    def availability_zones(self, region: str) -> List[str]:
        return [f"{region}a", f"{region}b"]


def _resolve(yaml_value: str, context: Any = None) -> Any:
    return resolve(decode_template(f"V: {yaml_value}\n")["V"], context or Stack(), "Resources.R.Properties.V")


@pytest.mark.parametrize(
    "value, expected",
    [
        ("!Ref Env", "prod"),
        ("!Ref Zones", ["a", "b", "c"]),
        ("!Ref Bucket", "bucket-physical"),
        ("!Ref AWS::Region", "eu-west-1"),
        ("!Ref AWS::Partition", "aws"),
        ("!Ref AWS::URLSuffix", "amazonaws.com"),
        ("!Ref AWS::NotificationARNs", []),
        ("!GetAtt Bucket.Arn", "arn:aws:s3:::bucket-physical"),
        ("!GetAtt Db.Endpoint.Address", "db.local"),
        ("{Fn::GetAtt: [Db, Endpoint.Address]}", "db.local"),
        ("{Fn::GetAtt: [Bucket, !Join ['', [A, rn]]]}", "arn:aws:s3:::bucket-physical"),
        ("!Sub '${AWS::StackName}-${Env}-${Bucket}-${Bucket.Arn}-${!Literal}'", "s-prod-bucket-physical-arn:aws:s3:::bucket-physical-${Literal}"),
        ("!Sub ['${A}/${Port}', {A: !Ref Db}]", "db-physical/80"),
        ("!Join [',', [a, !Ref Env, 3]]", "a,prod,3"),
        ("!Join ['', !Ref Zones]", "abc"),
        ("!Select [1, !Ref Zones]", "b"),
        ("!Select ['0', !GetAZs '']", "eu-west-1a"),
        ("!Split [',', 'a,b,,c']", ["a", "b", "", "c"]),
        ("!If [IsProd, big, small]", "big"),
        ("!FindInMap [Sizes, !Ref Env, Count]", 3),
        ("!FindInMap [Sizes, dev, Names, {DefaultValue: [z]}]", ["z"]),
        ("!Base64 hello", base64.b64encode(b"hello").decode()),
        ("!Cidr [10.0.0.0/16, 3, 8]", ["10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24"]),
        ("!Cidr ['2001:db8::/56', 2, 64]", ["2001:db8::/64", "2001:db8:0:1::/64"]),
        ("!GetAZs us-east-2", ["us-east-2a", "us-east-2b"]),
        ("!ImportValue shared-vpc", "vpc-9"),
        ("!Length [1, !Ref AWS::NoValue, 3]", 2),
        ("!ToJsonString {a: [1, !Ref Env]}", '{"a":[1,"prod"]}'),
        ("!Equals [!Ref Port, 80]", True),
        ("!And [!Equals [a, a], !Condition IsProd]", True),
        ("!Or [!Condition IsDev, !Not [!Condition IsProd]]", False),
    ],
)
def test_functions(value: str, expected: Any) -> None:
    assert _resolve(value) == expected


def test_no_value_removes_the_key_or_item_and_is_returned_at_the_top() -> None:
    value = decode_template("A: !If [IsDev, x, !Ref AWS::NoValue]\nB: [1, !If [IsProd, !Ref AWS::NoValue, 2], 3]\nC: keep\n")
    assert resolve(value, Stack()) == {"B": [1, 3], "C": "keep"}
    assert resolve({"Ref": "AWS::NoValue"}, Stack()) is NO_VALUE


@pytest.mark.parametrize(
    "value, message",
    [
        ("!GetAtt Bucket.Nope", "Requested attribute Nope does not exist in schema for AWS::S3::Bucket"),
        ("!Select [5, !Ref Zones]", "Template error: Fn::Select cannot select nonexistent value at index 5"),
        ("!FindInMap [Sizes, test, Count]", "Template error: Unable to get mapping for Sizes::test::Count"),
        ("!Join [',', [a, {b: c}]]", "Template error: every Fn::Join object requires two parameters"),
        ("!Sub '${Zones}'", "Template error: variable Zones in Fn::Sub expression does not resolve to a string"),
        ("!Sub '${bad name}'", "Template error: variable names in Fn::Sub syntax must contain only alphanumeric"),
        ("!If [Nope, a, b]", "Template error: unresolved condition dependency Nope in Fn::If"),
        ("!If [IsProd, a]", "Template error: Fn::If requires a list argument with three elements"),
        ("!ImportValue missing", "No export named missing found."),
        ("!Cidr [10.0.0.0/24, 3, 12]", "Template error: Fn::Cidr"),
        ("{Fn::Nope: 1}", "Encountered unsupported function: Fn::Nope"),
        ("!Ref Ghost", r"Unresolved resource dependencies \[Ghost\]"),
    ],
)
def test_errors_in_the_services_words_with_the_place(value: str, message: str) -> None:
    with pytest.raises(TemplateError, match=message) as raised:
        _resolve(value)
    assert raised.value.where == "Resources.R.Properties.V"


def test_the_place_is_the_innermost() -> None:
    with pytest.raises(TemplateError) as raised:
        resolve({"Tags": [{"Key": "k", "Value": {"Fn::GetAtt": ["Bucket", "Nope"]}}]}, Stack(), "Resources.B.Properties")
    assert raised.value.where == "Resources.B.Properties.Tags[0].Value"


def test_conditions_evaluated_in_any_order_with_cycles_refused() -> None:
    conditions = decode_template(
        "Both: !And [!Condition IsProd, !Condition InEurope]\n"
        "IsProd: !Equals [!Ref Env, prod]\n"
        "InEurope: !Equals [!Select [0, !Split ['-', !Ref AWS::Region]], eu]\n"
        "Small: !Equals [!FindInMap [Sizes, !Ref Env, Count], 1]\n"
    )
    stack = Stack()
    assert evaluate_conditions(conditions, {"Env": "prod"}, PSEUDO, stack.mappings) == {
        "Both": True, "IsProd": True, "InEurope": True, "Small": False,
    }
    with pytest.raises(TemplateError, match=r"Circular dependency between conditions: \[A, B\]"):
        evaluate_conditions({"A": {"Fn::Not": [{"Condition": "B"}]}, "B": {"Fn::Not": [{"Condition": "A"}]}}, {}, PSEUDO, {})
    with pytest.raises(TemplateError, match="Cannot reference resources in the Conditions block") as raised:
        evaluate_conditions({"A": {"Fn::Equals": [{"Ref": "Bucket"}, "x"]}}, {}, PSEUDO, {})
    assert raised.value.where == "Conditions.A"
    with pytest.raises(TemplateError, match="Condition A must be one of"):
        evaluate_conditions({"A": "true"}, {}, PSEUDO, {})


def test_pseudo_parameters_follow_the_region() -> None:
    china = PseudoParameters("1", "cn-north-1", "id", "s")
    assert (china.partition, china.url_suffix) == ("aws-cn", "amazonaws.com.cn")
    assert PseudoParameters("1", "us-gov-west-1", "id", "s").partition == "aws-us-gov"
    assert stack_id("us-east-1", "123456789012", "notes", "uuid") == "arn:aws:cloudformation:us-east-1:123456789012:stack/notes/uuid"


def test_policies_default_to_delete_resolve_under_language_extensions_and_snapshot_keeps() -> None:
    assert deletion_policy(ResourceDeclaration("A", "X"), Stack()) == "Delete"
    resource = ResourceDeclaration("A", "X", deletion_policy={"Fn::If": ["IsProd", "Snapshot", "Delete"]}, update_replace_policy="Retain")
    assert deletion_policy(resource, Stack()) == "Snapshot" and keeps_resource("Snapshot")
    assert update_replace_policy(resource, Stack()) == "Retain"
    assert keeps_resource("RetainExceptOnCreate") and not keeps_resource("RetainExceptOnCreate", rolling_back_create=True)
    with pytest.raises(TemplateError, match="Unrecognized DeletionPolicy prod"):
        deletion_policy(ResourceDeclaration("A", "X", deletion_policy={"Ref": "Env"}), Stack())


def test_to_json_string_keeps_non_ascii_text() -> None:
    assert json.loads(_resolve("!ToJsonString {k: é}")) == {"k": "é"}
