"""Which templates need CAPABILITY_IAM or CAPABILITY_NAMED_IAM, and what a call that did not acknowledge them is told."""
from cfnrun.stacks.iam_capabilities import (
    CAPABILITY_IAM, CAPABILITY_NAMED_IAM, IAM_TYPES, iam_acknowledgement, insufficient_capabilities,
)


def test_no_iam_resource_needs_nothing():
    assert iam_acknowledgement([("AWS::S3::Bucket", {"BucketName": "b"}), ("AWS::SNS::Topic", {})]) is None


def test_every_listed_type_needs_capability_iam_unnamed():
    for type_name in IAM_TYPES:
        needed = iam_acknowledgement([(type_name, {})])
        assert needed is not None and needed.capability == CAPABILITY_IAM, type_name


def test_a_custom_name_needs_capability_named_iam():
    for type_name, name in [("AWS::IAM::Role", "RoleName"), ("AWS::IAM::User", "UserName"), ("AWS::IAM::Group", "GroupName"),
                            ("AWS::IAM::InstanceProfile", "InstanceProfileName"), ("AWS::IAM::ManagedPolicy", "ManagedPolicyName")]:
        needed = iam_acknowledgement([("AWS::IAM::Policy", {"PolicyName": "p"}), (type_name, {name: {"Fn::Sub": "${AWS::StackName}-x"}})])
        assert needed is not None and needed.capability == CAPABILITY_NAMED_IAM, type_name


def test_names_of_other_resources_do_not_make_it_named():
    needed = iam_acknowledgement([("AWS::IAM::AccessKey", {"UserName": "u"}), ("AWS::IAM::UserToGroupAddition", {"GroupName": "g", "Users": []}),
                                  ("AWS::IAM::Policy", {"PolicyName": "p"})])
    assert needed is not None and needed.capability == CAPABILITY_IAM


def test_reason_names_types_in_template_order_once():
    needed = iam_acknowledgement([("AWS::IAM::Role", {}), ("AWS::S3::Bucket", {}), ("AWS::IAM::Policy", {}), ("AWS::IAM::Role", {})])
    assert needed is not None
    assert needed.types == ("AWS::IAM::Role", "AWS::IAM::Policy")
    assert needed.reason == "The following resource(s) require capabilities: [AWS::IAM::Role, AWS::IAM::Policy]"


def test_what_is_missing_given_what_was_acknowledged():
    unnamed = iam_acknowledgement([("AWS::IAM::Role", {})])
    named = iam_acknowledgement([("AWS::IAM::Role", {"RoleName": "r"})])
    assert unnamed is not None and named is not None
    assert unnamed.missing(()) == CAPABILITY_IAM
    assert unnamed.missing(["CAPABILITY_AUTO_EXPAND"]) == CAPABILITY_IAM
    assert unnamed.missing([CAPABILITY_IAM]) is None
    assert unnamed.missing([CAPABILITY_NAMED_IAM]) is None  # it covers unnamed ones too
    assert named.missing([CAPABILITY_IAM]) == CAPABILITY_NAMED_IAM
    assert named.missing([CAPABILITY_NAMED_IAM]) is None


def test_refusal_in_the_services_words():
    assert insufficient_capabilities(CAPABILITY_IAM) == "Requires capabilities : [CAPABILITY_IAM]"
    assert insufficient_capabilities(CAPABILITY_NAMED_IAM) == "Requires capabilities : [CAPABILITY_NAMED_IAM]"
