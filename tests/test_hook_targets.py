"""Hooks on every target with real clients: a served hook project judging stacks, change sets and Cloud Control requests.

One serve (per test module and xdist worker) serves a copy of samples/note, the fixture hook
tests/fixtures/stackhook (STACK: the template needs a Description; CHANGE_SET: no resource
removed; Cfnrun::Sample::Note: no note titled "forbidden") and the function of a Lambda hook on
STACK targets (tests/fixtures/stack_lambda_hook). Each test sets the hook's configuration it needs
with SetTypeConfiguration first and works on its own stack names.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
import yaml
from botocore.exceptions import WaiterError

from conftest import FIXTURES, LOCAL_STATE, SAMPLES, ServerProcess, cfnrun

HOOK = "Cfnrun::Test::StackHook"
NOTE = "Cfnrun::Sample::Note"
FAST = {"Delay": 0.1, "MaxAttempts": 600}
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
REQUEST_BUDGET_S = float(os.environ.get("CFNRUN_TEST_REQUEST_BUDGET_S", "60"))


class Served:
    def __init__(self, server: ServerProcess, folder: Path) -> None:
        import boto3

        self.server = server
        self.folder = folder
        self.cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        self.cloudcontrol = boto3.client("cloudcontrol", endpoint_url=server.url, **CREDENTIALS)

    def configure(self, **hook_configuration: Any) -> None:
        document = {"CloudFormationConfiguration": {"HookConfiguration": {"HookInvocationStatus": "ENABLED", "FailureMode": "FAIL", **hook_configuration}}}
        self.cloudformation.set_type_configuration(TypeName=HOOK, Type="HOOK", Configuration=json.dumps(document))

    def events(self, stack: str) -> List[Dict[str, Any]]:
        pages = self.cloudformation.get_paginator("describe_stack_events").paginate(StackName=stack)
        return list(reversed([e for page in pages for e in page["StackEvents"]]))

    def status(self, stack: str) -> str:
        return str(self.cloudformation.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"])

    def wait(self, waiter: str, **arguments: Any) -> None:
        self.cloudformation.get_waiter(waiter).wait(WaiterConfig=FAST, **arguments)

    def request_ends(self, progress: Dict[str, Any]) -> Dict[str, Any]:
        """The Cloud Control request once it has ended (polled as a client does)."""
        token, deadline = progress["RequestToken"], time.monotonic() + REQUEST_BUDGET_S
        while progress["OperationStatus"] in ("PENDING", "IN_PROGRESS"):
            assert time.monotonic() < deadline, progress
            time.sleep(0.05)
            progress = self.cloudcontrol.get_resource_request_status(RequestToken=token)["ProgressEvent"]
        return progress


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("hooktargets")
    shutil.copytree(SAMPLES / "note", folder / "note", ignore=LOCAL_STATE)
    shutil.copytree(FIXTURES / "stackhook", folder / "stackhook", ignore=LOCAL_STATE)
    shutil.copytree(FIXTURES / "stack_lambda_hook", folder / "stack_lambda_hook", ignore=LOCAL_STATE)
    process = subprocess.Popen(
        [
            sys.executable, "-m", "cfnrun", "serve", "--port", "0", "--no-reload", "--virtual-clock", "--provider", "note", "--hook", "stackhook",
            "--functions", "stack_lambda_hook/template.yaml",
        ],
        cwd=str(folder), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "NO_COLOR": "1", "CFNRUN_HISTORY": "on"},
    )
    server = ServerProcess(folder, process=process)
    try:
        yield Served(server, folder)
    finally:
        server.stop()


def _template(description: str = "", **titles: str) -> str:
    resources = {name: {"Type": NOTE, "Properties": {"Title": title}} for name, title in titles.items()}
    return json.dumps({**({"Description": description} if description else {}), "Resources": resources})


def _hook_events(events: List[Dict[str, Any]], logical_id: str) -> List[tuple]:
    return [(e["ResourceStatus"], e["HookStatus"], e.get("HookStatusReason")) for e in events if e.get("HookType") == HOOK and e["LogicalResourceId"] == logical_id]


def test_a_stack_hook_refuses_a_template_without_a_description_before_anything_is_provisioned(served: Served) -> None:
    cfn = served.cloudformation
    served.configure(TargetOperations=["STACK"])
    cfn.create_stack(StackName="bare", TemplateBody=_template(First="one"))
    with pytest.raises(WaiterError):
        served.wait("stack_create_complete", StackName="bare")
    assert served.status("bare") == "ROLLBACK_COMPLETE"
    events = served.events("bare")
    assert _hook_events(events, "bare") == [
        ("CREATE_IN_PROGRESS", "HOOK_IN_PROGRESS", "Invoking hook"),
        ("CREATE_IN_PROGRESS", "HOOK_COMPLETE_FAILED", "Hook failed with message: the template must have a Description"),
    ]
    stack_events = [(e["ResourceStatus"], e.get("ResourceStatusReason")) for e in events if e["LogicalResourceId"] == "bare" and "HookType" not in e]
    assert ("ROLLBACK_IN_PROGRESS", f"The following hook(s) failed: [{HOOK}]") in stack_events
    assert [e for e in events if e["LogicalResourceId"] == "First"] == []  # refused before any resource started

    cfn.create_stack(StackName="described", TemplateBody=_template("notes for the team", First="one"))
    served.wait("stack_create_complete", StackName="described")
    assert _hook_events(served.events("described"), "described")[-1] == ("CREATE_IN_PROGRESS", "HOOK_COMPLETE_SUCCEEDED", "Hook succeeded with message: the template has a Description")

    cfn.update_stack(StackName="described", TemplateBody=_template(First="renamed"))  # the update drops the Description
    with pytest.raises(WaiterError):
        served.wait("stack_update_complete", StackName="described")
    assert served.status("described") == "UPDATE_ROLLBACK_COMPLETE"
    assert _hook_events(served.events("described"), "described")[-1] == ("UPDATE_IN_PROGRESS", "HOOK_COMPLETE_FAILED", "Hook failed with message: the template must have a Description")
    note = cfn.describe_stack_resource(StackName="described", LogicalResourceId="First")["StackResourceDetail"]["PhysicalResourceId"]
    assert json.loads(served.cloudcontrol.get_resource(TypeName=NOTE, Identifier=note)["ResourceDescription"]["Properties"])["Title"] == "one"


def test_a_stack_hook_that_raises_is_hook_failed_and_warn_mode_lets_the_stack_through(served: Served) -> None:
    served.configure(TargetOperations=["STACK"], FailureMode="WARN")
    served.cloudformation.create_stack(StackName="warned", TemplateBody=_template("raise", First="one"))
    served.wait("stack_create_complete", StackName="warned")
    status, hook_status, reason = _hook_events(served.events("warned"), "warned")[-1]
    assert (status, hook_status) == ("CREATE_IN_PROGRESS", "HOOK_FAILED")
    assert reason == f"Hook {HOOK} failed: InternalFailure"  # WARN shows in HookFailureMode only; the traceback is in serve's console
    served.server.has_printed(r"RuntimeError: the hook broke on purpose")


def test_the_payload_url_serves_nothing_once_its_invocation_has_ended(served: Served) -> None:
    import urllib.error
    import urllib.request

    for method, status, code in (("GET", 404, "NoSuchKey"), ("PUT", 405, "MethodNotAllowed")):
        request = urllib.request.Request(f"{served.server.url}/cfnrun/hook-payloads/0123abcd", method=method, data=b"" if method == "PUT" else None)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == status and f"<Code>{code}</Code>" in refused.value.read().decode()


def test_a_stack_hook_refuses_a_delete_as_delete_failed_until_it_is_disabled(served: Served) -> None:
    cfn = served.cloudformation
    served.configure(TargetOperations=["STACK"])
    cfn.create_stack(StackName="kept", TemplateBody=_template("protected by policy", First="one"))
    served.wait("stack_create_complete", StackName="kept")
    cfn.delete_stack(StackName="kept")
    with pytest.raises(WaiterError):
        served.wait("stack_delete_complete", StackName="kept")
    described = cfn.describe_stacks(StackName="kept")["Stacks"][0]
    assert (described["StackStatus"], described["StackStatusReason"]) == ("DELETE_FAILED", f"The following hook(s) failed: [{HOOK}]")
    assert _hook_events(served.events("kept"), "kept")[-1] == ("DELETE_IN_PROGRESS", "HOOK_COMPLETE_FAILED", "Hook failed with message: the stack is protected: its Description says so")
    assert [e["ResourceStatus"] for e in served.events("kept") if e["LogicalResourceId"] == "First"] == ["CREATE_IN_PROGRESS", "CREATE_IN_PROGRESS", "CREATE_COMPLETE"]

    # Deactivated with the aws CLI (HookInvocationStatus DISABLED): the delete goes through, and no hook is asked.
    disabled = {"CloudFormationConfiguration": {"HookConfiguration": {"HookInvocationStatus": "DISABLED", "TargetOperations": ["STACK"], "FailureMode": "FAIL"}}}
    aws = shutil.which("aws")
    assert aws, "the aws CLI is a test dependency"
    completed = subprocess.run(
        [aws, "cloudformation", "set-type-configuration", "--endpoint-url", served.server.url, "--region", "us-east-1",
         "--type", "HOOK", "--type-name", HOOK, "--configuration", json.dumps(disabled)],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"},
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["ConfigurationArn"].endswith(":type-configuration/hook/Cfnrun-Test-StackHook/default")
    cfn.delete_stack(StackName="kept")
    served.wait("stack_delete_complete", StackName="kept")
    deleting = [e for e in served.events(described["StackId"]) if e["ResourceStatus"] == "DELETE_IN_PROGRESS"]
    assert len(deleting) > 2 and all("HookType" not in e for e in deleting[-2:])


def test_a_lambda_hook_on_stack_targets_downloads_the_template_from_its_payload_url(served: Served) -> None:
    cfn = served.cloudformation
    served.configure(TargetOperations=["STACK"], HookInvocationStatus="DISABLED")  # only the Lambda hook judges here
    hook = {
        "Type": "AWS::CloudFormation::LambdaHook",
        "Properties": {
            "Alias": "Cfnrun::Described::Stacks",
            "LambdaFunction": "DescribedTemplateFunction",
            "ExecutionRole": "arn:aws:iam::123456789012:role/lambda-hook-execution",
            "FailureMode": "FAIL",
            "HookStatus": "ENABLED",
            "TargetOperations": ["STACK"],
            "StackFilters": {"FilteringCriteria": "ALL", "StackNames": {"Include": ["lambda-bare", "lambda-described"]}},
        },
    }
    cfn.create_stack(StackName="lambda-hooks", TemplateBody=json.dumps({"Resources": {"Described": hook}}))
    served.wait("stack_create_complete", StackName="lambda-hooks")
    cfn.create_stack(StackName="lambda-bare", TemplateBody=_template(First="one"))
    with pytest.raises(WaiterError):
        served.wait("stack_create_complete", StackName="lambda-bare")
    assert served.status("lambda-bare") == "ROLLBACK_COMPLETE"
    hooked = [(e["HookType"], e["HookStatus"], e.get("HookStatusReason")) for e in served.events("lambda-bare") if e.get("HookType")]
    assert hooked[-1] == ("Cfnrun::Described::Stacks", "HOOK_COMPLETE_FAILED", "Hook failed with message: stack lambda-bare: the template must have a Description")
    described = yaml.safe_dump(json.loads(_template("described", First="one")))
    cfn.create_stack(StackName="lambda-described", TemplateBody=described)
    served.wait("stack_create_complete", StackName="lambda-described")
    passed = [e.get("HookStatusReason") for e in served.events("lambda-described") if e.get("HookStatus") == "HOOK_COMPLETE_SUCCEEDED"]
    assert passed == ["Hook succeeded with message: the template has a Description (YAML as given)"]  # the payload's template: as given
    cfn.delete_stack(StackName="lambda-hooks")  # deactivates the hook for the module's other tests
    served.wait("stack_delete_complete", StackName="lambda-hooks")


def test_a_change_set_its_hook_refuses_is_failed_with_the_hooks_message(served: Served) -> None:
    cfn = served.cloudformation
    served.configure(TargetOperations=["CHANGE_SET"])
    cfn.create_stack(StackName="planned", TemplateBody=_template("two notes", First="one", Second="two"))
    served.wait("stack_create_complete", StackName="planned")

    removing = cfn.create_change_set(StackName="planned", ChangeSetName="shrink", TemplateBody=_template("one note", First="one"))
    with pytest.raises(WaiterError):
        served.wait("change_set_create_complete", ChangeSetName=removing["Id"])
    described = cfn.describe_change_set(ChangeSetName=removing["Id"])
    assert (described["Status"], described["ExecutionStatus"]) == ("FAILED", "UNAVAILABLE")
    assert described["StatusReason"] == f"The following hook(s)/validation failed: [{HOOK}]. {HOOK}: the change set removes Second"
    results = cfn.list_hook_results(TargetType="CHANGE_SET", TargetId=removing["Id"])
    assert (results["TargetType"], results["TargetId"]) == ("CHANGE_SET", removing["Id"])
    [result] = results["HookResults"]
    assert (result["TypeName"], result["Status"], result["HookStatusReason"], result["FailureMode"]) == (
        HOOK, "HOOK_COMPLETE_FAILED", "the change set removes Second", "FAIL"
    )
    detail = cfn.get_hook_result(HookResultId=result["HookResultId"])
    # a change set's hooks judge its creation: CREATE, whatever its type (the Hooks user guide: only CREATE applies to CHANGE_SET)
    assert detail["Target"] == {"TargetType": "CHANGE_SET", "TargetTypeName": "CHANGE_SET", "TargetId": removing["Id"], "Action": "CREATE"}
    assert detail["TypeArn"] == "arn:aws:cloudformation:us-east-1:123456789012:type/hook/Cfnrun-Test-StackHook"

    retitled = json.dumps(json.loads(_template("two notes", First="uno", Second="two")), indent=2)  # First on line 4
    retitling = cfn.create_change_set(StackName="planned", ChangeSetName="retitle", TemplateBody=retitled)
    served.wait("change_set_create_complete", ChangeSetName=retitling["Id"])
    [passed] = cfn.list_hook_results(TargetType="CHANGE_SET", TargetId=retitling["Id"])["HookResults"]
    assert passed["HookStatusReason"] == "1 change(s), none removes a resource: First on line 4"  # lineNumber: the guide's
    assert cfn.describe_change_set(ChangeSetName=retitling["Id"])["ExecutionStatus"] == "AVAILABLE"
    served.configure(TargetOperations=["RESOURCE"])  # DescribeChangeSetHooks: the hooks its execution would run, as configured now
    planned = cfn.describe_change_set_hooks(ChangeSetName=retitling["Id"])
    assert (planned["Status"], planned["StackName"]) == ("PLANNED", "planned")
    assert [(h["TypeName"], h["FailureMode"], h["TargetDetails"]) for h in planned["Hooks"]] == [
        (HOOK, "FAIL", {"TargetType": "RESOURCE", "ResourceTargetDetails": {"LogicalResourceId": "First", "ResourceType": NOTE, "ResourceAction": "Modify"}})
    ]
    # DescribeChangeSet counts them per change (HookInvocationCount), and leaves the member out where none will run
    counted = {c["ResourceChange"]["LogicalResourceId"]: c.get("HookInvocationCount") for c in cfn.describe_change_set(ChangeSetName=retitling["Id"])["Changes"]}
    assert counted["First"] == 1 and all(count is None for name, count in counted.items() if name != "First"), counted
    cfn.execute_change_set(ChangeSetName=retitling["Id"])
    served.wait("stack_update_complete", StackName="planned")


def test_a_change_set_hook_answering_skip_stack_hook_spares_its_execution_the_stack_hook(served: Served) -> None:
    cfn = served.cloudformation
    served.configure(TargetOperations=["STACK", "CHANGE_SET"])
    cfn.create_stack(StackName="reviewed", TemplateBody=_template("described", First="one"))
    served.wait("stack_create_complete", StackName="reviewed")
    undescribed = json.loads(_template(First="uno"))

    unreviewed = cfn.create_change_set(StackName="reviewed", ChangeSetName="plain", TemplateBody=json.dumps(undescribed))
    served.wait("change_set_create_complete", ChangeSetName=unreviewed["Id"])
    cfn.execute_change_set(ChangeSetName=unreviewed["Id"])
    with pytest.raises(WaiterError):
        served.wait("stack_update_complete", StackName="reviewed")
    assert _hook_events(served.events("reviewed"), "reviewed")[-1] == ("UPDATE_IN_PROGRESS", "HOOK_COMPLETE_FAILED", "Hook failed with message: the template must have a Description")

    hooked_before = len(_hook_events(served.events("reviewed"), "reviewed"))
    reviewed = cfn.create_change_set(StackName="reviewed", ChangeSetName="signed", TemplateBody=json.dumps({**undescribed, "Metadata": {"Reviewed": True}}))
    served.wait("change_set_create_complete", ChangeSetName=reviewed["Id"])
    [verdict] = cfn.list_hook_results(TargetType="CHANGE_SET", TargetId=reviewed["Id"])["HookResults"]
    assert (verdict["Status"], verdict["HookStatusReason"]) == ("HOOK_COMPLETE_SUCCEEDED", "reviewed: the stack hook need not run")
    cfn.execute_change_set(ChangeSetName=reviewed["Id"])
    served.wait("stack_update_complete", StackName="reviewed")
    assert len(_hook_events(served.events("reviewed"), "reviewed")) == hooked_before  # the STACK hook was not asked


def test_cloud_control_hooks_fail_a_request_in_fail_mode_and_let_it_through_in_warn_mode(served: Served) -> None:
    cc = served.cloudcontrol
    # Stack filters are for stacks: a Cloud Control request is judged whatever they say, as in the service.
    served.configure(TargetOperations=["CLOUD_CONTROL"], StackFilters={"FilteringCriteria": "ALL", "StackNames": {"Include": ["no-such-stack"]}})
    refused = served.request_ends(cc.create_resource(TypeName=NOTE, DesiredState=json.dumps({"Title": "forbidden"}))["ProgressEvent"])
    assert refused["OperationStatus"] == "FAILED"
    annotated = "[annotations: NoteTitle FAILED HIGH: Title 'forbidden' → fix: choose a Title other than 'forbidden']"
    assert refused["StatusMessage"] == f"The following hook(s)/validation failed: [{HOOK}]. {HOOK}: a note may not be titled 'forbidden' {annotated}"
    assert refused["ErrorCode"] == "GeneralServiceException" and "Identifier" not in refused  # nothing was created
    # GetResourceRequestStatus lists the hooks that judged the request (the API's HooksProgressEvent)
    [judged] = cc.get_resource_request_status(RequestToken=refused["RequestToken"])["HooksProgressEvent"]
    assert (judged["HookTypeName"], judged["HookStatus"], judged["FailureMode"], judged["InvocationPoint"]) == (
        HOOK, "HOOK_COMPLETE_FAILED", "FAIL", "PRE_PROVISION"
    )
    assert judged["HookTypeArn"].endswith(":type/hook/Cfnrun-Test-StackHook") and "may not be titled 'forbidden'" in judged["HookStatusMessage"]
    [result] = served.cloudformation.list_hook_results(TargetType="CLOUD_CONTROL", TargetId=refused["HooksRequestToken"])["HookResults"]
    assert (result["Status"], result["HookStatusReason"]) == ("HOOK_COMPLETE_FAILED", f"a note may not be titled 'forbidden' {annotated}")
    detail = served.cloudformation.get_hook_result(HookResultId=result["HookResultId"])
    # the API's HookTarget.TargetType knows RESOURCE only: a Cloud Control request's target is a resource
    assert (detail["Target"]["TargetType"], detail["Target"]["TargetTypeName"], detail["Target"]["Action"]) == ("RESOURCE", NOTE, "CREATE")
    assert detail["Annotations"] == [
        {"AnnotationName": "NoteTitle", "Status": "FAILED", "StatusMessage": "Title 'forbidden'", "RemediationMessage": "choose a Title other than 'forbidden'", "SeverityLevel": "HIGH"}
    ]

    allowed = served.request_ends(cc.create_resource(TypeName=NOTE, DesiredState=json.dumps({"Title": "fine"}))["ProgressEvent"])
    assert allowed["OperationStatus"] == "SUCCESS", allowed
    patch = json.dumps([{"op": "replace", "path": "/Title", "value": "forbidden"}])
    refused_update = served.request_ends(cc.update_resource(TypeName=NOTE, Identifier=allowed["Identifier"], PatchDocument=patch)["ProgressEvent"])
    assert refused_update["OperationStatus"] == "FAILED" and "may not be titled 'forbidden'" in refused_update["StatusMessage"]

    served.configure(TargetOperations=["CLOUD_CONTROL"], FailureMode="WARN")
    warned = served.request_ends(cc.create_resource(TypeName=NOTE, DesiredState=json.dumps({"Title": "forbidden"}))["ProgressEvent"])
    assert warned["OperationStatus"] == "SUCCESS", warned
    served.server.has_printed(r"hook Cfnrun::Test::StackHook HOOK_COMPLETE_FAILED a note may not be titled 'forbidden' .*\(FailureMode WARN")

    served.configure(TargetOperations=["CLOUD_CONTROL"], HookInvocationStatus="DISABLED")
    unjudged = served.request_ends(cc.create_resource(TypeName=NOTE, DesiredState=json.dumps({"Title": "forbidden"}))["ProgressEvent"])
    assert unjudged["OperationStatus"] == "SUCCESS" and "HooksRequestToken" not in unjudged  # no hook ran
    served.configure(TargetOperations=["RESOURCE"])  # only stacks' resources: Cloud Control is not a target
    assert served.request_ends(cc.create_resource(TypeName=NOTE, DesiredState=json.dumps({"Title": "forbidden"}))["ProgressEvent"])["OperationStatus"] == "SUCCESS"


def test_every_hook_invocation_is_in_the_hook_projects_history(served: Served) -> None:
    served.configure(TargetOperations=["STACK", "RESOURCE", "CLOUD_CONTROL"])
    served.cloudformation.create_stack(StackName="recorded", TemplateBody=_template("recorded", Only="kept"))
    served.wait("stack_create_complete", StackName="recorded")
    served.request_ends(served.cloudcontrol.create_resource(TypeName=NOTE, DesiredState=json.dumps({"Title": "recorded"}))["ProgressEvent"])
    listed = cfnrun("history", "--json", cwd=served.folder / "stackhook")
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
    assert rows, listed.stdout
    assert {row["typeName"] for row in rows} == {HOOK}
    assert {"stack", "cloudcontrol"} <= {row["source"] for row in rows}
    assert {"CREATE_PRE_PROVISION"} <= {row["action"] for row in rows}


def test_an_updates_cleanup_asks_no_hook_but_a_stack_delete_does(served: Served) -> None:
    # The Hooks user guide: stack operations in UpdateCleanup invoke no hook (a resource the update removes is deleted unasked).
    cfn = served.cloudformation
    served.configure(TargetOperations=["RESOURCE"])
    cfn.create_stack(StackName="pruned", TemplateBody=_template("two notes", First="one", Second="two"))
    served.wait("stack_create_complete", StackName="pruned")
    cfn.update_stack(StackName="pruned", TemplateBody=_template("one note", First="one"))
    served.wait("stack_update_complete", StackName="pruned")
    events = served.events("pruned")
    assert [e["ResourceStatus"] for e in events if e["LogicalResourceId"] == "Second" and "HookType" not in e][-1] == "DELETE_COMPLETE"
    assert [status for status, _, _ in _hook_events(events, "Second")] == ["CREATE_IN_PROGRESS", "CREATE_IN_PROGRESS"]  # its create's only

    cfn.delete_stack(StackName="pruned")
    served.wait("stack_delete_complete", StackName="pruned")
    stack_id = events[0]["StackId"]
    deleted = [(status, hook) for status, hook, _ in _hook_events(served.events(stack_id), "First") if status.startswith("DELETE")]
    assert deleted == [("DELETE_IN_PROGRESS", "HOOK_IN_PROGRESS"), ("DELETE_IN_PROGRESS", "HOOK_COMPLETE_SUCCEEDED")]


def test_a_hook_answering_in_progress_a_fourth_time_fails(served: Served) -> None:
    # The Hooks user guide: a hook may answer IN_PROGRESS 3 times; past that the service marks it failed.
    served.configure(TargetOperations=["CLOUD_CONTROL"])
    ended = served.request_ends(served.cloudcontrol.create_resource(TypeName=NOTE, DesiredState=json.dumps({"Title": "stubborn"}))["ProgressEvent"])
    assert ended["OperationStatus"] == "FAILED", ended
    [judged] = served.cloudcontrol.get_resource_request_status(RequestToken=ended["RequestToken"])["HooksProgressEvent"]
    assert judged["HookStatus"] == "HOOK_FAILED"
    assert judged["HookStatusMessage"] == (
        f"Hook {HOOK} failed: it answered IN_PROGRESS more than 3 times (a hook may ask to be invoked again at most 3 times)"
    )
