"""Stack refactoring on local stacks: resources move between stacks (and take new logical ids) untouched, the refusals
of what a refactor cannot do, the records kept across a restart; DescribeAccountLimits and EstimateTemplateCost."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

from conftest import LOCAL_STATE, SAMPLES
from kept_state import api_error, kept_records, serve_note_kept

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
FAST = {"Delay": 0.1, "MaxAttempts": 600}


def _notes(exported: str = "", **titles: str) -> str:
    """Notes by logical id, their titles given; ``exported``: the one whose Ref is exported as ``note-id``."""
    template: Dict[str, Any] = {"Resources": {lid: {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": t}} for lid, t in titles.items()}}
    if exported:
        template["Outputs"] = {"NoteId": {"Value": {"Ref": exported}, "Export": {"Name": "note-id"}}}
    return json.dumps(template)




def _physical_ids(cfn: Any, stack: str) -> Dict[str, str]:
    return {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cfn.describe_stack_resources(StackName=stack)["StackResources"]}


def _statuses(cfn: Any, stack: str) -> List[str]:
    events = cfn.describe_stack_events(StackName=stack)["StackEvents"]
    return [f"{e['LogicalResourceId']} {e['ResourceStatus']}" for e in reversed(events)]


def _failed(cfn: Any, **arguments: Any) -> Dict[str, Any]:
    refactor_id = cfn.create_stack_refactor(**arguments)["StackRefactorId"]
    return dict(cfn.describe_stack_refactor(StackRefactorId=refactor_id))


def test_a_refactor_moves_and_renames_resources_without_touching_them_and_the_records_keep_it(tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    first = serve_note_kept(tmp_path)
    try:
        cfn = boto3.client("cloudformation", endpoint_url=first.url, **CREDENTIALS)
        cfn.create_stack(StackName="source", TemplateBody=_notes("Rename", Keep="keep", Rename="rename", Split="split"))
        cfn.create_stack(StackName="target", TemplateBody=_notes(Stay="stay"))
        for name in ("source", "target"):
            cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig=FAST)
        before = {**_physical_ids(cfn, "source"), **_physical_ids(cfn, "target")}
        target_events = len(cfn.describe_stack_events(StackName="target")["StackEvents"])

        # refused as the service refuses them: a resource added, a property changed, a resource dropped, a missing stack
        definitions = [{"StackName": "source", "TemplateBody": _notes(Keep="keep")}]
        added = _failed(cfn, StackDefinitions=[{"StackName": "source", "TemplateBody": _notes(Keep="keep", Rename="rename", Split="split", New="new")}])
        assert (added["Status"], added["ExecutionStatus"]) == ("CREATE_FAILED", "UNAVAILABLE")
        assert "cannot create resources: [New (source)]" in added["StatusReason"]
        changed = _failed(cfn, StackDefinitions=definitions + [{"StackName": "target", "TemplateBody": _notes(Stay="stay", Rename="new title", Split="split")}])
        assert "cannot change resource configurations" in changed["StatusReason"]
        dropped = _failed(cfn, StackDefinitions=definitions + [{"StackName": "target", "TemplateBody": _notes(Stay="stay", Split="split")}])
        assert "cannot delete resources: [Rename] of stack [source]" in dropped["StatusReason"]
        missing = _failed(cfn, StackDefinitions=definitions + [{"StackName": "fresh", "TemplateBody": _notes(Split="split")}])
        assert "set EnableStackCreation" in missing["StatusReason"]
        refused = api_error(cfn.execute_stack_refactor, StackRefactorId=added["StackRefactorId"])
        assert refused["Message"].endswith("cannot be executed in its current execution status of [UNAVAILABLE]")
        assert api_error(cfn.describe_stack_refactor, StackRefactorId="nope")["Code"] == "StackRefactorNotFoundException"

        # one that a later update makes OBSOLETE
        stale = cfn.create_stack_refactor(StackDefinitions=[{"StackName": "target", "TemplateBody": _notes(Renamed="stay")}],
                                          ResourceMappings=[{"Source": {"StackName": "target", "LogicalResourceId": "Stay"},
                                                             "Destination": {"StackName": "target", "LogicalResourceId": "Renamed"}}])
        stale_id = stale["StackRefactorId"]
        assert cfn.describe_stack_refactor(StackRefactorId=stale_id)["ExecutionStatus"] == "AVAILABLE"

        source_id = cfn.describe_stacks(StackName="source")["Stacks"][0]["StackId"]
        refactor_id = cfn.create_stack_refactor(
            Description="split the source",
            EnableStackCreation=True,
            StackDefinitions=[
                {"StackName": "target", "TemplateBody": _notes("Renamed", Stay="stay", Renamed="rename")},  # takes over the export
                {"StackName": "source", "TemplateBody": _notes(Keep="keep")},
                {"StackName": "fresh", "TemplateBody": _notes(Split="split")},
            ],
            ResourceMappings=[{"Source": {"StackName": source_id, "LogicalResourceId": "Rename"},  # a stack named by its ARN too
                               "Destination": {"StackName": "target", "LogicalResourceId": "Renamed"}}],
        )["StackRefactorId"]
        cfn.get_waiter("stack_refactor_create_complete").wait(StackRefactorId=refactor_id, WaiterConfig=FAST)
        described = cfn.describe_stack_refactor(StackRefactorId=refactor_id)
        assert (described["Status"], described["ExecutionStatus"], described["Description"]) == ("CREATE_COMPLETE", "AVAILABLE", "split the source")
        ids = described["StackIds"]
        assert len(ids) == 3 and ids[1] == cfn.describe_stacks(StackName="source")["Stacks"][0]["StackId"] and ":stack/fresh/" in ids[2]
        actions = cfn.list_stack_refactor_actions(StackRefactorId=refactor_id)["StackRefactorActions"]
        assert [(a["Action"], a["Entity"]) for a in actions] == [("CREATE", "STACK"), ("MOVE", "RESOURCE"), ("MOVE", "RESOURCE")]
        moves = {a["ResourceMapping"]["Destination"]["LogicalResourceId"]: a for a in actions[1:]}
        assert moves["Renamed"]["Detection"] == "MANUAL" and moves["Split"]["Detection"] == "AUTO"
        assert moves["Renamed"]["PhysicalResourceId"] == before["Rename"] and moves["Renamed"]["Description"] == "No configuration changes detected."
        assert moves["Split"]["ResourceMapping"] == {"Source": {"StackName": ids[1], "LogicalResourceId": "Split"},
                                                     "Destination": {"StackName": ids[2], "LogicalResourceId": "Split"}}
        assert {"Key": "aws:cloudformation:stack-name", "Value": "target"} in moves["Renamed"]["TagResources"]
        listed = cfn.list_stack_refactors(ExecutionStatusFilter=["AVAILABLE"])["StackRefactorSummaries"]
        assert {s["StackRefactorId"] for s in listed} == {refactor_id, stale_id}

        cfn.execute_stack_refactor(StackRefactorId=refactor_id)
        cfn.get_waiter("stack_refactor_execute_complete").wait(StackRefactorId=refactor_id, WaiterConfig=FAST)
        assert cfn.describe_stack_refactor(StackRefactorId=refactor_id)["ExecutionStatus"] == "EXECUTE_COMPLETE"
        assert cfn.describe_stack_refactor(StackRefactorId=stale_id)["ExecutionStatus"] == "OBSOLETE"  # its stack changed since
        assert _physical_ids(cfn, "source") == {"Keep": before["Keep"]}
        assert _physical_ids(cfn, "target") == {"Stay": before["Stay"], "Renamed": before["Rename"]}
        assert _physical_ids(cfn, "fresh") == {"Split": before["Split"]}
        assert cfn.describe_stacks(StackName="fresh")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
        assert [(e["Name"], e["Value"], e["ExportingStackId"]) for e in cfn.list_exports()["Exports"]] == [("note-id", before["Rename"], ids[0])]
        assert "ExecutionStatusReason" not in cfn.describe_stack_refactor(StackRefactorId=refactor_id)
        # each stack's own events; no resource event: no handler was called
        assert _statuses(cfn, "target")[target_events:] == ["target UPDATE_IN_PROGRESS", "target UPDATE_COMPLETE"]
        assert _statuses(cfn, "fresh") == ["fresh CREATE_IN_PROGRESS", "fresh CREATE_COMPLETE"]
        assert cfn.get_template(StackName="target")["TemplateBody"]["Resources"]["Renamed"]["Properties"] == {"Title": "rename"}
        assert cfn.describe_stacks(StackName="target")["Stacks"][0]["LastOperations"][0]["OperationType"] == "UPDATE_STACK"
    finally:
        first.stop_cleanly()

    homes = {r["physical_id"]: (k["name"], r["logical_id"]) for k in kept_records(tmp_path / "kept") for r in k["resources"]}
    assert homes[before["Rename"]] == ("target", "Renamed") and homes[before["Split"]] == ("fresh", "Split")
    second = serve_note_kept(tmp_path)
    try:
        cfn = boto3.client("cloudformation", endpoint_url=second.url, **CREDENTIALS)
        assert _physical_ids(cfn, "target") == {"Stay": before["Stay"], "Renamed": before["Rename"]}  # kept in --state
        cfn.delete_stack(StackName="fresh")  # its resource is its own now: deleted with it
        cfn.get_waiter("stack_delete_complete").wait(StackName="fresh", WaiterConfig=FAST)
        assert _physical_ids(cfn, "source") == {"Keep": before["Keep"]}
    finally:
        second.stop_cleanly()


def _seen_refactors(cfn: Any) -> Dict[str, Any]:
    """What the refactors look like to a caller."""
    summaries = cfn.list_stack_refactors()["StackRefactorSummaries"]
    return {s["StackRefactorId"]: (s, cfn.list_stack_refactor_actions(StackRefactorId=s["StackRefactorId"])["StackRefactorActions"])
            for s in summaries}


def test_a_refactor_made_before_a_restart_is_listed_as_it_was_and_executed_after_it(tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    first = serve_note_kept(tmp_path)
    try:
        cfn = boto3.client("cloudformation", endpoint_url=first.url, **CREDENTIALS)
        cfn.create_stack(StackName="one", TemplateBody=_notes(Keep="keep", Move="move"))
        cfn.get_waiter("stack_create_complete").wait(StackName="one", WaiterConfig=FAST)
        before_ids = _physical_ids(cfn, "one")
        failed = _failed(cfn, StackDefinitions=[{"StackName": "one", "TemplateBody": _notes(Keep="keep", Move="move", New="new")}])
        refactor_id = cfn.create_stack_refactor(EnableStackCreation=True, StackDefinitions=[
            {"StackName": "one", "TemplateBody": _notes(Keep="keep")}, {"StackName": "two", "TemplateBody": _notes(Move="move")}],
        )["StackRefactorId"]
        before = _seen_refactors(cfn)
    finally:
        first.stop_cleanly()
    assert set(before) == {failed["StackRefactorId"], refactor_id}

    second = serve_note_kept(tmp_path)
    try:
        cfn = boto3.client("cloudformation", endpoint_url=second.url, **CREDENTIALS)
        assert _seen_refactors(cfn) == before
        cfn.execute_stack_refactor(StackRefactorId=refactor_id)
        cfn.get_waiter("stack_refactor_execute_complete").wait(StackRefactorId=refactor_id, WaiterConfig=FAST)
        assert _physical_ids(cfn, "one") == {"Keep": before_ids["Keep"]}
        assert _physical_ids(cfn, "two") == {"Move": before_ids["Move"]}
    finally:
        second.stop_cleanly()
    third = serve_note_kept(tmp_path)  # what the execution made of it is kept with the stacks' records
    try:
        cfn = boto3.client("cloudformation", endpoint_url=third.url, **CREDENTIALS)
        assert cfn.describe_stack_refactor(StackRefactorId=refactor_id)["ExecutionStatus"] == "EXECUTE_COMPLETE"
    finally:
        third.stop_cleanly()


KILLED_MID_TRANSACTION = """
import os, sys
from pathlib import Path
from cfnrun.stacks.state_db import StateDatabase
database = StateDatabase(Path(sys.argv[1]))
database.open()
with database.one_transaction():
    database.put({"stack_id": "target", "name": "target", "resources": [{"logical_id": "Moved", "physical_id": "p-1"}], "events": []})
    database.put({"stack_id": "source", "name": "source", "resources": [], "events": []})
    os._exit(9)  # killed before the refactor's one commit
"""


def test_a_process_killed_inside_one_transaction_leaves_every_record_as_it_was(tmp_path: Path) -> None:
    """What ExecuteStackRefactor's writes rely on: no record changes unless they all do."""
    from cfnrun.stacks.state_db import StateDatabase

    database = StateDatabase(tmp_path)
    database.open()
    database.put({"stack_id": "source", "name": "source", "resources": [{"logical_id": "Moved", "physical_id": "p-1"}], "events": []})
    database.close()
    killed = subprocess.run([sys.executable, "-c", KILLED_MID_TRANSACTION, str(tmp_path)], check=False)
    assert killed.returncode == 9
    records = kept_records(tmp_path)
    assert [(r["name"], r["resources"]) for r in records] == [("source", [{"logical_id": "Moved", "physical_id": "p-1"}])]


def test_account_limits_and_template_cost(tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    server = serve_note_kept(tmp_path)
    try:
        cfn = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        limits = {limit["Name"]: limit["Value"] for limit in cfn.describe_account_limits()["AccountLimits"]}
        assert limits == {"StackLimit": 2000, "StackOutputsLimit": 200, "ConcurrentResourcesLimit": 2500}
        url = cfn.estimate_template_cost(TemplateBody=_notes(A="a"))["Url"]
        assert url.startswith("http://calculator.s3.amazonaws.com/calc5.html?key=cloudformation/")
        bad = json.dumps({"Resources": {"A": {"Type": "AWS::S3::Buckett"}}})
        assert api_error(cfn.estimate_template_cost, TemplateBody=bad) == api_error(cfn.validate_template, TemplateBody=bad)
    finally:
        server.stop_cleanly()
