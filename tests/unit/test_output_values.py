"""An output whose Value is a list is refused when the operation is asked for, in the service's words (stacks/output_values.py)."""
from __future__ import annotations

import json
from typing import Any, Dict, Optional

import pytest

from cfnrun.model.schema import ResourceSchema
from cfnrun.stacks.blueprint import Blueprints
from cfnrun.stacks.exports import Exports
from cfnrun.stacks.output_values import EVALUATED_LIST, TYPED_LIST
from cfnrun.stacks.provisioning import NoProvisioner
from cfnrun.stacks.template.errors import TemplateError

SCHEMA = ResourceSchema({
    "typeName": "Test::Thing::Resource",
    "definitions": {"Endpoint": {"type": "object", "properties": {"Addresses": {"type": "array"}, "Host": {"type": "string"}}}},
    "properties": {
        "Name": {"type": "string"}, "Arn": {"type": "string"}, "Addresses": {"type": "array", "items": {"type": "string"}},
        "Endpoint": {"$ref": "#/definitions/Endpoint"}, "Tags": {"type": "array"},
    },
    "readOnlyProperties": ["/properties/Arn", "/properties/Addresses", "/properties/Endpoint"],
    "primaryIdentifier": ["/properties/Arn"],
})


class SchemaTyped:
    """A provisioner that knows its type's attributes from SCHEMA, as UserTypes does: only readOnly properties are attributes."""

    def lacks_attribute(self, type_name: str, attribute: str) -> bool:
        return "/properties/" + attribute.split(".")[0] not in SCHEMA.read_only_properties

    def attribute_type(self, type_name: str, attribute: str) -> Optional[str]:
        return SCHEMA.property_type(attribute.split("."))


class Router:
    def for_type(self, type_name: str) -> Any:
        if type_name == "Test::Thing::Resource":
            return SchemaTyped()
        if type_name == "Custom::Thing":
            return object()  # a custom resource's provisioner: its function answers what it likes
        raise NoProvisioner(type_name)


def _prepared(value: Any, condition: Optional[str] = None, **parameters: str) -> None:
    output: Dict[str, Any] = {"Value": value, **({"Condition": condition} if condition else {})}
    template = {
        "Parameters": {
            "Subnets": {"Type": "List<AWS::EC2::Subnet::Id>", "Default": "subnet-1,subnet-2"},
            "Names": {"Type": "CommaDelimitedList", "Default": "a,b"},
            "Stage": {"Type": "String", "Default": "dev"},
        },
        "Mappings": {"Zones": {"dev": {"List": ["a", "b"], "Text": "a"}}},
        "Conditions": {"IsDev": {"Fn::Equals": [{"Ref": "Stage"}, "dev"]}},
        "Resources": {"Thing": {"Type": "Test::Thing::Resource", "Properties": {"Name": "n"}},
                      "Custom": {"Type": "Custom::Thing", "Properties": {"ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:f"}}},
        "Outputs": {"Out": output},
    }
    blueprints = Blueprints(Router(), Exports(), "us-east-1", "123456789012")  # type: ignore[arg-type]
    blueprints.prepare(json.dumps(template), dict(parameters), {}, "s", "arn:aws:cloudformation:us-east-1:123456789012:stack/s/1")


@pytest.mark.parametrize("value", [
    {"Ref": "Subnets"}, {"Ref": "Names"}, {"Ref": "AWS::NotificationARNs"},
    {"Fn::GetAtt": ["Thing", "Addresses"]}, {"Fn::GetAtt": "Thing.Addresses"}, {"Fn::GetAtt": ["Thing", "Endpoint.Addresses"]},
    {"Fn::GetAZs": ""}, {"Fn::Split": [",", "a,b"]}, {"Fn::If": ["IsDev", {"Ref": "Subnets"}, "none"]},
], ids=lambda value: json.dumps(value))
def test_a_value_that_is_a_list_by_what_it_is_is_refused_in_the_services_words(value: Any) -> None:
    with pytest.raises(TemplateError) as refused:
        _prepared(value)
    assert str(refused.value) == TYPED_LIST == "Template format error: The Value field of every Outputs member must evaluate to a String."


@pytest.mark.parametrize("value", [
    {"Fn::FindInMap": ["Zones", {"Ref": "Stage"}, "List"]}, {"Fn::If": ["IsDev", ["a", "b"], "none"]},
], ids=lambda value: json.dumps(value))
def test_a_value_that_works_out_to_a_list_is_refused_as_a_list_written_out_is(value: Any) -> None:
    with pytest.raises(TemplateError) as refused:
        _prepared(value)
    assert str(refused.value) == EVALUATED_LIST


@pytest.mark.parametrize("value, condition, parameters", [
    ({"Fn::Join": [",", {"Ref": "Subnets"}]}, None, {}),
    ({"Fn::Select": [0, {"Ref": "Names"}]}, None, {}),
    ({"Fn::GetAtt": ["Thing", "Arn"]}, None, {}),
    ({"Fn::GetAtt": ["Thing", "Endpoint.Host"]}, None, {}),
    ({"Fn::GetAtt": ["Custom", "Anything"]}, None, {}),  # a custom resource's attribute: only its answer tells
    ({"Fn::FindInMap": ["Zones", {"Ref": "Stage"}, "Text"]}, None, {}),
    ({"Fn::If": ["IsDev", "dev", {"Ref": "Subnets"}]}, None, {}),  # the branch the condition picks is text
    ({"Ref": "Subnets"}, "IsDev", {"Stage": "prod"}),  # an output left out by its condition
], ids=lambda value: json.dumps(value))
def test_a_value_that_is_text_or_not_known_yet_is_taken(value: Any, condition: Optional[str], parameters: Dict[str, str]) -> None:
    _prepared(value, condition, **parameters)


def test_an_attribute_the_type_lacks_is_left_to_the_check_as_the_operation_starts() -> None:
    _prepared({"Fn::GetAtt": ["Thing", "Tags"]})  # an array, but no attribute: validation.unsupported_attribute refuses it
