"""Bad input to local stacks, through a real ``cfnrun serve`` and boto3's ``cloudformation`` client (issue #23).

Each mistake ends either in the service's error shape (a ``ValidationError`` or a modelled
exception, raised by boto3 as it raises AWS's) or in a stack that rolls back with a stack event
saying why; serve keeps serving the stacks after it. One serve (the note sample, the
misbehaving fixture whose handler crashes or hangs on request, and moto for AWS::* types)
answers every test of a module.
"""
from __future__ import annotations

import json
import re
import shutil
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from botocore.exceptions import ClientError

from conftest import LOCAL_STATE, MISBEHAVING, SAMPLES, ServerProcess, wait_until

NOTE = "Cfnrun::Sample::Note"
MISBEHAVING_TYPE = "Cfnrun::Test::Misbehaving"
# A hanging handler is cut after this many seconds (serve's --invocation-timeout)
HANG_CUT_SECONDS = 3
SETTLE_SECONDS = 60.0  # a stack operation of a few resources ends in well under a second; a loaded CI machine is slower


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("stacks")
    note, misbehaving = root / "note", root / "misbehaving"
    shutil.copytree(SAMPLES / "note", note, ignore=LOCAL_STATE)
    shutil.copytree(MISBEHAVING, misbehaving, ignore=LOCAL_STATE)
    process = ServerProcess(note, "--provider", str(misbehaving), "--invocation-timeout", str(HANG_CUT_SECONDS), "--no-reload", "--moto")
    yield process
    process.stop()


@pytest.fixture
def cloudformation(server: ServerProcess) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "cloudformation",
        endpoint_url=server.url,
        region_name="us-east-1",
        aws_access_key_id="AKIDCFNRUNTEST",
        aws_secret_access_key="cfnrun-test-secret",
        config=Config(retries={"max_attempts": 0}),
    )


def template(resources: Dict[str, Any], **sections: Any) -> str:
    return json.dumps({"Resources": resources, **sections})


def a_note(title: Any = "hello world", **attributes: Any) -> Dict[str, Any]:
    return {"Type": NOTE, "Properties": {"Title": title}, **attributes}


def refused(cloudformation: Any, **create: Any) -> Tuple[str, str]:
    """The error code and message CreateStack is answered with; the stack must not exist afterwards."""
    with pytest.raises(ClientError) as raised:
        cloudformation.create_stack(**create)
    error = raised.value.response["Error"]
    with pytest.raises(ClientError, match="does not exist"):
        cloudformation.describe_stacks(StackName=create["StackName"])
    return error["Code"], error["Message"]


def settled(cloudformation: Any, name: str) -> Dict[str, Any]:
    """The stack once its operation has ended."""
    found: List[Dict[str, Any]] = []

    def ended() -> bool:
        found[:] = cloudformation.describe_stacks(StackName=name)["Stacks"]
        return not found[0]["StackStatus"].endswith("_IN_PROGRESS")

    wait_until(ended, SETTLE_SECONDS, f"stack {name} to settle")
    return found[0]


def events_of(cloudformation: Any, name: str) -> List[Tuple[str, str, Optional[str]]]:
    """(LogicalResourceId, ResourceStatus, ResourceStatusReason), oldest first."""
    events = cloudformation.describe_stack_events(StackName=name)["StackEvents"]
    return [(e["LogicalResourceId"], e["ResourceStatus"], e.get("ResourceStatusReason")) for e in reversed(events)]


def test_a_misspelt_property_is_a_warning_on_the_console_and_fails_the_resource(cloudformation: Any, server: ServerProcess) -> None:
    """The service accepts the template; its pre-deployment validation stops the stack (with DisableValidation, the
    resource fails); cfn-lint's finding is a console warning with its line."""
    body = template({"Note": {"Type": NOTE, "Properties": {"Title": "hello", "Titel": "hello world"}}})
    cloudformation.create_stack(StackName="typo", TemplateBody=body)
    assert server.has_printed(r"template lint \(error, not refused.*'Titel' was unexpected.*line 1")
    assert settled(cloudformation, "typo")["StackStatus"] == "ROLLBACK_COMPLETE"
    errors = [e for e in cloudformation.describe_events(StackName="typo")["OperationEvents"] if e["EventType"] == "VALIDATION_ERROR"]
    assert [e["LogicalResourceId"] for e in errors] == ["Note"] and "Titel" in errors[0]["ValidationStatusReason"]
    cloudformation.create_stack(StackName="typo-unchecked", TemplateBody=body, DisableValidation=True)
    assert settled(cloudformation, "typo-unchecked")["StackStatus"] == "ROLLBACK_COMPLETE"
    assert any(status == "CREATE_FAILED" and "Titel" in (reason or "") for _, status, reason in events_of(cloudformation, "typo-unchecked"))


def test_a_bad_getatt_in_outputs_is_accepted_with_a_warning(cloudformation: Any, server: ServerProcess) -> None:
    """E6101 refused this before; the service accepts the call, then stops the operation as it starts (before any resource:
    test_pre_deployment_validation.py has its events)."""
    body = template({"Note": a_note()}, Outputs={"Nope": {"Value": {"Fn::GetAtt": ["Note", "Nope"]}}})
    assert cloudformation.create_stack(StackName="bad-output-getatt", TemplateBody=body)["StackId"]
    warning = server.has_printed(r"template lint \(error, not refused.*\[E6101\]")
    assert "Nope" in warning
    assert settled(cloudformation, "bad-output-getatt")["StackStatus"] == "ROLLBACK_COMPLETE"


@pytest.mark.parametrize(
    "name, body, parameters, expected",
    [
        ("unresolved-output", template({"A": a_note()}, Outputs={"X": {"Value": {"Ref": "Missing"}}}), [],
         "Template format error: Unresolved resource dependencies [Missing] in the Outputs block of the template"),
        ("output-of-a-resource-left-out",
         template({"A": a_note(Condition="Never"), "B": a_note()}, Conditions={"Never": {"Fn::Equals": ["a", "b"]}},
                  Outputs={"X": {"Value": {"Ref": "A"}}}), [],  # no prefix: LocalStack's AWS-recorded test_output_reference_to_skipped_resource
         "Unresolved resource dependencies [A] in the Outputs block of the template"),
        ("not-an-object", "just text", [], "Template format error: unsupported structure."),  # was a 500 (AttributeError)
        ("if-of-a-condition-not-declared", template({"A": a_note({"Fn::If": ["MissingCondition", "a", "b"]})}), [],
         "Template error: unresolved condition dependency MissingCondition in Fn::If"),
        ("missing-mapping-key", template({"A": a_note({"Fn::FindInMap": ["Map", "Key", "Sub"]})}, Mappings={"Map": {"Key": {"Other": "x"}}}), [],
         "Template error: Unable to get mapping for Map::Key::Sub"),
        ("mapping-key-from-a-parameter",
         template({"A": a_note({"Fn::FindInMap": ["Map", {"Ref": "Key"}, "Sub"]})}, Mappings={"Map": {"A": {"Sub": "x"}}},
                  Parameters={"Key": {"Type": "String"}}), [{"ParameterKey": "Key", "ParameterValue": "C"}],
         "Template error: Unable to get mapping for Map::C::Sub"),
        ("select-past-the-end", template({"A": a_note({"Fn::Select": [5, ["a", "b"]]})}), [],
         "Template error: Fn::Select cannot select nonexistent value at index 5"),
        ("number-parameter", template({"A": a_note({"Fn::Sub": "${Count}"})}, Parameters={"Count": {"Type": "Number"}}),
         [{"ParameterKey": "Count", "ParameterValue": "many"}], "Parameter 'Count' must be a number"),
        ("too-many-parameters", template({"A": a_note()}, Parameters={f"P{i}": {"Type": "String", "Default": "x"} for i in range(201)}), [],
         "Template format error: Number of parameters, 201, is greater than maximum allowed, 200"),
    ],
)
def test_what_the_service_refuses_is_refused_in_its_words_without_lint_ids(
    cloudformation: Any, name: str, body: str, parameters: List[Dict[str, str]], expected: str
) -> None:
    """cfn-lint refused these first, with its rule ids; the place cfnrun adds ("(at Outputs.X)") comes after the words."""
    code, message = refused(cloudformation, StackName=name, TemplateBody=body, Parameters=parameters)
    assert code == "ValidationError" and message.startswith(expected) and "[E" not in message


def test_a_rule_whose_assertion_fails_refuses_create_stack_update_stack_and_create_change_set(cloudformation: Any) -> None:
    """The user guide: rules validate parameter values before any resource is created or updated; a false assertion
    means no stack operation. The message is the AssertDescription (inferred)."""
    rules = {"ProdNeedsTwo": {"RuleCondition": {"Fn::Equals": [{"Ref": "Env"}, "prod"]},
                              "Assertions": [{"Assert": {"Fn::Contains": [["2", "3"], {"Ref": "Copies"}]},
                                              "AssertDescription": "prod keeps two or three copies"}]}}
    body = template({"A": a_note({"Ref": "Env"})}, Rules=rules,
                    Parameters={"Env": {"Type": "String"}, "Copies": {"Type": "String", "Default": "1"}})
    prod = [{"ParameterKey": "Env", "ParameterValue": "prod"}]
    assert refused(cloudformation, StackName="rule-create", TemplateBody=body, Parameters=prod) == (
        "ValidationError", "prod keeps two or three copies")
    with pytest.raises(ClientError, match="prod keeps two or three copies"):
        cloudformation.create_change_set(StackName="rule-change-set", ChangeSetName="c", ChangeSetType="CREATE",
                                         TemplateBody=body, Parameters=prod)
    cloudformation.create_stack(StackName="rule-update", TemplateBody=body, Parameters=[{"ParameterKey": "Env", "ParameterValue": "dev"}])
    assert settled(cloudformation, "rule-update")["StackStatus"] == "CREATE_COMPLETE"
    with pytest.raises(ClientError, match="prod keeps two or three copies"):
        cloudformation.update_stack(StackName="rule-update", TemplateBody=body, Parameters=prod)
    assert settled(cloudformation, "rule-update")["StackStatus"] == "CREATE_COMPLETE"


def test_a_parameter_key_given_twice_is_refused(cloudformation: Any) -> None:
    body = template({"A": a_note({"Ref": "Title"})}, Parameters={"Title": {"Type": "String"}})
    twice = [{"ParameterKey": "Title", "ParameterValue": "one"}, {"ParameterKey": "Title", "ParameterValue": "two"}]
    code, message = refused(cloudformation, StackName="key-twice", TemplateBody=body, Parameters=twice)
    assert code == "ValidationError" and "[Title]" in message and "more than once" in message


def test_a_template_body_past_51200_bytes_is_refused_with_the_services_text(cloudformation: Any) -> None:
    body = template({"A": a_note()}, Description="x" * 51_200)
    code, message = refused(cloudformation, StackName="too-large", TemplateBody=body)
    assert code == "ValidationError"
    assert message.startswith("1 validation error detected: Value '{")
    assert message.endswith("' at 'templateBody' failed to satisfy constraint: Member must have length less than or equal to 51200")


def test_a_yaml_alias_bomb_is_refused_and_serve_keeps_answering(cloudformation: Any) -> None:
    laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 9):
        previous, anchor = chr(ord("a") + level - 1), chr(ord("a") + level)
        laughs.append(f"{anchor}: &{anchor} [{','.join(['*' + previous] * 9)}]")
    bomb = "\n".join(laughs) + "\nResources:\n  A: {Type: Cfnrun::Sample::Note, Properties: {Title: *i}}\n"
    assert len(bomb.encode()) < 600
    code, message = refused(cloudformation, StackName="alias-bomb", TemplateBody=bomb)
    assert code == "ValidationError" and "aliases expand the document past" in message
    assert cloudformation.list_stacks()["ResponseMetadata"]["HTTPStatusCode"] == 200


@pytest.mark.parametrize("depth", [20_000, 100_000])
def test_a_template_nested_too_deep_is_a_validation_error(cloudformation: Any, depth: int) -> None:
    body = '{"Resources": {"A": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": ' + "[" * depth + "]" * depth + "}}}}"
    code, message = refused(cloudformation, StackName=f"deep-{depth}", TemplateBody=body)
    assert code == "ValidationError"
    assert "nests more than" in message if len(body) <= 51_200 else "at 'templateBody'" in message


def test_resources_that_need_each_other_are_refused(cloudformation: Any) -> None:
    body = template({"A": a_note({"Ref": "B"}), "B": a_note({"Ref": "A"})})
    code, message = refused(cloudformation, StackName="circle", TemplateBody=body)
    assert code == "ValidationError" and "Circular dependency between resources: [A, B]" in message


def test_a_ref_to_a_parameter_not_declared_is_refused(cloudformation: Any) -> None:
    code, message = refused(cloudformation, StackName="missing-parameter", TemplateBody=template({"A": a_note({"Ref": "Missing"})}))
    assert code == "ValidationError" and "Unresolved resource dependencies [Missing] in the Resources block" in message


def test_a_type_serve_does_not_have_is_refused_naming_the_served_ones(cloudformation: Any) -> None:
    body = template({"A": {"Type": "Cfnrun::Sample::Nope", "Properties": {}}})
    code, message = refused(cloudformation, StackName="unknown-type", TemplateBody=body)
    assert code == "ValidationError"
    assert "Unrecognized resource types: [Cfnrun::Sample::Nope]" in message
    assert NOTE in message and MISBEHAVING_TYPE in message and "--provider" in message


def test_a_template_that_is_not_yaml_is_refused_with_its_line(cloudformation: Any) -> None:
    code, message = refused(cloudformation, StackName="not-yaml", TemplateBody="Resources:\n  A:\n    Type: [\n")
    assert code == "ValidationError" and "line 4" in message


def test_an_import_of_an_export_nobody_made_is_refused(cloudformation: Any) -> None:
    body = template({"A": a_note({"Fn::ImportValue": "nobody-exports-this"})})
    code, message = refused(cloudformation, StackName="missing-export", TemplateBody=body)
    assert code == "ValidationError" and message == "No export named nobody-exports-this found."


def test_a_stack_name_in_use_and_an_update_that_changes_nothing_are_refused(cloudformation: Any) -> None:
    body = template({"A": a_note()})
    cloudformation.create_stack(StackName="reused", TemplateBody=body)
    assert settled(cloudformation, "reused")["StackStatus"] == "CREATE_COMPLETE"
    with pytest.raises(cloudformation.exceptions.AlreadyExistsException, match=r"Stack \[reused\] already exists"):
        cloudformation.create_stack(StackName="reused", TemplateBody=body)
    with pytest.raises(ClientError, match="No updates are to be performed."):
        cloudformation.update_stack(StackName="reused", TemplateBody=body)
    assert settled(cloudformation, "reused")["StackStatus"] == "CREATE_COMPLETE"


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        ({"do": "hard_exit"}, "the worker process exited with status 7 before returning a ProgressEvent"),
        ({"do": "raise"}, "the function raised ValueError: the handler broke on purpose"),
        ({"do": "sleep", "seconds": 600}, f"did not return a ProgressEvent within --invocation-timeout ({HANG_CUT_SECONDS} s)"),
    ],
    ids=["crash", "raise", "hang"],
)
def test_a_handler_that_breaks_mid_stack_fails_its_resource_and_the_stack_rolls_back(
    cloudformation: Any, behaviour: Dict[str, Any], reason: str
) -> None:
    name = f"breaks-{behaviour['do'].replace('_', '-')}"
    broken = {"Type": MISBEHAVING_TYPE, "DependsOn": "First", "Properties": behaviour}
    cloudformation.create_stack(StackName=name, TemplateBody=template({"First": a_note(), "Broken": broken}))
    assert settled(cloudformation, name)["StackStatus"] == "ROLLBACK_COMPLETE"
    events = events_of(cloudformation, name)
    failed = [event for event in events if event[1] == "CREATE_FAILED"]
    assert [event[0] for event in failed] == ["Broken"] and reason in str(failed[0][2])
    assert (name, "ROLLBACK_IN_PROGRESS", "The following resource(s) failed to create: [Broken]. Rollback requested by user.") in events
    assert ("First", "DELETE_COMPLETE", None) in events  # rolled back: nothing of the stack is left
    # serve keeps serving: the same template without the broken resource is created
    cloudformation.create_stack(StackName=f"{name}-after", TemplateBody=template({"First": a_note()}))
    assert settled(cloudformation, f"{name}-after")["StackStatus"] == "CREATE_COMPLETE"


def test_an_aws_type_the_endpoint_does_not_implement_fails_its_resource_and_the_stack_rolls_back(cloudformation: Any, server: ServerProcess) -> None:
    """moto's CloudFormation completes a stack of a type it does not know without making anything."""
    policy = {
        "Type": "AWS::CloudFront::CachePolicy",
        "DependsOn": "Topic",
        "Properties": {
            "CachePolicyConfig": {
                "Name": "local",
                "DefaultTTL": 1,
                "MaxTTL": 2,
                "MinTTL": 0,
                "ParametersInCacheKeyAndForwardedToOrigin": {
                    "EnableAcceptEncodingGzip": False,
                    "CookiesConfig": {"CookieBehavior": "none"},
                    "HeadersConfig": {"HeaderBehavior": "none"},
                    "QueryStringsConfig": {"QueryStringBehavior": "none"},
                },
            }
        },
    }
    body = template({"Topic": {"Type": "AWS::SNS::Topic"}, "Policy": policy})
    cloudformation.create_stack(StackName="not-on-moto", TemplateBody=body)
    assert settled(cloudformation, "not-on-moto")["StackStatus"] == "ROLLBACK_COMPLETE"
    events = events_of(cloudformation, "not-on-moto")
    failed = [event for event in events if event[1] == "CREATE_FAILED"]
    assert [event[0] for event in failed] == ["Policy"]
    assert "does not implement AWS::CloudFront::CachePolicy" in str(failed[0][2])
    assert ("Topic", "DELETE_COMPLETE", None) in events
    # no warning per call, no werkzeug traceback (and no line saying moto broke: test_aws_types_on_moto.py reads the whole console)
    assert not [line for line in server.output if "No Moto CloudFormation support" in line or "Error on request" in line], server.output


def test_a_bucket_name_taken_on_the_endpoint_fails_the_resource_in_its_words_and_leaves_no_half_made_stack(
        cloudformation: Any, server: ServerProcess) -> None:
    # moto's CloudFormation answers CreateStack with S3's BucketAlreadyExists for a bucket name taken outside the stacks (a
    # bootstrap stack's retained bucket, deployed again), having registered the resource's stack first. cfnrun took the
    # answer for its own stack name in use (AlreadyExists), waited on that stack, and moto broke describing it: the
    # resource failed with moto's traceback line, and the half-made stack stayed CREATE_IN_PROGRESS on the endpoint
    import boto3

    moto = re.search(r"at (http://[0-9.]+:[0-9]+)", server.has_printed(r"moto server \(AWS stand-in\) at"))
    assert moto, server.output
    aws = {"endpoint_url": moto.group(1), "region_name": "us-east-1", "aws_access_key_id": "t", "aws_secret_access_key": "t"}
    boto3.client("s3", **aws).create_bucket(Bucket="taken-outside")
    bucket = {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "taken-outside"}}
    cloudformation.create_stack(StackName="wants-the-name", TemplateBody=template({"Bucket": bucket}))
    assert settled(cloudformation, "wants-the-name")["StackStatus"] == "ROLLBACK_COMPLETE"
    [reason] = [event[2] for event in events_of(cloudformation, "wants-the-name") if event[1] == "CREATE_FAILED"]
    assert re.fullmatch(r"The requested bucket name is not available\..* \(the AWS endpoint's BucketAlreadyExists\)", str(reason)), reason
    endpoint = boto3.client("cloudformation", **aws)
    assert [s["StackStatus"] for s in endpoint.list_stacks()["StackSummaries"] if s["StackName"].startswith("wants-the-name-")] == ["DELETE_COMPLETE"]
    assert "taken-outside" in [b["Name"] for b in boto3.client("s3", **aws).list_buckets()["Buckets"]]  # the other owner's bucket stays
