"""SetAlias and RemoveAlias on local stacks: a second name, wherever a call takes StackName, kept across a restart."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import LOCAL_STATE, SAMPLES
from kept_state import api_error, serve_note_kept

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
FAST = {"Delay": 0.1, "MaxAttempts": 600}


def _note(title: str) -> str:
    return json.dumps({"Resources": {"Note": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": title}}}})




def test_an_alias_names_its_stack_in_every_call_until_removed_and_survives_a_restart(tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    first = serve_note_kept(tmp_path)
    try:
        cfn = boto3.client("cloudformation", endpoint_url=first.url, **CREDENTIALS)
        stack_id = cfn.create_stack(StackName="orders", TemplateBody=_note("first"))["StackId"]
        cfn.create_stack(StackName="other", TemplateBody=_note("other"))
        for name in ("orders", "other"):
            cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig=FAST)
        assert cfn.set_alias(StackName="orders", AliasName="orders-v2")["ResponseMetadata"]["HTTPStatusCode"] == 200
        described = cfn.describe_stacks(StackName="orders-v2")["Stacks"][0]
        assert (described["StackId"], described["StackName"], described["AliasName"]) == (stack_id, "orders", "orders-v2")
        cfn.update_stack(StackName="orders-v2", TemplateBody=_note("second"))
        cfn.get_waiter("stack_update_complete").wait(StackName="orders-v2", WaiterConfig=FAST)
        events = cfn.describe_stack_events(StackName="orders-v2")["StackEvents"]
        assert events[0]["StackName"] == "orders" and events[0]["ResourceStatus"] == "UPDATE_COMPLETE"
        assert cfn.describe_stack_resource(StackName="orders-v2", LogicalResourceId="Note")["StackResourceDetail"]["StackId"] == stack_id
        # refused: a second alias, an alias or stack name in use, a stack named as an alias, a malformed alias
        assert api_error(cfn.set_alias, StackName="orders", AliasName="orders-v3")["Code"] == "LimitExceededException"
        assert api_error(cfn.set_alias, StackName="other", AliasName="orders-v2")["Code"] == "AlreadyExistsException"
        assert api_error(cfn.set_alias, StackName="other", AliasName="orders")["Code"] == "AlreadyExistsException"
        assert api_error(cfn.create_stack, StackName="orders-v2", TemplateBody=_note("x")) == {
            "Type": "Sender", "Code": "AlreadyExistsException", "Message": "Stack [orders-v2] already exists"
        }
        malformed = api_error(cfn.set_alias, StackName="other", AliasName="9-lives")
        assert malformed["Code"] == "ValidationError" and "starts with an alphabetic character" in malformed["Message"]
        assert "AliasName" not in cfn.describe_stacks(StackName="other")["Stacks"][0]
    finally:
        first.stop_cleanly()

    second = serve_note_kept(tmp_path)
    try:
        cfn = boto3.client("cloudformation", endpoint_url=second.url, **CREDENTIALS)
        assert cfn.describe_stacks(StackName="orders-v2")["Stacks"][0]["StackId"] == stack_id  # kept in --state
        cfn.remove_alias(AliasName="orders-v2")
        assert api_error(cfn.describe_stacks, StackName="orders-v2")["Message"] == "Stack with id orders-v2 does not exist"
        assert api_error(cfn.remove_alias, AliasName="orders-v2") == {"Type": "Sender", "Code": "ValidationError", "Message": "Alias [orders-v2] does not exist"}
        cfn.set_alias(StackName="other", AliasName="orders-v2")  # free again
        cfn.delete_stack(StackName="orders-v2")  # deletes "other", by its alias
        cfn.get_waiter("stack_delete_complete").wait(StackName="other", WaiterConfig=FAST)
        assert [s["StackName"] for s in cfn.describe_stacks()["Stacks"]] == ["orders"]
    finally:
        second.stop_cleanly()
