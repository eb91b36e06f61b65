"""The CloudFormation wire against botocore's own query serializer and XML parser, operation by operation."""
from __future__ import annotations

import datetime
import json
from typing import Any, Dict
from urllib.parse import urlencode

import pytest
from botocore.parsers import create_parser
from botocore.serialize import create_serializer

from cfnrun.api.cloudformation.answer import ResultShapeError, response_body
from cfnrun.api.cloudformation.custom_resource_responses import BadResponse, parse_response
from cfnrun.api.cloudformation.errors import StackApiError, modelled_error
from cfnrun.api.cloudformation.query import read_form, read_input
from cfnrun.api.cloudformation.service_model import operation_model

UTC = datetime.timezone.utc
WHEN = datetime.datetime(2026, 11, 24, 17, 0, 1, 123000, tzinfo=UTC)
LATER = datetime.datetime(2026, 11, 24, 17, 5, 0, tzinfo=UTC)
STACK_ID = "arn:aws:cloudformation:us-east-1:123456789012:stack/demo/0a1b2c3d-aaaa-bbbb-cccc-0123456789ab"
CHANGE_SET_ID = "arn:aws:cloudformation:us-east-1:123456789012:changeSet/replace/11111111-2222-3333-4444-555555555555"
TEMPLATE = 'Resources:\n  Note:\n    Type: Cfnrun::Sample::Note\n    Properties: {Title: "a <b> & \'c\'"}\r\n'
PARAMETERS = [
    {"ParameterKey": "Env", "ParameterValue": "dev"},
    {"ParameterKey": "Password", "UsePreviousValue": True},
]
TAGS = [{"Key": "team", "Value": "storage"}, {"Key": "cost-centre", "Value": "0"}]
ROLLBACK = {"RollbackTriggers": [], "MonitoringTimeInMinutes": 0}

INPUTS: Dict[str, Dict[str, Any]] = {
    "CreateStack": {
        "StackName": "demo",
        "TemplateBody": TEMPLATE,
        "Parameters": PARAMETERS,
        "DisableRollback": False,
        "RollbackConfiguration": ROLLBACK,
        "TimeoutInMinutes": 30,
        "NotificationARNs": [],
        "Capabilities": ["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"],
        "ResourceTypes": ["AWS::*", "Cfnrun::Sample::Note"],
        "OnFailure": "DELETE",
        "Tags": TAGS,
        "ClientRequestToken": "create-1",
        "EnableTerminationProtection": True,
    },
    "UpdateStack": {"StackName": "demo", "UsePreviousTemplate": True, "Parameters": PARAMETERS, "Tags": [], "DisableRollback": True},
    "DeleteStack": {"StackName": STACK_ID, "RetainResources": ["Bucket", "Note"], "ClientRequestToken": "delete-1", "DeletionMode": "STANDARD"},
    "DescribeStacks": {"StackName": "demo", "NextToken": "page-2"},
    "ListStacks": {"StackStatusFilter": ["CREATE_COMPLETE", "UPDATE_ROLLBACK_FAILED"]},
    "DescribeStackEvents": {"StackName": "demo", "NextToken": "abc=="},
    "DescribeStackResource": {"StackName": "demo", "LogicalResourceId": "Note"},
    "DescribeStackResources": {"PhysicalResourceId": "note-42"},
    "ListStackResources": {"StackName": "demo"},
    "GetTemplate": {"StackName": "demo", "ChangeSetName": "replace", "TemplateStage": "Processed"},
    "GetTemplateSummary": {"TemplateBody": TEMPLATE},
    "ValidateTemplate": {"TemplateBody": "{}"},
    "CreateChangeSet": {
        "StackName": "demo",
        "ChangeSetName": "replace",
        "ChangeSetType": "IMPORT",
        "UsePreviousTemplate": False,
        "TemplateBody": TEMPLATE,
        "ResourcesToImport": [
            {"ResourceType": "Cfnrun::Sample::Note", "LogicalResourceId": "Note", "ResourceIdentifier": {"NoteId": "note-42", "Folder": "home"}}
        ],
        "IncludeNestedStacks": False,
        "OnStackFailure": "ROLLBACK",
        "Description": "swap the note",
    },
    "DescribeChangeSet": {"ChangeSetName": CHANGE_SET_ID, "IncludePropertyValues": True},
    "ExecuteChangeSet": {"ChangeSetName": "replace", "StackName": "demo", "DisableRollback": False},
    "DeleteChangeSet": {"ChangeSetName": "replace", "StackName": "demo"},
    "ListChangeSets": {"StackName": "demo"},
    "ListExports": {},
    "ListImports": {"ExportName": "demo-NoteId"},
    "DescribeType": {"Type": "RESOURCE", "TypeName": "Cfnrun::Sample::Note"},
    "SetTypeConfiguration": {"TypeName": "Cfnrun::Sample::Note", "Type": "RESOURCE", "Configuration": json.dumps({"ApiKey": "k"})},
    "CancelUpdateStack": {"StackName": "demo", "ClientRequestToken": "cancel-1"},
    "ContinueUpdateRollback": {"StackName": "demo", "ResourcesToSkip": ["Note"], "ForceRollback": False},
    "DetectStackDrift": {"StackName": "demo", "LogicalResourceIds": ["Note", "Bucket"]},
    "DescribeStackResourceDrifts": {"StackName": "demo", "StackResourceDriftStatusFilters": ["MODIFIED"], "MaxResults": 10},
    "DescribeStackDriftDetectionStatus": {"StackDriftDetectionId": "b78ac9b0-dec1-11e7-a451-503a3example"},
}

STACK = {
    "StackId": STACK_ID,
    "StackName": "demo",
    "Parameters": [{"ParameterKey": "Env", "ParameterValue": "dev"}, {"ParameterKey": "Password", "ParameterValue": "****"}],
    "CreationTime": WHEN,
    "LastUpdatedTime": LATER,
    "StackStatus": "CREATE_COMPLETE",
    "StackStatusReason": "a <reason> & more",
    "DisableRollback": False,
    "NotificationARNs": [],
    "Capabilities": ["CAPABILITY_IAM"],
    "Outputs": [{"OutputKey": "NoteId", "OutputValue": "note-42", "Description": "the note", "ExportName": "demo-NoteId"}],
    "Tags": TAGS,
    "EnableTerminationProtection": False,
    "DriftInformation": {"StackDriftStatus": "NOT_CHECKED"},
}
EVENT = {
    "StackId": STACK_ID,
    "EventId": "Note-CREATE_COMPLETE-2026-11-24T17:00:01.123Z",
    "StackName": "demo",
    "LogicalResourceId": "Note",
    "PhysicalResourceId": "note-42",
    "ResourceType": "Cfnrun::Sample::Note",
    "Timestamp": WHEN,
    "ResourceStatus": "CREATE_FAILED",
    "ResourceStatusReason": "Properties validation failed for resource Note with message:\n#: required key [Title] not found",
    "ResourceProperties": '{"Title":"groceries"}',
    "ClientRequestToken": "create-1",
}
RESOURCE_DETAIL = {
    "StackName": "demo",
    "StackId": STACK_ID,
    "LogicalResourceId": "Note",
    "PhysicalResourceId": "note-42",
    "ResourceType": "Cfnrun::Sample::Note",
    "LastUpdatedTimestamp": WHEN,
    "ResourceStatus": "CREATE_COMPLETE",
    "Metadata": "{}",
    "DriftInformation": {"StackResourceDriftStatus": "IN_SYNC", "LastCheckTimestamp": LATER},
}
TEMPLATE_PARAMETER = {"ParameterKey": "Env", "DefaultValue": "dev", "NoEcho": False, "Description": "where"}

OUTPUTS: Dict[str, Dict[str, Any]] = {
    "CreateStack": {"StackId": STACK_ID},
    "UpdateStack": {"StackId": STACK_ID},
    "DeleteStack": {},
    "DescribeStacks": {"Stacks": [STACK, {**STACK, "StackName": "other", "Outputs": [], "Tags": []}], "NextToken": "page-2"},
    "ListStacks": {
        "StackSummaries": [
            {"StackId": STACK_ID, "StackName": "demo", "CreationTime": WHEN, "DeletionTime": LATER, "StackStatus": "DELETE_COMPLETE"}
        ]
    },
    "DescribeStackEvents": {"StackEvents": [EVENT, {**EVENT, "ResourceStatus": "CREATE_IN_PROGRESS"}], "NextToken": "abc=="},
    "DescribeStackResource": {"StackResourceDetail": RESOURCE_DETAIL},
    "DescribeStackResources": {
        "StackResources": [{key: RESOURCE_DETAIL[key] for key in ("StackName", "LogicalResourceId", "ResourceType", "ResourceStatus")} | {"Timestamp": WHEN}]
    },
    "ListStackResources": {
        "StackResourceSummaries": [
            {"LogicalResourceId": "Note", "PhysicalResourceId": "note-42", "ResourceType": "Cfnrun::Sample::Note", "LastUpdatedTimestamp": WHEN, "ResourceStatus": "CREATE_COMPLETE"}
        ]
    },
    "GetTemplate": {"TemplateBody": TEMPLATE, "StagesAvailable": ["Original", "Processed"]},
    "GetTemplateSummary": {
        "Parameters": [TEMPLATE_PARAMETER, {"ParameterKey": "Password", "NoEcho": True, "ParameterType": "String", "ParameterConstraints": {"AllowedValues": ["a", "b"]}}],
        "Description": "two notes",
        "ResourceTypes": ["Cfnrun::Sample::Note", "AWS::S3::Bucket"],
        "Version": "2010-09-09",
        "DeclaredTransforms": [],
        "ResourceIdentifierSummaries": [{"ResourceType": "Cfnrun::Sample::Note", "LogicalResourceIds": ["Note"], "ResourceIdentifiers": ["NoteId"]}],
    },
    "ValidateTemplate": {"Parameters": [TEMPLATE_PARAMETER], "Description": "d", "Capabilities": ["CAPABILITY_NAMED_IAM"], "CapabilitiesReason": "The following resource(s) require capabilities: [AWS::IAM::Role]", "DeclaredTransforms": ["AWS::LanguageExtensions"]},
    "CreateChangeSet": {"Id": CHANGE_SET_ID, "StackId": STACK_ID},
    "DescribeChangeSet": {
        "ChangeSetName": "replace",
        "ChangeSetId": CHANGE_SET_ID,
        "StackId": STACK_ID,
        "StackName": "demo",
        "Parameters": STACK["Parameters"],
        "CreationTime": WHEN,
        "ExecutionStatus": "AVAILABLE",
        "Status": "CREATE_COMPLETE",
        "NotificationARNs": [],
        "RollbackConfiguration": ROLLBACK,
        "Capabilities": [],
        "Tags": TAGS,
        "Changes": [
            {
                "Type": "Resource",
                "ResourceChange": {
                    "Action": "Modify",
                    "LogicalResourceId": "Note",
                    "PhysicalResourceId": "note-42",
                    "ResourceType": "Cfnrun::Sample::Note",
                    "Replacement": "True",
                    "Scope": ["Properties"],
                    "Details": [
                        {
                            "Target": {"Attribute": "Properties", "Name": "Folder", "RequiresRecreation": "Always", "BeforeValue": "home", "AfterValue": "work"},
                            "Evaluation": "Static",
                            "ChangeSource": "DirectModification",
                        }
                    ],
                },
            }
        ],
        "IncludeNestedStacks": False,
    },
    "ExecuteChangeSet": {},
    "DeleteChangeSet": {},
    "ListChangeSets": {
        "Summaries": [{"StackId": STACK_ID, "StackName": "demo", "ChangeSetId": CHANGE_SET_ID, "ChangeSetName": "replace", "ExecutionStatus": "AVAILABLE", "Status": "CREATE_COMPLETE", "CreationTime": WHEN}]
    },
    "ListExports": {"Exports": [{"ExportingStackId": STACK_ID, "Name": "demo-NoteId", "Value": "note-42"}]},
    "ListImports": {"Imports": ["consumer", "another"]},
    "DescribeType": {
        "Arn": "arn:aws:cloudformation:us-east-1:123456789012:type/resource/Cfnrun-Sample-Note",
        "Type": "RESOURCE",
        "TypeName": "Cfnrun::Sample::Note",
        "IsDefaultVersion": True,
        "Schema": json.dumps({"typeName": "Cfnrun::Sample::Note", "properties": {}}),
        "ProvisioningType": "FULLY_MUTABLE",
        "Visibility": "PRIVATE",
        "LastUpdated": LATER,
        "TimeCreated": WHEN,
        "RequiredActivatedTypes": [],
        "IsActivated": True,
    },
    "SetTypeConfiguration": {"ConfigurationArn": "arn:aws:cloudformation:us-east-1:123456789012:type-configuration/resource/Cfnrun-Sample-Note/default"},
    "CancelUpdateStack": {},
    "ContinueUpdateRollback": {},
    "DetectStackDrift": {"StackDriftDetectionId": "b78ac9b0-dec1-11e7-a451-503a3example"},
    "DescribeStackResourceDrifts": {
        "StackResourceDrifts": [
            {
                "StackId": STACK_ID,
                "LogicalResourceId": "Note",
                "PhysicalResourceId": "note-42",
                "PhysicalResourceIdContext": [{"Key": "Folder", "Value": "home"}],
                "ResourceType": "Cfnrun::Sample::Note",
                "ExpectedProperties": '{"Title":"a"}',
                "ActualProperties": '{"Title":"b"}',
                "PropertyDifferences": [{"PropertyPath": "/Title", "ExpectedValue": "a", "ActualValue": "b", "DifferenceType": "NOT_EQUAL"}],
                "StackResourceDriftStatus": "MODIFIED",
                "Timestamp": WHEN,
            }
        ]
    },
    "DescribeStackDriftDetectionStatus": {
        "StackId": STACK_ID,
        "StackDriftDetectionId": "b78ac9b0-dec1-11e7-a451-503a3example",
        "StackDriftStatus": "DRIFTED",
        "DetectionStatus": "DETECTION_COMPLETE",
        "DriftedStackResourceCount": 0,
        "Timestamp": WHEN,
    },
}


def botocore_form(operation: str, params: Dict[str, Any], validated: bool = True) -> bytes:
    """The request body boto3 sends for ``params`` (``validated=False``: past boto3's own checks, as another client might)."""
    request = create_serializer("query", include_validation=validated).serialize_to_request(params, operation_model(operation))
    return urlencode(request["body"]).encode()


def botocore_reads(operation: str, body: str, status: int = 200) -> Dict[str, Any]:
    model = operation_model(operation)
    assert model is not None
    parsed: Dict[str, Any] = create_parser("query").parse(
        {"body": body.encode(), "headers": {}, "status_code": status}, model.output_shape
    )
    return parsed


def read(operation: str, body: bytes) -> Dict[str, Any]:
    model = operation_model(operation)
    assert model is not None
    return read_input(model, read_form(body))


def problem_of(operation: str, body: bytes) -> StackApiError:
    with pytest.raises(StackApiError) as raised:
        read(operation, body)
    return raised.value


def test_every_operation_of_the_issue_has_a_request_and_an_answer_here() -> None:
    assert set(INPUTS) == set(OUTPUTS) and len(INPUTS) == 26


@pytest.mark.parametrize("operation", sorted(INPUTS))
def test_a_request_botocore_serialises_reads_back_as_the_parameters_boto3_was_given(operation: str) -> None:
    assert read(operation, botocore_form(operation, INPUTS[operation])) == INPUTS[operation]


@pytest.mark.parametrize("operation", sorted(OUTPUTS))
def test_an_answer_written_here_parses_in_botocore_as_the_result_given(operation: str) -> None:
    model = operation_model(operation)
    assert model is not None
    parsed = botocore_reads(operation, response_body(model, OUTPUTS[operation], "req-1"))
    assert parsed.pop("ResponseMetadata")["RequestId"] == "req-1"
    assert parsed == OUTPUTS[operation]


def test_an_operation_with_no_output_answers_its_request_id_alone() -> None:
    model = operation_model("DeleteStack")
    assert model is not None
    body = response_body(model, {}, "req-9")
    assert body == (
        '<DeleteStackResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/">'
        "<ResponseMetadata><RequestId>req-9</RequestId></ResponseMetadata></DeleteStackResponse>"
    )


def test_timestamps_are_written_in_utc_with_a_z_and_epoch_seconds_are_taken() -> None:
    model = operation_model("DescribeStackDriftDetectionStatus")
    assert model is not None
    eastern = datetime.timezone(datetime.timedelta(hours=-5))
    result = dict(OUTPUTS["DescribeStackDriftDetectionStatus"], Timestamp=datetime.datetime(2026, 11, 24, 12, 0, tzinfo=eastern))
    assert "<Timestamp>2026-11-24T17:00:00.000Z</Timestamp>" in response_body(model, result, "r")
    result["Timestamp"] = WHEN.timestamp()
    assert botocore_reads("DescribeStackDriftDetectionStatus", response_body(model, result, "r"))["Timestamp"] == WHEN


def test_characters_xml_cannot_hold_do_not_break_the_answer() -> None:
    model = operation_model("GetTemplate")
    assert model is not None
    parsed = botocore_reads("GetTemplate", response_body(model, {"TemplateBody": "a\x01b]]>\r\n"}, "r"))
    assert parsed["TemplateBody"] == "a\ufffdb]]>\r\n"


def test_a_result_that_does_not_fit_the_output_shape_names_where() -> None:
    model = operation_model("DescribeStacks")
    assert model is not None
    with pytest.raises(ResultShapeError, match=r"DescribeStacks.Stacks\[0\].StackName must be a str"):
        response_body(model, {"Stacks": [{**STACK, "StackName": 7}]}, "r")
    with pytest.raises(ResultShapeError, match="has no member Colour"):
        response_body(model, {"Stacks": [{**STACK, "Colour": "red"}]}, "r")


def test_a_missing_required_member_is_the_services_validation_error() -> None:
    error = problem_of("CreateStack", b"Action=CreateStack&Version=2010-05-15&TemplateBody=%7B%7D")
    assert (error.code, error.status) == ("ValidationError", 400)
    assert error.message == "1 validation error detected: Value null at 'stackName' failed to satisfy constraint: Member must not be null"


def test_every_broken_constraint_is_reported_together_with_its_path() -> None:
    form = botocore_form(
        "CreateStack",
        {
            "StackName": "demo",
            "OnFailure": "EXPLODE",
            "Capabilities": ["CAPABILITY_IAM", "CAPABILITY_ROOT"],
            "Parameters": [{"ParameterValue": "x"}],
            "ClientRequestToken": "not_valid!",
            "TimeoutInMinutes": 0,
        },
        validated=False,
    )
    message = problem_of("CreateStack", form).message
    assert message.startswith("4 validation errors detected: ")
    assert "Value 'EXPLODE' at 'onFailure' failed to satisfy constraint: Member must satisfy enum value set: [DO_NOTHING, ROLLBACK, DELETE]" in message
    assert "Value 'CAPABILITY_ROOT' at 'capabilities.2.member' failed to satisfy constraint: Member must satisfy enum value set" in message
    assert "Value 'not_valid!' at 'clientRequestToken' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9][-a-zA-Z0-9]*" in message
    assert "Value '0' at 'timeoutInMinutes' failed to satisfy constraint: Member must have value greater than or equal to 1" in message


def test_lengths_and_types_are_checked() -> None:
    message = problem_of("CreateChangeSet", b"StackName=demo&ChangeSetName=" + b"c" * 129 + b"&IncludeNestedStacks=maybe").message
    assert "at 'changeSetName' failed to satisfy constraint: Member must have length less than or equal to 128" in message
    assert "Value 'maybe' at 'includeNestedStacks' failed to satisfy constraint: Member must be true or false" in message
    assert "Member must be an integer" in problem_of("DescribeStackResourceDrifts", b"StackName=demo&MaxResults=ten").message


def test_unknown_parameters_and_malformed_lists_are_named() -> None:
    assert "Unknown parameter StackColour in CreateStack" in problem_of("CreateStack", b"StackName=demo&StackColour=red").message
    assert "Unknown parameter Tags.member.1.Colour" in problem_of("CreateStack", b"StackName=d&Tags.member.1.Key=k&Tags.member.1.Colour=c").message
    assert "numbered 1, 2, 3" in problem_of("CreateStack", b"StackName=d&Capabilities.member.2=CAPABILITY_IAM").message
    assert "Capabilities is a list" in problem_of("CreateStack", b"StackName=d&Capabilities=CAPABILITY_IAM").message
    assert "given more than once" in problem_of("CreateStack", b"StackName=a&StackName=b").message
    assert "not a UTF-8 form" in problem_of("CreateStack", b"StackName=%ff").message


def test_a_modelled_error_carries_the_code_and_status_botocore_maps_to_its_exception() -> None:
    error = modelled_error("ChangeSetNotFoundException", "ChangeSet [replace] does not exist")
    assert (error.code, error.status) == ("ChangeSetNotFound", 404)
    parsed = create_parser("query").parse(
        {"body": str(error.response("req-2").text).encode(), "headers": {}, "status_code": 404},
        None,
    )
    assert parsed["Error"] == {"Type": "Sender", "Code": "ChangeSetNotFound", "Message": "ChangeSet [replace] does not exist"}
    assert parsed["ResponseMetadata"]["RequestId"] == "req-2"
    with pytest.raises(KeyError):
        modelled_error("StackSummary", "not an error")


def test_a_custom_resource_response_as_cfn_response_sends_it() -> None:
    body = {
        "Status": "SUCCESS",
        "Reason": "See the details in CloudWatch Log Stream: 2026/11/24/[$LATEST]abc",
        "PhysicalResourceId": "custom-1",
        "StackId": STACK_ID,
        "RequestId": "4f0b3f3c",
        "LogicalResourceId": "Custom",
        "NoEcho": False,
        "Data": {"Answer": "42"},
    }
    response = parse_response(json.dumps(body).encode())
    assert (response.status, response.physical_resource_id, response.data, response.no_echo) == ("SUCCESS", "custom-1", {"Answer": "42"}, False)
    assert parse_response(json.dumps({**body, "Data": None, "NoEcho": "true"}).encode()).data == {}
    for broken, problem in [
        (b"{", "not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
        (json.dumps({**body, "Status": "DONE"}).encode(), "Status must be SUCCESS or FAILED, got 'DONE'"),
        (json.dumps({**body, "PhysicalResourceId": ""}).encode(), "PhysicalResourceId must be a non-empty string"),
        (json.dumps({**body, "Data": {"x": "y" * 5000}}).encode(), "Response object is too long"),
    ]:
        with pytest.raises(BadResponse, match=problem):
            parse_response(broken)
