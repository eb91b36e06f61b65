"""Project discovery and request files: pure reading, no processes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from cfnrun.model.errors import CfnrunError
from cfnrun.invoker.request_files import CFN_INVOKE, SAM_TESTS, parse_request
from cfnrun.model.project import load_project
from cfnrun.model.protocol import Action
from cfnrun.model.schema import ResourceSchema
from cfnrun.model.template import load_template
from conftest import SAMPLES


def test_sample_project_is_discovered() -> None:
    project = load_project(SAMPLES / "cluster")
    assert project.type_name == "Cfnrun::Sample::Cluster"
    assert project.code_dir == SAMPLES / "cluster" / "src"
    assert project.type_function().handler == "cfnrun_sample_cluster.handlers.resource"
    assert project.test_function().handler == "cfnrun_sample_cluster.handlers.test_entrypoint"
    function = project.function("TypeFunction")
    assert (function.timeout_s, function.memory_mb) == (180, 256)  # from Globals
    assert function.environment["CALLBACK_DELAY_SECONDS"] == "2"
    assert project.schema.timeout_minutes(Action.CREATE) == 10
    assert project.schema.timeout_minutes(Action.READ) == 120


def test_functions_resolve_by_name_qualifier_and_arn(tmp_path: Path) -> None:
    project = load_project(SAMPLES / "note")
    arn = "arn:aws:lambda:us-east-1:123456789012:function:TestEntrypoint:$LATEST"
    assert project.find_function(arn).logical_id == "TestEntrypoint"
    assert project.find_function("TypeFunction:live").logical_id == "TypeFunction"
    assert project.find_function("Unknown") is None


def test_template_globals_intrinsics_and_function_names(tmp_path: Path) -> None:
    template = tmp_path / "template.yml"
    template.write_text(
        """
Globals:
  Function:
    Timeout: 30
    Environment:
      Variables: {SHARED: one, OVERRIDDEN: global}
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Handler: pkg.handlers.resource
      FunctionName: my-function
      MemorySize: 1024
      Environment:
        Variables:
          OVERRIDDEN: local
          TABLE: !Ref SomeTable
          DEBUG: true
  Table:
    Type: AWS::DynamoDB::Table
"""
    )
    functions = load_template(template)
    assert list(functions) == ["Fn"]
    fn = functions["Fn"]
    assert fn.names == ["Fn", "my-function"]
    assert (fn.timeout_s, fn.memory_mb) == (30, 1024)
    assert fn.environment == {"SHARED": "one", "OVERRIDDEN": "local", "DEBUG": "true"}


def test_write_only_values_are_masked_at_any_depth() -> None:
    schema = ResourceSchema(
        {
            "typeName": "A::B::C",
            "writeOnlyProperties": ["/properties/Password", "/properties/Users/*/Secret", "/properties/Config/Key"],
        }
    )
    model = {"Password": "p", "Users": [{"Name": "a", "Secret": "s1"}, {"Name": "b"}], "Config": {"Key": "k", "Other": 1}}
    masked = schema.mask_write_only(model)
    assert json.dumps(masked).count("*** writeOnly ***") == 3
    assert masked["Users"][1] == {"Name": "b"} and masked["Config"]["Other"] == 1
    assert model["Password"] == "p"  # the original is untouched


def test_cfn_invoke_request_file_is_detected() -> None:
    parsed = parse_request({"desiredResourceState": {"A": 1}, "previousResourceState": {"A": 0}, "typeConfiguration": None}, "f")
    assert (parsed.format, parsed.desired, parsed.previous, parsed.action) == (CFN_INVOKE, {"A": 1}, {"A": 0}, None)


def test_a_cfn_invoke_file_may_fix_its_client_request_token() -> None:
    parsed = parse_request({"clientRequestToken": "again", "desiredResourceState": {"A": 1}}, "f")
    assert (parsed.client_request_token, parsed.warnings) == ("again", [])
    assert parse_request({"desiredResourceState": {}}, "f").client_request_token is None
    with pytest.raises(CfnrunError, match="'clientRequestToken' must be a non-empty string"):
        parse_request({"clientRequestToken": 7, "desiredResourceState": {}}, "f")


def test_sam_tests_event_is_detected_and_placeholder_credentials_dropped() -> None:
    parsed = parse_request(
        {
            "credentials": {"accessKeyId": "<Access Key Id>", "secretAccessKey": "<x>", "sessionToken": "<y>"},
            "action": "UPDATE",
            "request": {"clientRequestToken": "tok", "desiredResourceState": {"A": 2}, "logicalResourceIdentifier": "L"},
            "callbackContext": {"step": 1},
        },
        "f",
    )
    assert parsed.format == SAM_TESTS
    assert (parsed.action, parsed.client_request_token, parsed.logical_resource_id) == (Action.UPDATE, "tok", "L")
    assert parsed.callback_context == {"step": 1}
    assert parsed.credentials is None


@pytest.mark.parametrize(
    "document, message",
    [
        ([], "expected a JSON object, got list"),
        ({"foo": 1}, "not a request file cfnrun knows"),
        ({"desiredResourceState": [1]}, "'desiredResourceState' must be a JSON object"),
        ({"action": "MAKE", "request": {}}, "action 'MAKE' is not one of"),
    ],
)
def test_bad_request_files_say_what_is_wrong(document: object, message: str) -> None:
    with pytest.raises(CfnrunError, match=message):
        parse_request(document, "request.json")
