"""SetTypeConfiguration of a registered resource type on ``cfnrun serve``: checked against the type's configuration schema,
its values never shown or kept in the history, and gone from the stacks with the type.

The type is samples/note as ``cfn submit`` packages it (tests/test_registry.py's fixtures), its schema given a
``typeConfiguration`` and its handlers built with a ``TypeConfigurationModel``: a note created without a Folder is filed
in the configured DefaultFolder, and the create handler logs the configured ApiToken (as a careless handler would).
"""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any, Dict, Optional

import boto3
import pytest
from botocore.exceptions import ClientError

from conftest import PATIENCE_S
from test_registry import CREDENTIALS, FAST, NOTE, Registry, _rezipped, note_package, registry, wheelhouse  # noqa: F401 - fixtures

pytestmark = pytest.mark.timeout(PATIENCE_S * 6)
SECRET = "tok-7f3a9c-do-not-show"  # the ApiToken: no console line, history record or file under .cfnrun/ may hold it
TYPE_CONFIGURATION = {
    "properties": {
        "ApiToken": {"type": "string", "minLength": 12},
        "DefaultFolder": {"type": "string", "pattern": "^[A-Za-z]+$"},
    },
    "required": ["ApiToken"],
    "additionalProperties": False,
}
CONFIGURATION_MODEL = '''
@dataclass
class TypeConfigurationModel(BaseModel):
    ApiToken: Optional[str]
    DefaultFolder: Optional[str]

    @classmethod
    def _deserialize(cls, json_data):
        if not json_data:
            return None
        return cls(ApiToken=json_data.get("ApiToken"), DefaultFolder=json_data.get("DefaultFolder"))


_TypeConfigurationModel = TypeConfigurationModel
'''
FILED = '''            **_writable(model),
        }
        configured = request.typeConfiguration
        if configured is not None:
            LOG.info("calling the notes service with token %s", configured.ApiToken)
            record.setdefault("Folder", configured.DefaultFolder)
'''


def _configured_handlers(name: str, code: bytes) -> Optional[bytes]:
    text = code.decode("utf-8")
    if name.endswith("cfnrun_sample_note/models.py"):
        start = text.index("@dataclass\nclass TypeConfigurationModel")
        end = text.index("_TypeConfigurationModel = TypeConfigurationModel") + len("_TypeConfigurationModel = TypeConfigurationModel")
        return (text[:start] + CONFIGURATION_MODEL.strip() + text[end:]).encode("utf-8")
    if name.endswith("cfnrun_sample_note/handlers.py"):
        text = text.replace("from .models import ResourceHandlerRequest, ResourceModel", "from .models import ResourceHandlerRequest, ResourceModel, TypeConfigurationModel")
        text = text.replace("Resource(TYPE_NAME, ResourceModel)", "Resource(TYPE_NAME, ResourceModel, TypeConfigurationModel)")
        assert "            **_writable(model),\n        }\n" in text
        return text.replace("            **_writable(model),\n        }\n", FILED, 1).encode("utf-8")
    return code


def _configured(name: str, data: bytes) -> bytes:
    if name == "schema.json":
        return json.dumps({**json.loads(data), "typeConfiguration": TYPE_CONFIGURATION}).encode("utf-8")
    if name == "ResourceProvider.zip":
        return _rezipped(data, _configured_handlers)
    return data


@pytest.fixture(scope="module")
def configured_package(note_package: bytes) -> bytes:  # noqa: F811 - the fixture imported above
    """The package with the configuration schema ``cfn submit`` adds for a schema with typeConfiguration."""
    package = io.BytesIO(_rezipped(note_package, _configured))
    with zipfile.ZipFile(package, "a") as archive:
        archive.writestr("configuration-schema.json", json.dumps({**TYPE_CONFIGURATION, "definitions": {}, "typeName": NOTE}))
    return package.getvalue()


def _set(registry: Registry, configuration: Dict[str, Any]) -> Dict[str, Any]:  # noqa: F811
    return registry.cloudformation.set_type_configuration(Type="RESOURCE", TypeName=NOTE, Configuration=json.dumps(configuration))


def _kept(registry: Registry) -> Any:  # noqa: F811
    """BatchDescribeTypeConfigurations of the note type's default configuration: its document, or the error's code."""
    answer = registry.cloudformation.batch_describe_type_configurations(TypeConfigurationIdentifiers=[{"Type": "RESOURCE", "TypeName": NOTE}])
    found = [json.loads(c["Configuration"]) for c in answer["TypeConfigurations"]]
    return found[0] if found else [e["ErrorCode"] for e in answer["Errors"]]


def _note_folder(registry: Registry, stack: str, type_name: str = NOTE) -> Optional[str]:  # noqa: F811
    """The Folder of the note a stack of one note with no Folder made (of ``type_name``), read through Cloud Control."""
    template = {"Resources": {"Note": {"Type": type_name, "Properties": {"Title": f"filed by {stack}"}}}}
    registry.cloudformation.create_stack(StackName=stack, TemplateBody=json.dumps(template))
    registry.cloudformation.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=FAST)
    [resource] = registry.cloudformation.describe_stack_resources(StackName=stack)["StackResources"]
    cloudcontrol = boto3.client("cloudcontrol", endpoint_url=registry.server.url, **CREDENTIALS)
    read = cloudcontrol.get_resource(TypeName=type_name, Identifier=resource["PhysicalResourceId"])["ResourceDescription"]
    return json.loads(read["Properties"]).get("Folder")


def _files_holding(root: Path, secret: str) -> list:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes())


def test_a_configuration_the_schema_refuses_is_refused_in_the_services_words_and_none_is_shown(
    registry: Registry, configured_package: bytes,  # noqa: F811
) -> None:
    answer = registry.register("configured.zip", configured_package)
    assert answer["ProgressStatus"] == "COMPLETE", answer
    described = registry.cloudformation.describe_type(Type="RESOURCE", TypeName=NOTE)
    assert json.loads(described["ConfigurationSchema"])["properties"] == TYPE_CONFIGURATION["properties"]

    refused = {  # each line as the service's validator words a refusal: the pointer and the keyword, no value
        "no ApiToken": ({"DefaultFolder": "Inbox"}, ["#: required key [ApiToken] not found"]),
        "a short token, a folder off its pattern": (
            {"ApiToken": "tok-1", "DefaultFolder": "in box!"},
            ["#/ApiToken: expected minLength: 12, actual: 5", "#/DefaultFolder: failed validation constraint for keyword [pattern]"],
        ),
        "an undeclared key, a number for a string": (
            {"ApiToken": 123456789012345, "Region": "us-east-1"},
            ["#: extraneous key [Region] is not permitted", "#/ApiToken: expected type: String, found: Integer"],
        ),
    }
    for case, (configuration, lines) in refused.items():
        with pytest.raises(ClientError) as refusal:
            _set(registry, configuration)
        error = refusal.value.response["Error"]
        assert (error["Code"], refusal.value.response["ResponseMetadata"]["HTTPStatusCode"]) == ("CFNRegistryException", 400), case
        head, *problems = error["Message"].split("\n")
        assert (head, sorted(problems)) == (f"Configuration validation failed for type {NOTE} with message:", sorted(lines)), case
        assert "tok-1" not in error["Message"] and "in box!" not in error["Message"], case
    assert _kept(registry) == ["TypeConfigurationNotFoundException"]  # nothing of a refused configuration is kept

    configured = {"ApiToken": SECRET, "DefaultFolder": "Inbox"}
    assert _set(registry, configured)["ConfigurationArn"].endswith(":type-configuration/resource/Cfnrun-Sample-Note/default")
    with pytest.raises(ClientError, match="required key"):
        _set(registry, {"DefaultFolder": "Outbox"})
    assert _kept(registry) == configured  # the refused one changed nothing
    assert _note_folder(registry, "filed") == "Inbox"  # the handler got the configuration

    # the handler logged the token: neither the console nor anything under .cfnrun/ (the type's history) shows it
    registry.server.has_printed(r"Cfnrun-Sample-Note-TypeFunction .*CREATE")
    registry.server.stop_cleanly(timeout=PATIENCE_S)
    assert not [line for line in registry.server.output if SECRET in line]
    assert _files_holding(registry.project / ".cfnrun", SECRET) == []
    history = "registry/Cfnrun-Sample-Note/.cfnrun/history.sqlite3"  # where the handler's line is, masked
    assert _files_holding(registry.project / ".cfnrun", "calling the notes service with token *** masked ***") == [history]



def test_a_deregistered_types_configuration_is_gone_from_the_stacks_and_the_registry(
    registry: Registry, configured_package: bytes,  # noqa: F811
) -> None:
    assert registry.register("configured.zip", configured_package)["ProgressStatus"] == "COMPLETE"
    _set(registry, {"ApiToken": SECRET, "DefaultFolder": "Inbox"})
    assert _note_folder(registry, "before") == "Inbox"

    registry.cloudformation.deregister_type(Type="RESOURCE", TypeName=NOTE)  # its one version: the type goes
    assert registry.register("again.zip", configured_package)["ProgressStatus"] == "COMPLETE"  # registered afresh, not configured
    assert _kept(registry) == ["TypeConfigurationNotFoundException"]
    assert _note_folder(registry, "after") is None  # the stacks no longer hand the old configuration to the handlers


def test_a_deactivated_types_configuration_is_gone_from_the_stacks(registry: Registry, configured_package: bytes) -> None:  # noqa: F811
    from test_registry import _wait_for_tests

    cloudformation = registry.cloudformation
    version = registry.register("configured.zip", configured_package)["TypeVersionArn"]
    cloudformation.register_publisher(AcceptTermsAndConditions=True)
    cloudformation.test_type(Arn=version)
    assert _wait_for_tests(cloudformation, version)["TypeTestsStatus"] == "PASSED"
    public_arn = cloudformation.publish_type(Type="RESOURCE", TypeName=NOTE)["PublicTypeArn"]
    alias = "Acme::Notes::Filed"
    activated = {"Type": "RESOURCE", "PublicTypeArn": public_arn, "TypeNameAlias": alias}
    cloudformation.activate_type(**activated)
    cloudformation.set_type_configuration(Type="RESOURCE", TypeName=alias, Configuration=json.dumps({"ApiToken": SECRET, "DefaultFolder": "Inbox"}))
    assert _note_folder(registry, "before", alias) == "Inbox"

    cloudformation.deactivate_type(Type="RESOURCE", TypeName=alias)  # the model: deactivating deletes its configuration
    cloudformation.activate_type(**activated)  # the same public type, the same alias: not configured
    assert _note_folder(registry, "after", alias) is None
