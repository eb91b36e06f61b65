"""Change sets as the service shows them, through a real ``cfnrun serve`` and boto3 (issue #29 §2).

The expected shapes are AWS's own answers as recorded against the service (the members a
DescribeChangeSet has with and without IncludePropertyValues, the two details of a value a
parameter or another resource's attribute changes, a Metadata change's target) and its error
texts. One serve (the note sample, moto for AWS::* types) answers every test of the module; each
test works on its own stack names.
"""
from __future__ import annotations

import json
import shutil
from typing import Any, Dict, Iterator, List

import pytest
from botocore.exceptions import ClientError

from conftest import LOCAL_STATE, SAMPLES, ServerProcess

NOTE = "Cfnrun::Sample::Note"
FAST = {"Delay": 0.1, "MaxAttempts": 600}
KNOWN_AFTER_APPLY = "{{changeSet:KNOWN_AFTER_APPLY}}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    note = tmp_path_factory.mktemp("changes") / "note"
    shutil.copytree(SAMPLES / "note", note, ignore=LOCAL_STATE)
    process = ServerProcess(note, "--no-reload", "--moto")
    yield process
    process.stop()


@pytest.fixture
def cfn(server: ServerProcess) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "cloudformation", endpoint_url=server.url, region_name="us-east-1", aws_access_key_id="testing",
        aws_secret_access_key="testing", config=Config(retries={"max_attempts": 0}),
    )


def _template(title_key: str = "en", owner: str = "team-a", third: bool = False, second_waits: bool = False) -> str:
    resources: Dict[str, Any] = {
        "First": {
            "Type": NOTE,
            "Metadata": {"Owner": owner},
            "Properties": {"Title": {"Fn::FindInMap": ["Titles", title_key, "Greeting"]}, "Folder": {"Ref": "Folder"}},
        },
        "Second": {"Type": NOTE, "Properties": {"Title": {"Fn::GetAtt": ["First", "NoteId"]}, "Content": {"Ref": "First"}}},
    }
    if third:
        resources["Third"] = {"Type": NOTE, "Properties": {"Title": "third"}}
    if second_waits:
        resources["Second"]["DependsOn"] = "Third"
    return json.dumps({
        "Parameters": {"Folder": {"Type": "String", "Default": "inbox"}},
        "Mappings": {"Titles": {"en": {"Greeting": "hello"}, "fr": {"Greeting": "bonjour"}}},
        "Resources": resources,
    })


def _created(cfn: Any, stack: str, body: str, **extra: Any) -> str:
    """The stack created through a CREATE change set, executed; its change set's id."""
    made = cfn.create_change_set(StackName=stack, ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=body, **extra)
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=made["Id"], WaiterConfig=FAST)
    cfn.execute_change_set(ChangeSetName=made["Id"])
    cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=FAST)
    return str(made["Id"])


def _changes(cfn: Any, stack: str, name: str, values: bool, **create: Any) -> Dict[str, Dict[str, Any]]:
    made = cfn.create_change_set(StackName=stack, ChangeSetName=name, **create)
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=made["Id"], WaiterConfig=FAST)
    described = cfn.describe_change_set(ChangeSetName=made["Id"], IncludePropertyValues=values)
    return {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"] for c in described["Changes"]}


def _details(change: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The details in a stable order (the service's varies): by property, the DirectModification first."""
    return sorted(change["Details"], key=lambda d: (d["Target"].get("Name") or "", d["ChangeSource"]))


def test_a_parameter_or_another_resources_attribute_changes_a_value_in_two_details(cfn: Any) -> None:
    _created(cfn, "causes", _template())
    before = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cfn.describe_stack_resources(StackName="causes")["StackResources"]}
    folder = [{"ParameterKey": "Folder", "ParameterValue": "archive"}]
    changes = _changes(cfn, "causes", "move", True, UsePreviousTemplate=True, Parameters=folder)

    first = changes["First"]
    assert (first["Action"], first["Replacement"], first["Scope"]) == ("Modify", "True", ["Properties"])
    assert first["PolicyAction"] == "ReplaceAndDelete"
    target = {
        "Attribute": "Properties", "Name": "Folder", "RequiresRecreation": "Always", "Path": "/Properties/Folder",
        "BeforeValue": "inbox", "AfterValue": "archive", "AttributeChangeType": "Modify",
    }
    assert _details(first) == [
        {"Target": target, "Evaluation": "Dynamic", "ChangeSource": "DirectModification"},
        {"Target": target, "Evaluation": "Static", "ChangeSource": "ParameterReference", "CausingEntity": "Folder"},
    ]

    second = changes["Second"]
    assert (second["Action"], second["Replacement"]) == ("Modify", "False")
    assert "PolicyAction" not in second

    def unknown(name: str) -> Dict[str, Any]:
        return {
            "Attribute": "Properties", "Name": name, "RequiresRecreation": "Never", "Path": f"/Properties/{name}",
            "BeforeValue": before["First"], "AfterValue": KNOWN_AFTER_APPLY, "AttributeChangeType": "Modify",
        }

    assert _details(second) == [
        {"Target": unknown("Content"), "Evaluation": "Dynamic", "ChangeSource": "DirectModification"},
        {"Target": unknown("Content"), "Evaluation": "Static", "ChangeSource": "ResourceReference", "CausingEntity": "First"},
        {"Target": unknown("Title"), "Evaluation": "Dynamic", "ChangeSource": "DirectModification"},
        {"Target": unknown("Title"), "Evaluation": "Static", "ChangeSource": "ResourceAttribute", "CausingEntity": "First.NoteId"},
    ]

    # Without IncludePropertyValues a target is only what changes and whether it recreates, as the service answers.
    plain = _changes(cfn, "causes", "move-plain", False, UsePreviousTemplate=True, Parameters=folder)
    assert {json.dumps(d["Target"], sort_keys=True) for d in plain["First"]["Details"]} == {
        json.dumps({"Attribute": "Properties", "Name": "Folder", "RequiresRecreation": "Always"}, sort_keys=True)
    }


def test_a_changed_mapping_value_is_a_direct_modification_and_metadata_is_in_scope(cfn: Any) -> None:
    _created(cfn, "mapped", _template())
    mapping = _changes(cfn, "mapped", "translate", True, TemplateBody=_template(title_key="fr"))
    assert set(mapping) == {"First"}
    assert mapping["First"]["Details"] == [{
        "Target": {
            "Attribute": "Properties", "Name": "Title", "RequiresRecreation": "Never", "Path": "/Properties/Title",
            "BeforeValue": "hello", "AfterValue": "bonjour", "AttributeChangeType": "Modify",
        },
        "Evaluation": "Static",
        "ChangeSource": "DirectModification",
    }]

    kept = json.loads(_template())
    del kept["Resources"]["Second"]
    removing = _changes(cfn, "mapped", "drop", False, TemplateBody=json.dumps(kept))
    assert {k: v for k, v in removing["Second"].items() if k != "PhysicalResourceId"} == {
        "PolicyAction": "Delete", "Action": "Remove", "LogicalResourceId": "Second", "ResourceType": NOTE, "Scope": [], "Details": [],
    }

    metadata = _changes(cfn, "mapped", "hand-over", False, TemplateBody=_template(owner="team-b"))
    assert set(metadata) == {"First"}
    assert (metadata["First"]["Action"], metadata["First"]["Replacement"], metadata["First"]["Scope"]) == ("Modify", "False", ["Metadata"])
    assert metadata["First"]["Details"] == [
        {"Target": {"Attribute": "Metadata", "RequiresRecreation": "Never"}, "Evaluation": "Static", "ChangeSource": "DirectModification"}
    ]


def test_a_dependson_alone_is_no_change_and_an_add_shows_its_replacement_only_with_values(cfn: Any) -> None:
    _created(cfn, "waits", _template())
    body = _template(third=True, second_waits=True)
    plain = _changes(cfn, "waits", "add-third", False, TemplateBody=body)
    assert set(plain) == {"Third"}  # Second only waits for Third now: its values are the same
    assert plain["Third"] == {"Action": "Add", "LogicalResourceId": "Third", "ResourceType": NOTE, "Scope": [], "Details": []}
    valued = _changes(cfn, "waits", "add-third-values", True, TemplateBody=body)
    assert valued["Third"]["Replacement"] == "True"
    assert json.loads(valued["Third"]["AfterContext"]) == {"Properties": {"Title": "third"}}


def test_describe_change_set_has_the_members_the_service_returns_and_describe_stacks_the_change_set(cfn: Any) -> None:
    body = _template()
    created = _created(cfn, "members", body)
    assert cfn.describe_stacks(StackName="members")["Stacks"][0]["ChangeSetId"] == created

    topics = ["arn:aws:sns:us-east-1:123456789012:stack-news"]
    rollback = {"RollbackTriggers": [], "MonitoringTimeInMinutes": 5}
    made = cfn.create_change_set(
        StackName="members", ChangeSetName="acknowledged", TemplateBody=_template(owner="team-c"),
        Capabilities=["CAPABILITY_IAM"], NotificationARNs=topics, RollbackConfiguration=rollback,
    )
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=made["Id"], WaiterConfig=FAST)
    described = cfn.describe_change_set(ChangeSetName=made["Id"])
    assert described["Capabilities"] == ["CAPABILITY_IAM"]
    assert described["NotificationARNs"] == topics
    assert described["RollbackConfiguration"] == rollback
    assert described["IncludeNestedStacks"] is False
    [summary] = [c for c in cfn.list_change_sets(StackName="members")["Summaries"] if c["ChangeSetName"] == "acknowledged"]
    assert summary["IncludeNestedStacks"] is False

    bare = cfn.create_change_set(StackName="members", ChangeSetName="bare", TemplateBody=_template(owner="team-d"))
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=bare["Id"], WaiterConfig=FAST)
    described = cfn.describe_change_set(ChangeSetName=bare["Id"])
    assert (described["Capabilities"], described["NotificationARNs"], described["RollbackConfiguration"]) == ([], [], {})
    assert described["IncludeNestedStacks"] is False

    cfn.execute_change_set(ChangeSetName=bare["Id"])
    cfn.get_waiter("stack_update_complete").wait(StackName="members", WaiterConfig=FAST)
    assert cfn.describe_stacks(StackName="members")["Stacks"][0]["ChangeSetId"] == bare["Id"]


@pytest.mark.parametrize(
    "call, arguments",
    [
        ("describe_change_set", {}),
        ("execute_change_set", {}),
        ("delete_change_set", {}),
        ("describe_change_set_hooks", {}),
    ],
)
def test_change_set_calls_on_a_stack_that_does_not_exist_are_validation_errors(cfn: Any, call: str, arguments: Dict[str, Any]) -> None:
    with pytest.raises(ClientError) as missing:
        getattr(cfn, call)(StackName="nowhere", ChangeSetName="plan", **arguments)
    answer = missing.value.response
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert answer["Error"]["Code"] == "ValidationError"
    assert answer["Error"]["Message"] == "Stack [nowhere] does not exist"

    with pytest.raises(ClientError) as unnamed:
        getattr(cfn, call)(ChangeSetName="plan", **arguments)
    answer = unnamed.value.response
    assert (answer["ResponseMetadata"]["HTTPStatusCode"], answer["Error"]["Code"]) == (400, "ValidationError")
    assert answer["Error"]["Message"] == "StackName must be specified if ChangeSetName is not specified as an ARN."


def test_a_property_added_or_removed_says_so_in_its_attribute_change_type(cfn: Any) -> None:
    def body(**properties: Any) -> str:
        return json.dumps({"Resources": {"Only": {"Type": NOTE, "Properties": {"Title": "only", **properties}}}})

    _created(cfn, "edited", body(Content="kept for now"))
    changes = _changes(cfn, "edited", "edit", True, TemplateBody=body(Priority=2))
    content, priority = _details(changes["Only"])
    assert content == {
        "Target": {
            "Attribute": "Properties", "Name": "Content", "RequiresRecreation": "Never", "Path": "/Properties/Content",
            "BeforeValue": "kept for now", "AttributeChangeType": "Remove",
        },
        "Evaluation": "Static",
        "ChangeSource": "DirectModification",
    }
    assert priority["Target"] == {
        "Attribute": "Properties", "Name": "Priority", "RequiresRecreation": "Never", "Path": "/Properties/Priority",
        "AfterValue": "2", "AttributeChangeType": "Add",
    }
