"""Change sets are kept across a ``--state`` restart: a real ``cfnrun serve`` stopped and started again on the same state
folder answers DescribeChangeSet (property values included) and ListChangeSets as before, and ExecuteChangeSet carries
the plan out; the writeOnly and NoEcho values they were given are on no disk."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

from conftest import LOCAL_STATE, SAMPLES, ServerProcess
from kept_state import kept_text
from stack_waits import settled

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
FAST = {"Delay": 0.1, "MaxAttempts": 600}


def _template(priority: int) -> str:
    return json.dumps({
        "Parameters": {"Pin": {"Type": "String", "NoEcho": True, "Default": "unset-pin"}},
        "Resources": {"Note": {"Type": "Cfnrun::Sample::Note", "Properties": {
            "Title": "kept", "Priority": priority, "AccessPassword": "secret-password-77", "Content": {"Ref": "Pin"},
        }}},
    })


def _serve(project: Path, state: Path) -> Tuple[ServerProcess, Any]:
    import boto3

    server = ServerProcess(project, "--no-reload", "--virtual-clock", "--state", str(state))
    return server, boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)


def _seen(cfn: Any) -> Dict[str, Any]:
    """What the change sets look like to a caller."""
    described = {}
    for stack, name in (("kept", "next"), ("kept", "pinned"), ("kept", "same"), ("fresh", "first")):
        answer = cfn.describe_change_set(StackName=stack, ChangeSetName=name, IncludePropertyValues=True)
        answer.pop("ResponseMetadata")
        described[name] = answer
    listed = cfn.list_change_sets(StackName="kept")["Summaries"]
    return {"described": described, "listed": sorted(json.dumps(s, default=str, sort_keys=True) for s in listed)}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "note"
    shutil.copytree(SAMPLES / "note", copy, ignore=LOCAL_STATE)
    return copy


def test_change_sets_are_kept_across_a_restart_and_executed_as_described(project: Path, tmp_path: Path) -> None:
    state = tmp_path / "kept"
    first, cfn = _serve(project, state)
    try:
        cfn.create_stack(StackName="kept", TemplateBody=_template(1))
        settled(cfn, "kept", "stack_create_complete")
        cfn.create_change_set(StackName="kept", ChangeSetName="next", TemplateBody=_template(2))
        cfn.create_change_set(StackName="kept", ChangeSetName="pinned", TemplateBody=_template(3),
                              Parameters=[{"ParameterKey": "Pin", "ParameterValue": "pin-given-4711"}])
        cfn.create_change_set(StackName="fresh", ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=_template(4))
        cfn.create_change_set(StackName="kept", ChangeSetName="same", TemplateBody=_template(1))  # FAILED: no changes
        for stack, name in (("kept", "next"), ("kept", "pinned"), ("fresh", "first")):
            cfn.get_waiter("change_set_create_complete").wait(StackName=stack, ChangeSetName=name, WaiterConfig=FAST)
        before = _seen(cfn)
    finally:
        first.stop()
    assert before["described"]["same"]["Status"] == "FAILED"
    changes = before["described"]["next"]["Changes"]
    assert [c["ResourceChange"]["Action"] for c in changes] == ["Modify"]
    assert "secret-password-77" not in json.dumps(before, default=str)  # writeOnly: masked as IncludePropertyValues shows it
    on_disk = kept_text(state)
    assert "pin-given-4711" not in on_disk
    assert on_disk.count("secret-password-77") == on_disk.count('\\"AccessPassword\\": \\"secret-password-77\\"')  # only in the templates

    second, cfn = _serve(project, state)
    try:
        assert _seen(cfn) == before
        with pytest.raises(cfn.exceptions.InvalidChangeSetStatusException, match="NoEcho parameter Pin"):
            cfn.execute_change_set(StackName="kept", ChangeSetName="pinned")
        cfn.execute_change_set(StackName="kept", ChangeSetName="next")
        settled(cfn, "kept", "stack_update_complete")
        cfn.execute_change_set(StackName="fresh", ChangeSetName="first")
        settled(cfn, "fresh", "stack_create_complete")
        stacks = {name: cfn.describe_stacks(StackName=name)["Stacks"][0] for name in ("kept", "fresh")}
        assert stacks["kept"]["ChangeSetId"] == before["described"]["next"]["ChangeSetId"]
        assert stacks["fresh"]["ChangeSetId"] == before["described"]["first"]["ChangeSetId"]
        executed = cfn.describe_change_set(StackName="kept", ChangeSetName="next")["ExecutionStatus"]
        assert executed == "EXECUTE_COMPLETE"
        assert [s["ChangeSetName"] for s in cfn.list_change_sets(StackName="kept")["Summaries"]] == ["next"]  # the others go
    finally:
        second.stop()
