"""Fn::ForEach (AWS::LanguageExtensions): every rule of the expansion, and the refusals, through the template loader."""
from __future__ import annotations

import json
from typing import Any, Dict, Optional

import pytest

from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.foreach import expand_for_each, uses_for_each
from cfnrun.stacks.template.loading import load_stack_template

EXT = "AWS::LanguageExtensions"


def expanded(template: Dict[str, Any], values: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """The document the loader keeps (what GetTemplate's Processed stage shows)."""
    return load_stack_template(json.dumps({"Transform": EXT, **template}), values).document


def refusal(template: Dict[str, Any], values: Optional[Dict[str, str]] = None) -> str:
    with pytest.raises(TemplateError) as caught:
        expanded(template, values)
    return caught.value.message


TOPIC = {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": {"Fn::Sub": "t-${Name}"}}}


def test_a_list_collection_makes_one_resource_per_item_with_dollar_placeholders_in_keys_and_values() -> None:
    document = expanded({"Resources": {"Fn::ForEach::Topics": ["Name", ["A", "B"], {"Topic${Name}": TOPIC}]}})
    assert document["Resources"] == {
        "TopicA": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "t-A"}},
        "TopicB": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "t-B"}},
    }
    assert "Transform" in document  # the rest of the template stays as written


def test_ampersand_placeholder_strips_non_alphanumerics_and_ref_to_the_identifier_is_the_item() -> None:
    document = expanded({"Resources": {"Fn::ForEach::Topics": [
        "Ip", ["10.0.0.1", "10.0.0.2"],
        {"Topic&{Ip}": {"Type": "AWS::SNS::Topic", "Properties": {"DisplayName": {"Ref": "Ip"}, "Tag": "&{Ip}"}}},
    ]}})
    assert document["Resources"]["Topic10001"]["Properties"] == {"DisplayName": "10.0.0.1", "Tag": "10001"}
    assert set(document["Resources"]) == {"Topic10001", "Topic10002"}


def test_a_sub_left_with_nothing_to_substitute_names_what_the_loop_made_in_ref_and_get_att() -> None:
    document = expanded({"Resources": {"Fn::ForEach::Pairs": ["Id", ["A"], {
        "Eip${Id}": {"Type": "AWS::EC2::EIP"},
        "Nat${Id}": {"Type": "AWS::EC2::NatGateway", "Properties": {
            "AllocationId": {"Fn::GetAtt": [{"Fn::Sub": "Eip${Id}"}, "AllocationId"]},
            "SubnetId": {"Ref": {"Fn::Sub": "Eip${Id}"}},
            "Name": {"Fn::Sub": "${AWS::StackName}-${Id}"},
        }},
    }]}})
    assert document["Resources"]["NatA"]["Properties"] == {
        "AllocationId": {"Fn::GetAtt": ["EipA", "AllocationId"]},
        "SubnetId": {"Ref": "EipA"},
        "Name": {"Fn::Sub": "${AWS::StackName}-A"},
    }


def test_find_in_map_over_the_identifier_is_looked_up_and_a_no_value_default_drops_the_key() -> None:
    document = expanded({
        "Conditions": {"Two": {"Fn::Equals": ["a", "a"]}},
        "Mappings": {"Nat": {"Condition": {"B": "Two"}}},
        "Resources": {"Fn::ForEach::Nats": ["Id", ["A", "B"], {"Eip${Id}": {
            "Type": "AWS::EC2::EIP",
            "Condition": {"Fn::FindInMap": ["Nat", "Condition", {"Ref": "Id"}, {"DefaultValue": {"Ref": "AWS::NoValue"}}]},
        }}]},
    })
    assert document["Resources"] == {"EipA": {"Type": "AWS::EC2::EIP"}, "EipB": {"Type": "AWS::EC2::EIP", "Condition": "Two"}}


def test_collections_from_a_comma_delimited_list_parameter_given_or_defaulted() -> None:
    template = {
        "Parameters": {"Names": {"Type": "CommaDelimitedList", "Default": "x, y"}},
        "Resources": {"Fn::ForEach::Topics": ["N", {"Ref": "Names"}, {"T${N}": {"Type": "AWS::SNS::Topic"}}]},
    }
    assert set(expanded(template)["Resources"]) == {"Tx", "Ty"}
    assert set(expanded(template, {"Names": "p,q,r"})["Resources"]) == {"Tp", "Tq", "Tr"}


def test_a_collection_from_fn_find_in_map_with_a_parameter_key() -> None:
    document = expanded({
        "Parameters": {"Env": {"Type": "String", "Default": "dev"}},
        "Mappings": {"Names": {"dev": {"Topics": ["a", "b"]}}},
        "Resources": {"Fn::ForEach::T": ["N", {"Fn::FindInMap": ["Names", {"Ref": "Env"}, "Topics"]}, {"T${N}": {"Type": "AWS::SNS::Topic"}}]},
    })
    assert set(document["Resources"]) == {"Ta", "Tb"}


def test_loops_in_conditions_outputs_and_resource_properties() -> None:
    document = expanded({
        "Parameters": {"Env": {"Type": "String", "Default": "dev"}},
        "Conditions": {"Fn::ForEach::Envs": ["E", ["dev", "prod"], {"Is${E}": {"Fn::Equals": [{"Ref": "Env"}, "${E}"]}}]},
        "Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {
            "Tags": [{"Key": "k", "Value": "v"}],
            "Fn::ForEach::Props": ["P", ["DelaySeconds", "MaximumMessageSize"], {"${P}": 5}],
        }}},
        "Outputs": {"Fn::ForEach::Outs": ["E", ["dev", "prod"], {"Out${E}": {"Value": "${E}"}}]},
    })
    assert document["Conditions"] == {"Isdev": {"Fn::Equals": [{"Ref": "Env"}, "dev"]}, "Isprod": {"Fn::Equals": [{"Ref": "Env"}, "prod"]}}
    assert document["Resources"]["Q"]["Properties"] == {"Tags": [{"Key": "k", "Value": "v"}], "DelaySeconds": 5, "MaximumMessageSize": 5}
    assert document["Outputs"] == {"Outdev": {"Value": "dev"}, "Outprod": {"Value": "prod"}}


def test_nested_loops_combine_their_identifiers() -> None:
    document = expanded({"Resources": {"Fn::ForEach::Outer": ["A", ["x", "y"], {
        "Fn::ForEach::Inner": ["B", ["1", "2"], {"T${A}${B}": {"Type": "AWS::SNS::Topic", "Properties": {"DisplayName": "${A}-${B}"}}}],
    }]}})
    assert set(document["Resources"]) == {"Tx1", "Tx2", "Ty1", "Ty2"}
    assert document["Resources"]["Ty2"]["Properties"]["DisplayName"] == "y-2"


def _nested(depth: int) -> Dict[str, Any]:
    fragment: Dict[str, Any] = {"T" + "".join(f"${{I{n}}}" for n in range(depth)): {"Type": "AWS::SNS::Topic"}}
    for level in reversed(range(depth)):
        fragment = {f"Fn::ForEach::L{level}": [f"I{level}", ["a"], fragment]}
    return {"Resources": fragment}


def test_loops_nest_five_deep_and_no_deeper() -> None:
    assert set(expanded(_nested(5))["Resources"]) == {"Taaaaa"}
    assert "nests deeper than 5" in refusal(_nested(6))


def test_a_list_of_identifiers_over_a_collection_of_lists() -> None:
    document = expanded({"Resources": {"Fn::ForEach::Pairs": [
        ["Name", "Size"], [["small", "1"], ["large", "9"]],
        {"Q${Name}": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": {"Ref": "Size"}}}},
    ]}})
    assert document["Resources"] == {
        "Qsmall": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": "1"}},
        "Qlarge": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": "9"}},
    }
    assert "a list of 2 strings" in refusal({"Resources": {"Fn::ForEach::P": [["A", "B"], [["x"]], {"Q${A}": {"Type": "T"}}]}})


def test_a_key_made_twice_or_already_written_is_refused() -> None:
    twice = refusal({"Resources": {"Fn::ForEach::T": ["N", ["a", "a"], {"T${N}": {"Type": "AWS::SNS::Topic"}}]}})
    assert twice.startswith("Transform AWS::LanguageExtensions failed with:") and "makes the key Ta" in twice
    clash = refusal({"Resources": {"Ta": {"Type": "AWS::SNS::Topic"},
                                   "Fn::ForEach::T": ["N", ["a"], {"T${N}": {"Type": "AWS::SNS::Topic"}}]}})
    assert "makes the key Ta, which is already in Resources" in clash


def test_identifiers_and_loop_names_may_not_reuse_parameters_or_logical_ids() -> None:
    parameters = {"N": {"Type": "String", "Default": "x"}}
    assert "identifier N" in refusal({"Parameters": parameters,
                                      "Resources": {"Fn::ForEach::T": ["N", ["a"], {"T${N}": {"Type": "AWS::SNS::Topic"}}]}})
    assert "loop name Bucket" in refusal({"Resources": {"Bucket": {"Type": "AWS::S3::Bucket"},
                                                        "Fn::ForEach::Bucket": ["N", ["a"], {"T${N}": {"Type": "AWS::SNS::Topic"}}]}})
    assert "enclosing loop" in refusal({"Resources": {"Fn::ForEach::O": ["N", ["a"], {
        "Fn::ForEach::I": ["N", ["b"], {"T${N}": {"Type": "AWS::SNS::Topic"}}]}]}})


def test_an_output_key_without_the_placeholder_is_refused() -> None:
    message = refusal({"Resources": {"Fn::ForEach::T": ["N", ["a", "b"], {"Topic": {"Type": "AWS::SNS::Topic"}}]}})
    assert "the OutputKey Topic of Fn::ForEach::T must contain the placeholder ${N}/&{N}" in message


def test_malformed_loops_and_collections_are_refused_with_what_is_wrong() -> None:
    assert "list of three" in refusal({"Resources": {"Fn::ForEach::T": ["N", ["a"]]}})
    assert "must be a list, a Ref" in refusal({"Resources": {"Fn::ForEach::T": ["N", "a,b", {"T${N}": {"Type": "X"}}]}})
    assert "not a list parameter" in refusal({"Parameters": {"P": {"Type": "String", "Default": "a"}},
                                              "Resources": {"Fn::ForEach::T": ["N", {"Ref": "P"}, {"T${N}": {"Type": "X"}}]}})
    assert refusal({"Parameters": {"P": {"Type": "CommaDelimitedList"}},
                    "Resources": {"Fn::ForEach::T": ["N", {"Ref": "P"}, {"T${N}": {"Type": "X"}}]}}) == "Parameters: [P] must have values"
    assert refusal({"Mappings": {"M": {"a": {"b": ["x"]}}},
                    "Resources": {"Fn::ForEach::T": ["N", {"Fn::FindInMap": ["M", "a", "c"]}, {"T${N}": {"Type": "X"}}]}}
                   ) == "Template error: Unable to get mapping for M::a::c"


def test_the_expanded_template_is_what_the_rest_of_the_engine_reads() -> None:
    template = load_stack_template(json.dumps({
        "Transform": EXT,
        "Resources": {"Fn::ForEach::T": ["N", ["a", "b"], {"T${N}": {"Type": "AWS::SNS::Topic"}}]},
        "Outputs": {"First": {"Value": {"Ref": "Ta"}}},
    }))
    assert set(template.resources) == {"Ta", "Tb"}
    with pytest.raises(TemplateError, match=r"Unresolved resource dependencies \[Tc\]"):
        load_stack_template(json.dumps({
            "Transform": EXT,
            "Resources": {"Fn::ForEach::T": ["N", ["a"], {"T${N}": {"Type": "AWS::SNS::Topic"}}]},
            "Outputs": {"First": {"Value": {"Ref": "Tc"}}},
        }))


def test_templates_without_loops_are_left_alone() -> None:
    document = {"Transform": EXT, "Resources": {"A": {"Type": "X", "Properties": {"Fn::Length": [1]}}}}
    assert not uses_for_each(document)
    assert expand_for_each(document) == document
