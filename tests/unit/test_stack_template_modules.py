"""Modules: a ::MODULE resource expanded into its fragment's resources, with every renaming and inheritance rule."""
from __future__ import annotations

from typing import Any, Dict

import pytest

from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.modules import expand_modules, uses_modules

BUCKET = "My::S3::Bucket::MODULE"
PAIR = "My::Pair::Buckets::MODULE"

BUCKET_FRAGMENT: Dict[str, Any] = {
    "Parameters": {"BucketName": {"Type": "String"}, "Versioning": {"Type": "String", "Default": "Suspended"}},
    "Conditions": {"Versioned": {"Fn::Equals": [{"Ref": "Versioning"}, "Enabled"]}},
    "Mappings": {"Sizes": {"small": {"Days": 1}}},
    "Resources": {
        "S3Bucket": {"Type": "AWS::S3::Bucket", "Properties": {
            "BucketName": {"Ref": "BucketName"},
            "VersioningConfiguration": {"Status": {"Fn::If": ["Versioned", "Enabled", "Suspended"]}},
        }},
        "Policy": {"Type": "AWS::S3::BucketPolicy", "DependsOn": "S3Bucket", "Condition": "Versioned", "Properties": {
            "Bucket": {"Ref": "S3Bucket"},
            "Arn": {"Fn::GetAtt": ["S3Bucket", "Arn"]},
            "Text": {"Fn::Sub": "${S3Bucket}/${S3Bucket.Arn}/${BucketName}/${AWS::Region}"},
            "Days": {"Fn::FindInMap": ["Sizes", "small", "Days"]},
        }},
    },
    "Outputs": {"Arn": {"Value": {"Fn::GetAtt": ["S3Bucket", "Arn"]}}},
}
PAIR_FRAGMENT: Dict[str, Any] = {
    "Parameters": {"Prefix": {"Type": "String"}},
    "Resources": {
        "First": {"Type": BUCKET, "Properties": {"BucketName": {"Fn::Sub": "${Prefix}-first"}}},
        "Topic": {"Type": "AWS::SNS::Topic", "Properties": {"DisplayName": {"Ref": "First.S3Bucket"}}},
    },
}
FRAGMENTS = {BUCKET: BUCKET_FRAGMENT, PAIR: PAIR_FRAGMENT}


def expand(resources: Dict[str, Any], **sections: Any) -> Dict[str, Any]:
    return expand_modules({"Parameters": {"Env": {"Type": "String"}}, "Resources": resources, **sections}, FRAGMENTS)


def test_inner_logical_ids_are_the_module_id_and_the_fragment_id_and_references_follow() -> None:
    document = expand({"Data": {"Type": BUCKET, "Properties": {"BucketName": {"Fn::Sub": "data-${Env}"}}}})
    resources = document["Resources"]
    assert set(resources) == {"DataS3Bucket", "DataPolicy"}
    assert resources["DataS3Bucket"]["Properties"] == {
        "BucketName": {"Fn::Sub": "data-${Env}"},  # the property, an intrinsic over the parent's parameter
        "VersioningConfiguration": {"Status": {"Fn::If": ["DataVersioned", "Enabled", "Suspended"]}},
    }
    policy = resources["DataPolicy"]
    assert policy["DependsOn"] == ["DataS3Bucket"] or policy["DependsOn"] == "DataS3Bucket"
    assert policy["Condition"] == "DataVersioned"
    assert policy["Properties"] == {
        "Bucket": {"Ref": "DataS3Bucket"},
        "Arn": {"Fn::GetAtt": ["DataS3Bucket", "Arn"]},
        "Text": {"Fn::Sub": ["${DataS3Bucket}/${DataS3Bucket.Arn}/${BucketName}/${AWS::Region}",
                             {"BucketName": {"Fn::Sub": "data-${Env}"}}]},
        "Days": {"Fn::FindInMap": ["DataSizes", "small", "Days"]},
    }
    assert document["Conditions"] == {"DataVersioned": {"Fn::Equals": ["Suspended", "Enabled"]}}  # the Default
    assert document["Mappings"] == {"DataSizes": {"small": {"Days": 1}}}


def test_a_string_property_is_written_into_sub_text() -> None:
    document = expand({"Data": {"Type": BUCKET, "Properties": {"BucketName": "plain"}}})
    assert document["Resources"]["DataPolicy"]["Properties"]["Text"] == {"Fn::Sub": "${DataS3Bucket}/${DataS3Bucket.Arn}/plain/${AWS::Region}"}


def test_the_parent_names_inner_resources_dotted_or_joined_and_reads_module_outputs() -> None:
    document = expand(
        {"Data": {"Type": BUCKET, "Properties": {"BucketName": "b"}},
         "Reader": {"Type": "AWS::SNS::Topic", "DependsOn": "Data", "Properties": {
             "A": {"Ref": "Data.S3Bucket"}, "B": {"Ref": "DataS3Bucket"}, "C": {"Fn::GetAtt": ["Data", "S3Bucket.Arn"]},
             "D": {"Fn::GetAtt": "Data.S3Bucket.Arn"}}}},
        Outputs={"Arn": {"Value": {"Fn::GetAtt": ["Data", "Outputs.Arn"]}}},
    )
    reader = document["Resources"]["Reader"]
    assert reader["Properties"] == {"A": {"Ref": "DataS3Bucket"}, "B": {"Ref": "DataS3Bucket"},
                                    "C": {"Fn::GetAtt": ["DataS3Bucket", "Arn"]}, "D": {"Fn::GetAtt": ["DataS3Bucket", "Arn"]}}
    assert sorted(reader["DependsOn"]) == ["DataPolicy", "DataS3Bucket"]
    assert document["Outputs"]["Arn"]["Value"] == {"Fn::GetAtt": ["DataS3Bucket", "Arn"]}


def test_the_modules_policies_condition_and_dependencies_reach_every_inner_resource_its_own_winning() -> None:
    document = expand(
        {"Other": {"Type": "AWS::SNS::Topic"},
         "Data": {"Type": BUCKET, "DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain", "Condition": "Always",
                  "DependsOn": "Other", "Properties": {"BucketName": "b"}}},
        Conditions={"Always": {"Fn::Equals": ["a", "a"]}},
    )
    bucket, policy = document["Resources"]["DataS3Bucket"], document["Resources"]["DataPolicy"]
    assert bucket["DeletionPolicy"] == bucket["UpdateReplacePolicy"] == policy["DeletionPolicy"] == "Retain"
    assert bucket["Condition"] == "Always" and policy["Condition"] == "DataVersioned"
    assert bucket["DependsOn"] == ["Other"] and policy["DependsOn"] == ["DataS3Bucket", "Other"]


def test_module_info_names_the_modules_a_resource_came_through_outermost_first() -> None:
    from cfnrun.stacks.template.modules import expand_modules_with_info

    _, info = expand_modules_with_info({"Resources": {"Pair": {"Type": PAIR, "Properties": {"Prefix": "p"}},
                                                      "Plain": {"Type": "AWS::SNS::Topic"}}}, FRAGMENTS)
    assert info["PairFirstS3Bucket"] == {"TypeHierarchy": f"{PAIR}/{BUCKET}", "LogicalIdHierarchy": "Pair/First"}
    assert info["PairTopic"] == {"TypeHierarchy": PAIR, "LogicalIdHierarchy": "Pair"}
    assert "Plain" not in info


def test_nested_modules_concatenate_their_ids() -> None:
    document = expand({"Pair": {"Type": PAIR, "Properties": {"Prefix": "p"}}})
    assert set(document["Resources"]) == {"PairFirstS3Bucket", "PairFirstPolicy", "PairTopic"}
    assert document["Resources"]["PairTopic"]["Properties"] == {"DisplayName": {"Ref": "PairFirstS3Bucket"}}
    assert document["Resources"]["PairFirstS3Bucket"]["Properties"]["BucketName"] == {"Fn::Sub": "p-first"}


def test_cycles_and_more_than_three_levels_are_refused() -> None:
    looping = {"A::B::C::MODULE": {"Resources": {"Again": {"Type": "A::B::C::MODULE"}}}}
    with pytest.raises(TemplateError, match="contains itself"):
        expand_modules({"Resources": {"M": {"Type": "A::B::C::MODULE"}}}, looping)
    levels = {f"L::L::L{n}::MODULE": {"Resources": {"Inner": {"Type": f"L::L::L{n + 1}::MODULE"}}} for n in range(4)}
    levels["L::L::L4::MODULE"] = {"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}}
    three = {**levels, "L::L::L2::MODULE": {"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}}}
    assert set(expand_modules({"Resources": {"M": {"Type": "L::L::L0::MODULE"}}}, three)["Resources"]) == {"MInnerInnerTopic"}
    with pytest.raises(TemplateError, match="nest at most 3 deep"):
        expand_modules({"Resources": {"M": {"Type": "L::L::L0::MODULE"}}}, levels)


@pytest.mark.parametrize("attribute, value, expected", [
    ("CreationPolicy", {}, "cannot have CreationPolicy"),
    ("UpdatePolicy", {}, "cannot have UpdatePolicy"),
    ("Properties", {"BucketName": "b", "Tags": []}, "cannot have Properties.Tags"),
    ("Properties", {}, "needs the property BucketName"),
    ("Properties", {"BucketName": "b", "Nope": 1}, "has no parameter Nope"),
])
def test_what_a_module_may_not_have_is_refused(attribute: str, value: Any, expected: str) -> None:
    with pytest.raises(TemplateError, match=expected):
        expand({"Data": {"Type": BUCKET, "Properties": {"BucketName": "b"}, attribute: value}})


def test_an_unknown_module_and_a_clashing_logical_id_are_refused() -> None:
    with pytest.raises(TemplateError, match=r"Unrecognized resource types: \[No::Such::Thing::MODULE\]"):
        expand({"X": {"Type": "No::Such::Thing::MODULE"}})
    with pytest.raises(TemplateError, match="makes the logical id DataS3Bucket"):
        expand({"DataS3Bucket": {"Type": "AWS::SNS::Topic"}, "Data": {"Type": BUCKET, "Properties": {"BucketName": "b"}}})


def test_templates_without_modules_are_left_alone() -> None:
    document = {"Resources": {"A": {"Type": "AWS::SNS::Topic"}}}
    assert not uses_modules(document)
    assert expand_modules(document, FRAGMENTS) == document


def test_the_loader_expands_modules_after_loops_and_checks_the_result() -> None:
    from cfnrun.stacks.template.loading import load_stack_template

    body = """\
Transform: AWS::LanguageExtensions
Resources:
  Fn::ForEach::Buckets:
    - Name
    - [One, Two]
    - Data${Name}:
        Type: My::S3::Bucket::MODULE
        Properties: {BucketName: !Sub "data-${Name}"}
Outputs:
  First: {Value: !Ref DataOne.S3Bucket}
"""
    template = load_stack_template(body, module_fragments=FRAGMENTS)
    assert set(template.resources) == {"DataOneS3Bucket", "DataOnePolicy", "DataTwoS3Bucket", "DataTwoPolicy"}
    assert template.document["Outputs"]["First"]["Value"] == {"Ref": "DataOneS3Bucket"}
