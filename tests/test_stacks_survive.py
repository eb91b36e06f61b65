"""Local stacks that survive what a client or a function sends (issue 31): real serve processes, real clients.

Each test starts the serve it needs (its own folder and ``--state``), so what one test does to a
serve (a lock held, a frozen check) cannot reach another's.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List

import pytest

from kept_state import kept_text
from cfnrun.stacks.state_db import StateDatabase
from conftest import FIXTURES, LOCAL_STATE, SAMPLES, ServerProcess, cfnrun, wait_until

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
FAST = {"Delay": 0.1, "MaxAttempts": 600}
FUNCTIONS = FIXTURES / "custom_resource"
GREETING = {"Resources": {"Greeting": {"Type": "Custom::Greeting", "Properties": {"ServiceToken": "GreeterFunction", "Name": "world"}}}}


def _serve(folder: Path, *arguments: str) -> ServerProcess:
    process = subprocess.Popen(
        [sys.executable, "-m", "cfnrun", "serve", "--port", "0", "--no-reload", *arguments],
        cwd=str(folder), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "NO_COLOR": "1"},
    )
    return ServerProcess(folder, process=process)


def _cloudformation(server: ServerProcess) -> Any:
    import boto3

    return boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)


def _events(cfn: Any, stack: str) -> List[Dict[str, Any]]:
    pages = cfn.get_paginator("describe_stack_events").paginate(StackName=stack)
    return list(reversed([e for page in pages for e in page["StackEvents"]]))


@pytest.fixture
def functions(tmp_path: Path) -> Path:
    """A folder holding the custom resources' functions (``functions/template.yaml``)."""
    shutil.copytree(FUNCTIONS, tmp_path / "functions")
    return tmp_path


def test_a_second_serve_on_the_same_state_is_refused_naming_the_holder(functions: Path) -> None:
    first = _serve(functions, "--functions", "functions/template.yaml", "--state", "kept")
    try:
        cfn = _cloudformation(first)
        cfn.create_stack(StackName="first", TemplateBody=json.dumps(GREETING))
        cfn.get_waiter("stack_create_complete").wait(StackName="first", WaiterConfig=FAST)
        refused = cfnrun("serve", "--port", "0", "--no-reload", "--functions", "functions/template.yaml", "--state", "kept", cwd=functions)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        error = [line for line in refused.stderr.splitlines() if line.startswith("cfnrun: error:")]
        assert len(error) == 1 and f"pid {first.process.pid} at {first.url}" in error[0], refused.stderr
        assert "--state kept" in error[0]
        template = functions / "stack.json"
        template.write_text(json.dumps(GREETING), encoding="utf-8")
        tested = cfnrun("stack", "test", "stack.json", "--functions", "functions/template.yaml", "--state", "kept", cwd=functions)
        assert tested.returncode == 2 and f"pid {first.process.pid}" in tested.stderr, tested.stdout + tested.stderr
        # The holder keeps serving, and its stack is still in its state.
        assert cfn.describe_stacks(StackName="first")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
    finally:
        first.stop(signal.SIGKILL)  # a crash: the kernel releases the lock
    second = _serve(functions, "--functions", "functions/template.yaml", "--state", "kept")
    try:
        assert _cloudformation(second).describe_stacks(StackName="first")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
    finally:
        second.stop()


@pytest.fixture
def edges(tmp_path: Path) -> Path:
    """A folder holding the custom resources' functions that answer what the service refuses or masks (``edges/template.yaml``)."""
    shutil.copytree(FIXTURES / "custom_resource_edges", tmp_path / "edges")
    return tmp_path


def test_a_custom_resource_answer_over_the_size_limit_fails_the_resource_at_once(edges: Path) -> None:
    # No --virtual-clock: a resource left waiting would wait the service's hour.
    server = _serve(edges, "--functions", "edges/template.yaml")
    try:
        cfn = _cloudformation(server)
        for name, size in (("over-the-limit", 5000), ("over-the-http-bound", 7 * 1024 * 1024)):
            template = {"Resources": {"Big": {"Type": "Custom::Big", "Properties": {"ServiceToken": "OversizedFunction", "Size": size}}}}
            cfn.create_stack(StackName=name, TemplateBody=json.dumps(template))
            with pytest.raises(Exception, match="ROLLBACK_COMPLETE"):
                cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig=FAST)
            failed = [e for e in _events(cfn, name) if e["LogicalResourceId"] == "Big" and e["ResourceStatus"] == "CREATE_FAILED"]
            assert failed and failed[0]["ResourceStatusReason"].startswith("Response object is too long. ("), failed
            assert "the service takes at most 4096" in failed[0]["ResourceStatusReason"]
            cfn.delete_stack(StackName=name)
            cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig=FAST)
    finally:
        server.stop()


def test_no_echo_values_are_masked_where_the_service_masks_them(edges: Path) -> None:
    shutil.copytree(SAMPLES / "note", edges / "note", ignore=LOCAL_STATE)
    server = _serve(edges, "--virtual-clock", "--provider", "note", "--functions", "edges/template.yaml", "--state", "kept")
    try:
        cfn = _cloudformation(server)
        # A custom resource's Data answered with NoEcho: true (a password the function made); an output that reads it shows it masked.
        secret = {
            "Resources": {"Secret": {"Type": "Custom::Secret", "Properties": {"ServiceToken": "SecretFunction"}}},
            "Outputs": {"Password": {"Value": {"Fn::GetAtt": ["Secret", "Password"]}}, "Said": {"Value": {"Fn::Sub": "pw=${Secret.Password}"}}},
        }
        cfn.create_stack(StackName="secret", TemplateBody=json.dumps(secret))
        cfn.get_waiter("stack_create_complete").wait(StackName="secret", WaiterConfig=FAST)
        outputs = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName="secret")["Stacks"][0]["Outputs"]}
        assert outputs == {"Password": "****", "Said": "pw=****"}
        # A NoEcho parameter whose value fails the property's schema pattern: the reason names the property, never the value.
        refused = {
            "Parameters": {"Folder": {"Type": "String", "NoEcho": True}},
            "Resources": {"Note": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": "t", "Folder": {"Ref": "Folder"}}}},
        }
        cfn.create_stack(  # past the pre-deployment validation (which masks it too: test_pre_deployment_validation.py)
            StackName="refused", TemplateBody=json.dumps(refused), Parameters=[{"ParameterKey": "Folder", "ParameterValue": "Not A Folder hunter3"}],
            DisableValidation=True,
        )
        with pytest.raises(Exception, match="ROLLBACK_COMPLETE"):
            cfn.get_waiter("stack_create_complete").wait(StackName="refused", WaiterConfig=FAST)
        events = _events(cfn, "refused")
        failed = [e for e in events if e["ResourceStatus"] == "CREATE_FAILED"]
        assert failed and "Folder" in failed[0]["ResourceStatusReason"], failed
        assert "hunter3" not in json.dumps(events, default=str), [e.get("ResourceStatusReason") for e in events]
    finally:
        server.stop()
    kept = kept_text(edges / "kept")
    assert "pa55-w0rd" not in kept and "hunter3" not in kept


PAIRS_RULES = """\
let items = Resources.*.Properties.Items[*]

rule every_item_unlike_every_other when %items !empty {
    %items[*] !IN %items
}
"""


def _guard_hook(rules: str, target: str, stack: str) -> Dict[str, Any]:
    return {
        "Resources": {
            "Guard": {
                "Type": "AWS::CloudFormation::GuardHook",
                "Properties": {
                    "Alias": "Cfnrun::Guard::Pairs", "RuleLocation": {"Uri": rules}, "ExecutionRole": "arn:aws:iam::123456789012:role/guard",
                    "HookStatus": "ENABLED", "FailureMode": "FAIL", "TargetOperations": ["RESOURCE"], "TargetFilters": {"TargetNames": [target]},
                    "StackFilters": {"FilteringCriteria": "ALL", "StackNames": {"Include": [stack]}},
                },
            }
        }
    }


def test_guard_rules_that_run_long_are_stopped_at_the_limit_while_serve_answers(edges: Path) -> None:
    (edges / "policy").mkdir()
    (edges / "policy" / "pairs.guard").write_text(PAIRS_RULES, encoding="utf-8")
    # --time-scale 0.1: the Guard limit is 3 s; these rules over 4,000 items run for minutes.
    server = _serve(edges, "--virtual-clock", "--time-scale", "0.1", "--functions", "edges/template.yaml", "--guard-rules-dir", "policy")
    try:
        cfn = _cloudformation(server)
        cfn.create_stack(StackName="pairs-hook", TemplateBody=json.dumps(_guard_hook("policy/pairs.guard", "Custom::Listed", "pairs")))
        cfn.get_waiter("stack_create_complete").wait(StackName="pairs-hook", WaiterConfig=FAST)
        items = ",".join(f"item-{i:05d}" for i in range(4000))
        listed = {"Resources": {"Listed": {"Type": "Custom::Listed", "Properties": {"ServiceToken": "SecretFunction", "Items": {"Fn::Split": [",", items]}}}}}
        cfn.create_stack(StackName="pairs", TemplateBody=json.dumps(listed))
        wait_until(lambda: any(e.get("HookStatus") == "HOOK_IN_PROGRESS" for e in _events(cfn, "pairs")), timeout=30)
        assert cfn.list_stacks()["StackSummaries"]  # answered while the rules run
        with pytest.raises(Exception, match="ROLLBACK_COMPLETE"):
            cfn.get_waiter("stack_create_complete").wait(StackName="pairs", WaiterConfig=FAST)
        hooked = [e for e in _events(cfn, "pairs") if e.get("HookStatus") == "HOOK_FAILED"]
        assert hooked and "did not finish within cfnrun's 30 s limit for a Guard hook's evaluation" in hooked[0]["HookStatusReason"], hooked
        cfn.delete_stack(StackName="pairs-hook")
        cfn.get_waiter("stack_delete_complete").wait(StackName="pairs-hook", WaiterConfig=FAST)
    finally:
        server.stop()


BACKTRACKING = "^(a+)+$"
BACKTRACKED = "a" * 35 + "!"  # hours of backtracking for an ECMA-262 engine


def test_a_value_that_makes_a_schema_pattern_backtrack_is_refused_and_serve_keeps_answering(tmp_path: Path) -> None:
    import boto3
    from botocore.exceptions import ClientError

    note = tmp_path / "note"
    shutil.copytree(SAMPLES / "note", note, ignore=LOCAL_STATE)
    schema_file = note / "cfnrun-sample-note.json"
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    schema["properties"]["Folder"]["pattern"] = BACKTRACKING
    schema_file.write_text(json.dumps(schema), encoding="utf-8")
    server = _serve(tmp_path, "--virtual-clock", "--provider", "note")
    try:
        cfn = _cloudformation(server)
        cloudcontrol = boto3.client("cloudcontrol", endpoint_url=server.url, **CREDENTIALS)
        # Cloud Control: the DesiredState is refused, with why.
        with pytest.raises(ClientError) as refused:
            cloudcontrol.create_resource(TypeName="Cfnrun::Sample::Note", DesiredState=json.dumps({"Title": "t", "Folder": BACKTRACKED}))
        assert "did not finish within 2 s (it backtracks on this value)" in refused.value.response["Error"]["Message"], refused.value.response
        assert cfn.list_stacks()["StackSummaries"] is not None  # serve answers the next call
        # A stack parameter's AllowedPattern: a ValidationError.
        allowed = {
            "Parameters": {"Name": {"Type": "String", "AllowedPattern": BACKTRACKING}},
            "Resources": {"Note": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": {"Ref": "Name"}}}},
        }
        with pytest.raises(ClientError) as invalid:
            cfn.create_stack(StackName="allowed", TemplateBody=json.dumps(allowed), Parameters=[{"ParameterKey": "Name", "ParameterValue": BACKTRACKED}])
        assert invalid.value.response["Error"]["Code"] == "ValidationError"
        assert "could not be checked against its AllowedPattern" in invalid.value.response["Error"]["Message"]
        # A property checked against the schema's pattern: the resource fails with why.
        checked = {
            "Parameters": {"Folder": {"Type": "String"}},
            "Resources": {"Note": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": "t", "Folder": {"Ref": "Folder"}}}},
        }
        cfn.create_stack(  # past the pre-deployment validation, which runs the same check
            StackName="checked", TemplateBody=json.dumps(checked), Parameters=[{"ParameterKey": "Folder", "ParameterValue": BACKTRACKED}],
            DisableValidation=True,
        )
        with pytest.raises(Exception, match="ROLLBACK_COMPLETE"):
            cfn.get_waiter("stack_create_complete").wait(StackName="checked", WaiterConfig=FAST)
        failed = [e for e in _events(cfn, "checked") if e["ResourceStatus"] == "CREATE_FAILED"]
        assert failed and "(it backtracks on this value), so it was stopped" in failed[0]["ResourceStatusReason"], failed
        # SIGTERM while a value is being matched (the pattern process has started for it): serve stops, exit 0.
        fresh = {**allowed, "Parameters": {"Name": {"Type": "String", "AllowedPattern": "^(c+)+$"}}}
        arguments = {"StackName": "stopping", "TemplateBody": json.dumps(fresh), "Parameters": [{"ParameterKey": "Name", "ParameterValue": "c" * 35 + "!"}]}
        calling = threading.Thread(target=lambda: _ignore_errors(cfn.create_stack, **arguments), daemon=True)
        calling.start()
        wait_until(lambda: _pattern_process_of(server.process.pid), timeout=30, what="the pattern process")
    finally:
        server.stop_cleanly()  # SIGTERM stops it


def _ignore_errors(call: Any, **arguments: Any) -> None:
    try:
        call(**arguments)
    except Exception:  # noqa: B902 - serve stopping under it may answer anything, or close the connection
        pass


def _pattern_process_of(pid: int) -> bool:
    """Is a child of ``pid`` the pattern process (``python -m cfnrun.model.pattern_worker``)?"""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    for child in children:
        try:
            if b"cfnrun.model.pattern_worker" in Path(f"/proc/{child}/cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


# serve, killed (SIGKILL, by itself) once it has saved a stack whose Greeting names greeting-moon as updated
KILLED_AT_THE_MOVE = """
import os, runpy, signal, sys
from cfnrun.stacks import store
save = store.StackStore.save
def killing_save(self, stack):
    save(self, stack)
    greeting = stack.resources.get("Greeting")
    if greeting is not None and greeting.physical_id == "greeting-moon" and greeting.status == "UPDATE_COMPLETE":
        os.kill(os.getpid(), signal.SIGKILL)
store.StackStore.save = killing_save
sys.argv = ["cfnrun"] + sys.argv[1:]
runpy.run_module("cfnrun", run_name="__main__")
"""


def test_a_serve_killed_as_a_custom_resource_moves_to_a_new_physical_resource_leaves_the_old_one_in_a_record(functions: Path) -> None:
    """A custom resource's function answers an update with a new PhysicalResourceId: once the stack's record names the
    new one, the old one (whose Delete is the cleanup's) must be in a record already, and the next serve deletes one of them."""
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED_AT_THE_MOVE, "serve", "--port", "0", "--no-reload", "--functions", "functions/template.yaml", "--state", "kept"],
        cwd=str(functions), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "NO_COLOR": "1"},
    )
    first = ServerProcess(functions, process=process)
    try:
        cfn = _cloudformation(first)
        cfn.create_stack(StackName="moved", TemplateBody=json.dumps(GREETING))
        cfn.get_waiter("stack_create_complete").wait(StackName="moved", WaiterConfig=FAST)
        moon = json.loads(json.dumps(GREETING))
        moon["Resources"]["Greeting"]["Properties"]["Name"] = "moon"
        cfn.update_stack(StackName="moved", TemplateBody=json.dumps(moon))
        assert first.process.wait(timeout=60) == -signal.SIGKILL
    finally:
        first.stop(signal.SIGKILL)
    database = StateDatabase(functions / "kept")
    database.open()
    try:
        [stack] = database.records()
        named = {r["physical_id"] for r in stack["resources"] + database.replaced() if r["logical_id"] == "Greeting"}
        print("NAMED", [(r["physical_id"], r.get("status")) for r in stack["resources"]], database.replaced(), [(e["physical_id"], e["status"]) for e in stack["events"]][-4:])
    finally:
        database.close()
    assert "greeting-world" in named, named

    second = _serve(functions, "--functions", "functions/template.yaml", "--state", "kept")
    try:
        cfn = _cloudformation(second)
        wait_until(lambda: cfn.describe_stacks(StackName="moved")["Stacks"][0]["StackStatus"].endswith("COMPLETE"), timeout=60, what="the interrupted update carried on")
        events = _events(cfn, "moved")
        deleted = {e["PhysicalResourceId"] for e in events if e["LogicalResourceId"] == "Greeting" and e["ResourceStatus"] == "DELETE_COMPLETE"}
        kept = cfn.describe_stack_resource(StackName="moved", LogicalResourceId="Greeting")["StackResourceDetail"]["PhysicalResourceId"]
        assert {"greeting-world", "greeting-moon"} == deleted | {kept}, (deleted, kept)  # neither is forgotten
    finally:
        second.stop()


def test_a_serve_killed_during_a_custom_resource_update_says_what_the_update_may_have_left(functions: Path) -> None:
    """The function of a custom resource gets an Update and has not answered when serve is killed: it may have made a new
    physical resource no record names. The next serve rolls the update back and says so, on the resource and its console."""
    first = _serve(functions, "--functions", "functions/template.yaml", "--state", "kept")
    try:
        cfn = _cloudformation(first)
        cfn.create_stack(StackName="unanswered", TemplateBody=json.dumps(GREETING))
        cfn.get_waiter("stack_create_complete").wait(StackName="unanswered", WaiterConfig=FAST)
        slow = json.loads(json.dumps(GREETING))
        slow["Resources"]["Greeting"]["Properties"]["Name"] = "slow"  # its function returns without answering
        cfn.update_stack(StackName="unanswered", TemplateBody=json.dumps(slow))
        first.has_printed(r"taking its time: no answer yet")
    finally:
        first.stop(signal.SIGKILL)
    second = _serve(functions, "--functions", "functions/template.yaml", "--state", "kept")
    try:
        cfn = _cloudformation(second)
        warned = second.has_printed(r"stack unanswered: Greeting \(Custom::Greeting\) may be left with no stack naming it")
        assert "had not answered the Update sent to greeting-world" in warned, warned
        wait_until(lambda: cfn.describe_stacks(StackName="unanswered")["Stacks"][0]["StackStatus"].endswith("COMPLETE"), timeout=60, what="the rollback")
        failed = [e for e in _events(cfn, "unanswered") if e["LogicalResourceId"] == "Greeting" and e["ResourceStatus"] == "UPDATE_FAILED"]
        assert [e["ResourceStatusReason"] for e in failed][-1:] == [  # after the restart's "serve stopped during this operation"
            "cfnrun serve was stopped during this custom resource's Update, and its function had not answered the Update sent to "
            "greeting-world, which it may have answered with a new PhysicalResourceId: a physical resource that Update made may "
            "exist with no stack naming it; serve's output says how to find and remove it"
        ]
        assert cfn.describe_stack_resource(StackName="unanswered", LogicalResourceId="Greeting")["StackResourceDetail"]["PhysicalResourceId"] == "greeting-world"
    finally:
        second.stop()
