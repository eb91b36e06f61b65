"""The stack operations CI pipelines use, on a real ``cfnrun serve`` driven by boto3 (issue #29 §5).

Termination protection, stack policies enforced on updates, GetTemplateSummary's identifiers and its
REVIEW_IN_PROGRESS refusal, SignalResource with CreationPolicy, WaitCondition and its handle's URL,
resource import. One serve (per module and xdist worker) serves the note sample's type, whose
handlers keep notes in a local file: no AWS endpoint is needed.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import pytest
from botocore.exceptions import ClientError, WaiterError

from conftest import LOCAL_STATE, PATIENCE_S, SAMPLES, ServerProcess, wait_until

FAST = {"Delay": 0.1, "MaxAttempts": 600}
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}


def note_template(title: str = "first", folder: str = "inbox", policy: str = "Delete") -> str:
    return json.dumps(
        {
            "Resources": {
                "Note": {"Type": "Cfnrun::Sample::Note", "DeletionPolicy": policy, "Properties": {"Title": title, "Folder": folder}},
            }
        }
    )


class Served:
    def __init__(self, server: ServerProcess, folder: Path) -> None:
        import boto3

        self.server = server
        self.folder = folder
        self.cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)

    def wait(self, waiter: str, **arguments: Any) -> None:
        self.cloudformation.get_waiter(waiter).wait(WaiterConfig=FAST, **arguments)

    def events(self, stack: str) -> List[Dict[str, Any]]:
        pages = self.cloudformation.get_paginator("describe_stack_events").paginate(StackName=stack)
        return list(reversed([e for page in pages for e in page["StackEvents"]]))

    def stack(self, name: str) -> Dict[str, Any]:
        return dict(self.cloudformation.describe_stacks(StackName=name)["Stacks"][0])

    def settled(self, name: str, operation: Callable[[], Any]) -> Dict[str, Any]:
        """Run ``operation`` on the stack, then wait until the stack operation it started has ended; the stack then."""
        before = len(self.events(name))

        def ended() -> bool:
            return len(self.events(name)) > before and not self.stack(name)["StackStatus"].endswith("_IN_PROGRESS")

        operation()
        wait_until(ended, timeout=PATIENCE_S, what=f"the operation on {name} to end")
        return self.stack(name)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("stackops")
    shutil.copytree(SAMPLES / "note", folder / "note", ignore=LOCAL_STATE)
    process = subprocess.Popen(
        [sys.executable, "-m", "cfnrun", "serve", "--port", "0", "--no-reload", "--virtual-clock", "--provider", "note"],
        cwd=str(folder), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "NO_COLOR": "1"},
    )
    server = ServerProcess(folder, process=process)
    try:
        yield Served(server, folder)
    finally:
        server.stop()


def _error(call: Any, **arguments: Any) -> Dict[str, str]:
    with pytest.raises(ClientError) as caught:
        call(**arguments)
    return dict(caught.value.response["Error"])


# -- 1. termination protection -----------------------------------------------------------------------


def test_termination_protection_refuses_delete_until_it_is_turned_off(served: Served) -> None:
    cfn = served.cloudformation
    cfn.create_stack(StackName="guarded", TemplateBody=note_template(), EnableTerminationProtection=True)
    served.wait("stack_create_complete", StackName="guarded")
    assert served.stack("guarded")["EnableTerminationProtection"] is True

    error = _error(cfn.delete_stack, StackName="guarded")
    assert error["Code"] == "ValidationError"
    assert error["Message"] == "Stack [guarded] cannot be deleted while TerminationProtection is enabled"
    assert served.stack("guarded")["StackStatus"] == "CREATE_COMPLETE"  # nothing started

    stack_id = served.stack("guarded")["StackId"]
    assert cfn.update_termination_protection(StackName="guarded", EnableTerminationProtection=False)["StackId"] == stack_id
    assert served.stack("guarded")["EnableTerminationProtection"] is False
    cfn.delete_stack(StackName="guarded")
    served.wait("stack_delete_complete", StackName="guarded")


def aws_cli(served: Served, *args: str) -> "subprocess.CompletedProcess[str]":
    """``aws cloudformation ARGS`` against serve."""
    environment = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    return subprocess.run(
        ["aws", "--endpoint-url", served.server.url, "cloudformation", *args], capture_output=True, text=True, env=environment, timeout=120
    )


def test_termination_protection_is_switched_on_by_the_aws_cli(served: Served) -> None:
    cfn = served.cloudformation
    cfn.create_stack(StackName="cli-guarded", TemplateBody=note_template())
    served.wait("stack_create_complete", StackName="cli-guarded")
    assert served.stack("cli-guarded")["EnableTerminationProtection"] is False
    done = aws_cli(served, "update-termination-protection", "--stack-name", "cli-guarded", "--enable-termination-protection")
    assert done.returncode == 0, done.stderr
    refused = aws_cli(served, "delete-stack", "--stack-name", "cli-guarded")
    assert refused.returncode != 0
    assert "cannot be deleted while TerminationProtection is enabled" in refused.stderr


# -- 2. stack policies -------------------------------------------------------------------------------

ALLOW_ALL = {"Effect": "Allow", "Action": "Update:*", "Principal": "*", "Resource": "*"}


def _policy(*statements: Dict[str, Any]) -> str:
    return json.dumps({"Statement": list(statements)})


def _failed_reasons(served: Served, stack: str) -> Dict[str, str]:
    return {e["LogicalResourceId"]: e.get("ResourceStatusReason", "") for e in served.events(stack) if e["ResourceStatus"] == "UPDATE_FAILED"}


def test_a_stack_policy_denies_an_update_of_a_protected_resource_and_the_update_rolls_back(served: Served) -> None:
    cfn = served.cloudformation
    deny_note = {"Effect": "Deny", "Action": "Update:*", "Principal": "*", "Resource": "LogicalResourceId/Note"}
    body = _policy(ALLOW_ALL, deny_note)
    cfn.create_stack(StackName="policed", TemplateBody=note_template(), StackPolicyBody=body)
    served.wait("stack_create_complete", StackName="policed")
    assert cfn.get_stack_policy(StackName="policed")["StackPolicyBody"] == body
    note_id = cfn.describe_stack_resource(StackName="policed", LogicalResourceId="Note")["StackResourceDetail"]["PhysicalResourceId"]

    stack = served.settled("policed", lambda: cfn.update_stack(StackName="policed", TemplateBody=note_template(title="second")))
    assert stack["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    reasons = _failed_reasons(served, "policed")
    assert reasons["Note"] == "Action denied by stack policy: Statement [#2] does not allow [Update:Modify] for resource [LogicalResourceId/Note];"
    rollback = next(e for e in served.events("policed") if e["ResourceStatus"] == "UPDATE_ROLLBACK_IN_PROGRESS")
    assert rollback["ResourceStatusReason"] == "The following resource(s) failed to update: [Note]. "
    detail = cfn.describe_stack_resource(StackName="policed", LogicalResourceId="Note")["StackResourceDetail"]
    assert detail["PhysicalResourceId"] == note_id and detail["ResourceStatus"] == "CREATE_COMPLETE"

    # StackPolicyDuringUpdateBody lets this one update through; the stack's own policy stays.
    # A change set's execution is judged by the stack's policy too.
    cfn.create_change_set(StackName="policed", ChangeSetName="retitle", TemplateBody=note_template(title="third"))
    served.wait("change_set_create_complete", StackName="policed", ChangeSetName="retitle")
    executed = served.settled("policed", lambda: cfn.execute_change_set(StackName="policed", ChangeSetName="retitle"))
    assert executed["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    assert len([e for e in served.events("policed") if e["ResourceStatus"] == "UPDATE_FAILED"]) == 2

    allowed = served.settled(
        "policed", lambda: cfn.update_stack(StackName="policed", TemplateBody=note_template(title="second"), StackPolicyDuringUpdateBody=_policy(ALLOW_ALL))
    )
    assert allowed["StackStatus"] == "UPDATE_COMPLETE"
    assert cfn.get_stack_policy(StackName="policed")["StackPolicyBody"] == body


def test_a_stack_policy_condition_on_the_resource_type_denies_replacement_but_allows_modification(served: Served) -> None:
    cfn = served.cloudformation
    no_replace = {
        "Effect": "Deny", "Action": ["Update:Replace", "Update:Delete"], "Principal": "*", "Resource": "*",
        "Condition": {"StringEquals": {"ResourceType": ["Cfnrun::Sample::Note"]}},
    }
    cfn.create_stack(StackName="typed-policy", TemplateBody=note_template())
    served.wait("stack_create_complete", StackName="typed-policy")
    assert "StackPolicyBody" not in cfn.get_stack_policy(StackName="typed-policy")
    cfn.set_stack_policy(StackName="typed-policy", StackPolicyBody=_policy(ALLOW_ALL, no_replace))

    in_place = served.settled("typed-policy", lambda: cfn.update_stack(StackName="typed-policy", TemplateBody=note_template(title="renamed")))
    assert in_place["StackStatus"] == "UPDATE_COMPLETE"

    replacing = served.settled(  # Folder is createOnly: a replacement
        "typed-policy", lambda: cfn.update_stack(StackName="typed-policy", TemplateBody=note_template(title="renamed", folder="archive"))
    )
    assert replacing["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    assert _failed_reasons(served, "typed-policy")["Note"] == (
        "Action denied by stack policy: Statement [#2] does not allow [Update:Replace] for resource [LogicalResourceId/Note];"
    )


def test_once_a_policy_is_set_an_update_no_statement_allows_is_refused(served: Served) -> None:
    cfn = served.cloudformation
    only_other = {"Effect": "Allow", "Action": "Update:*", "Principal": "*", "Resource": "LogicalResourceId/Other*"}
    cfn.create_stack(StackName="allow-list", TemplateBody=note_template(), StackPolicyBody=_policy(only_other))
    served.wait("stack_create_complete", StackName="allow-list")
    changed = served.settled("allow-list", lambda: cfn.update_stack(StackName="allow-list", TemplateBody=note_template(title="changed")))
    assert changed["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    assert _failed_reasons(served, "allow-list")["Note"] == (
        "Action not allowed by stack policy: No statement allows [Update:Modify] for resource [LogicalResourceId/Note];"
    )


def test_a_policy_that_is_not_one_is_refused_with_a_clear_error(served: Served) -> None:
    cfn = served.cloudformation
    error = _error(cfn.create_stack, StackName="bad-policy", TemplateBody=note_template(), StackPolicyBody="{not json")
    assert error["Code"] == "ValidationError" and error["Message"].startswith("Error validating stack policy: Invalid JSON")
    wrong_principal = _policy({**ALLOW_ALL, "Principal": "arn:aws:iam::123456789012:root"})
    error = _error(cfn.create_stack, StackName="bad-policy", TemplateBody=note_template(), StackPolicyBody=wrong_principal)
    assert error["Message"] == 'Error validating stack policy: Statement [#1] Principal must be "*"'
    assert _error(cfn.describe_stacks, StackName="bad-policy")["Message"] == "Stack with id bad-policy does not exist"


# -- 3. GetTemplateSummary ---------------------------------------------------------------------------


def test_get_template_summary_names_each_types_identifying_properties(served: Served) -> None:
    template = {
        "Resources": {
            "First": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": "a"}},
            "Bucket": {"Type": "AWS::S3::Bucket"},
            "Second": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": "b"}},
        }
    }
    summary = served.cloudformation.get_template_summary(TemplateBody=json.dumps(template))
    assert summary["ResourceIdentifierSummaries"] == [
        {"ResourceType": "Cfnrun::Sample::Note", "LogicalResourceIds": ["First", "Second"], "ResourceIdentifiers": ["NoteId"]},
        {"ResourceType": "AWS::S3::Bucket", "LogicalResourceIds": ["Bucket"], "ResourceIdentifiers": ["BucketName"]},
    ]


def test_get_template_summary_refuses_a_stack_in_review(served: Served) -> None:
    cfn = served.cloudformation
    cfn.create_change_set(StackName="in-review", ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=note_template())
    served.wait("change_set_create_complete", StackName="in-review", ChangeSetName="first")
    assert served.stack("in-review")["StackStatus"] == "REVIEW_IN_PROGRESS"
    error = _error(cfn.get_template_summary, StackName="in-review")
    assert error == {"Type": "Sender", "Code": "ValidationError", "Message": "GetTemplateSummary cannot be called on REVIEW_IN_PROGRESS stacks."}


# -- 4. signals: CreationPolicy, SignalResource, WaitCondition ------------------------------------------


def _physical_id(served: Served, stack: str, logical_id: str) -> str:
    """The resource's physical id once its provider made it (a resource waiting for signals has one)."""
    found: Dict[str, str] = {}

    def made() -> bool:
        for resource in served.cloudformation.describe_stack_resources(StackName=stack)["StackResources"]:
            if resource["LogicalResourceId"] == logical_id and resource.get("PhysicalResourceId"):
                found["id"] = resource["PhysicalResourceId"]
        return bool(found)

    wait_until(made, timeout=PATIENCE_S, what=f"{logical_id} of {stack} made")
    return found["id"]


def _signalled_note(count: int = 1, timeout: str = "PT5M", folder: str = "inbox") -> str:
    return json.dumps(
        {
            "Resources": {
                "Note": {
                    "Type": "Cfnrun::Sample::Note",
                    "Properties": {"Title": "waits", "Folder": folder},
                    "CreationPolicy": {"ResourceSignal": {"Count": count, "Timeout": timeout}},
                },
            }
        }
    )


def _reasons(served: Served, stack: str, logical_id: str) -> List[str]:
    return [f"{e['ResourceStatus']}: {e.get('ResourceStatusReason', '')}" for e in served.events(stack) if e["LogicalResourceId"] == logical_id]


def test_a_creation_policy_holds_the_resource_until_its_signals_arrive(served: Served) -> None:
    cfn = served.cloudformation
    cfn.create_stack(StackName="signalled", TemplateBody=_signalled_note(count=2))
    _physical_id(served, "signalled", "Note")
    cfn.signal_resource(StackName="signalled", LogicalResourceId="Note", UniqueId="host-1", Status="SUCCESS")
    cfn.signal_resource(StackName="signalled", LogicalResourceId="Note", UniqueId="host-1", Status="SUCCESS")  # the same host again
    assert served.stack("signalled")["StackStatus"] == "CREATE_IN_PROGRESS"
    wrong = _error(cfn.signal_resource, StackName="signalled", LogicalResourceId="Note", UniqueId="host-3", Status="MAYBE")
    assert "Member must satisfy enum value set: [SUCCESS, FAILURE]" in wrong["Message"]
    assert served.stack("signalled")["StackStatus"] == "CREATE_IN_PROGRESS"  # still waiting
    by_cli = aws_cli(served, "signal-resource", "--stack-name", "signalled", "--logical-resource-id", "Note", "--unique-id", "host-2", "--status", "SUCCESS")
    assert by_cli.returncode == 0, by_cli.stderr
    served.wait("stack_create_complete", StackName="signalled")
    reasons = _reasons(served, "signalled", "Note")
    assert "CREATE_IN_PROGRESS: Received SUCCESS signal with UniqueId host-2" in reasons
    assert reasons[-1] == "CREATE_COMPLETE: "
    stack_id = served.stack("signalled")["StackId"]
    error = _error(cfn.signal_resource, StackName="signalled", LogicalResourceId="Note", UniqueId="late", Status="SUCCESS")
    assert error["Message"] == f"Stack {stack_id} is in CREATE_COMPLETE state and cannot be signaled"


def test_a_replacement_waits_for_its_creation_policys_signals_too(served: Served) -> None:
    cfn = served.cloudformation
    cfn.create_stack(StackName="signal-replace", TemplateBody=_signalled_note())
    first = _physical_id(served, "signal-replace", "Note")
    cfn.signal_resource(StackName="signal-replace", LogicalResourceId="Note", UniqueId="first", Status="SUCCESS")
    served.wait("stack_create_complete", StackName="signal-replace")
    cfn.update_stack(StackName="signal-replace", TemplateBody=_signalled_note(folder="archive"))  # createOnly: a new note

    def replaced() -> bool:
        detail = cfn.describe_stack_resource(StackName="signal-replace", LogicalResourceId="Note")["StackResourceDetail"]
        return detail.get("PhysicalResourceId") not in (None, first)

    wait_until(replaced, timeout=PATIENCE_S, what="the new note made")
    assert served.stack("signal-replace")["StackStatus"] == "UPDATE_IN_PROGRESS"
    cfn.signal_resource(StackName="signal-replace", LogicalResourceId="Note", UniqueId="second", Status="SUCCESS")
    served.wait("stack_update_complete", StackName="signal-replace")
    assert "UPDATE_IN_PROGRESS: Received SUCCESS signal with UniqueId second" in _reasons(served, "signal-replace", "Note")


def test_a_failure_signal_fails_the_resource_and_the_create_rolls_back(served: Served) -> None:
    cfn = served.cloudformation
    cfn.create_stack(StackName="signal-failure", TemplateBody=_signalled_note())
    _physical_id(served, "signal-failure", "Note")
    cfn.signal_resource(StackName="signal-failure", LogicalResourceId="Note", UniqueId="host-9", Status="FAILURE")
    with pytest.raises(WaiterError):
        served.wait("stack_create_complete", StackName="signal-failure")
    assert served.stack("signal-failure")["StackStatus"] == "ROLLBACK_COMPLETE"
    reasons = _reasons(served, "signal-failure", "Note")
    assert "CREATE_FAILED: Received FAILURE signal with UniqueId host-9" in reasons
    assert reasons[-1] == "DELETE_COMPLETE: "  # the note it made is deleted again


def test_a_creation_policy_times_out_with_the_services_reason(served: Served) -> None:
    served.cloudformation.create_stack(StackName="signal-timeout", TemplateBody=_signalled_note(timeout="PT1S"))
    with pytest.raises(WaiterError):
        served.wait("stack_create_complete", StackName="signal-timeout")
    assert "CREATE_FAILED: Failed to receive 1 resource signal(s) within the specified duration" in _reasons(served, "signal-timeout", "Note")


def _wait_condition(count: int = 1, timeout: str = "300") -> str:
    return json.dumps(
        {
            "Resources": {
                "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
                "Ready": {"Type": "AWS::CloudFormation::WaitCondition", "Properties": {"Handle": {"Ref": "Handle"}, "Timeout": timeout, "Count": count}},
                "Note": {"Type": "Cfnrun::Sample::Note", "DependsOn": "Ready", "Properties": {"Title": "after the wait"}},
            },
            "Outputs": {"Data": {"Value": {"Fn::GetAtt": ["Ready", "Data"]}}, "Url": {"Value": {"Ref": "Handle"}}},
        }
    )


def _curl(url: str, body: str, method: str = "PUT") -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        ["curl", "-sS", "-X", method, "-H", "Content-Type:", "--data-binary", body, "-w", "%{http_code}", "-o", "/dev/null", url],
        capture_output=True, text=True, timeout=60,
    )


def test_a_wait_condition_waits_for_signals_put_to_its_handles_url_and_gives_their_data(served: Served) -> None:
    cfn = served.cloudformation
    cfn.create_stack(StackName="waiting", TemplateBody=_wait_condition(count=2))
    url = _physical_id(served, "waiting", "Handle")
    assert url.startswith(served.server.url.replace("localhost", "127.0.0.1") + "/") and "Signature=" in url
    assert _curl(url, json.dumps({"Status": "SUCCESS", "UniqueId": "one", "Data": "first", "Reason": "ok"})).stdout == "200"
    assert _curl(url, "{not json").stdout == "400"
    assert _curl(url.replace("signals/", "signals/x"), json.dumps({"Status": "SUCCESS", "UniqueId": "z"})).stdout == "404"
    assert served.stack("waiting")["StackStatus"] == "CREATE_IN_PROGRESS"
    made = {r["LogicalResourceId"] for r in cfn.describe_stack_resources(StackName="waiting")["StackResources"] if r.get("PhysicalResourceId")}
    assert made == {"Handle"}  # the wait condition still waits; the note after it has not started
    assert _curl(url, json.dumps({"Status": "SUCCESS", "UniqueId": "two", "Data": "second"}), method="POST").stdout == "200"
    served.wait("stack_create_complete", StackName="waiting")
    outputs = {o["OutputKey"]: o["OutputValue"] for o in served.stack("waiting")["Outputs"]}
    assert json.loads(outputs["Data"]) == {"one": "first", "two": "second"}
    assert outputs["Url"] == url
    assert "CREATE_IN_PROGRESS: Received SUCCESS signal with UniqueId one" in _reasons(served, "waiting", "Ready")


def test_a_wait_condition_fails_on_a_failure_signal_and_on_its_timeout(served: Served) -> None:
    cfn = served.cloudformation
    cfn.create_stack(StackName="wait-failure", TemplateBody=_wait_condition())
    url = _physical_id(served, "wait-failure", "Handle")
    assert _curl(url, json.dumps({"Status": "FAILURE", "UniqueId": "box-1", "Reason": "disk full"})).stdout == "200"
    with pytest.raises(WaiterError):
        served.wait("stack_create_complete", StackName="wait-failure")
    assert "CREATE_FAILED: WaitCondition received failed message: 'disk full' for uniqueId: box-1" in _reasons(served, "wait-failure", "Ready")

    cfn.create_stack(StackName="wait-timeout", TemplateBody=_wait_condition(timeout="1"))
    with pytest.raises(WaiterError):
        served.wait("stack_create_complete", StackName="wait-timeout")
    assert "CREATE_FAILED: WaitCondition timed out. Received 0 conditions when expecting 1" in _reasons(served, "wait-timeout", "Ready")
    assert served.stack("wait-timeout")["StackStatus"] == "ROLLBACK_COMPLETE"


# -- 5. resource import ------------------------------------------------------------------------------


def _retained_note(served: Served, stack: str) -> str:
    """A note that exists outside any stack: made by a stack that retains it, then deleted."""
    cfn = served.cloudformation
    cfn.create_stack(StackName=stack, TemplateBody=note_template(title="kept", policy="Retain"))
    served.wait("stack_create_complete", StackName=stack)
    note_id = cfn.describe_stack_resource(StackName=stack, LogicalResourceId="Note")["StackResourceDetail"]["PhysicalResourceId"]
    cfn.delete_stack(StackName=stack)
    served.wait("stack_delete_complete", StackName=stack)
    return str(note_id)


def _to_import(note_id: str, logical_id: str = "Note") -> List[Dict[str, Any]]:
    return [{"ResourceType": "Cfnrun::Sample::Note", "LogicalResourceId": logical_id, "ResourceIdentifier": {"NoteId": note_id}}]


def test_an_import_change_set_brings_an_existing_resource_into_a_new_stack_confirmed_by_read(served: Served) -> None:
    cfn = served.cloudformation
    note_id = _retained_note(served, "import-source")
    cfn.create_change_set(
        StackName="importer", ChangeSetName="bring", ChangeSetType="IMPORT",
        TemplateBody=note_template(title="kept", policy="Retain"), ResourcesToImport=_to_import(note_id),
    )
    served.wait("change_set_create_complete", StackName="importer", ChangeSetName="bring")
    change = cfn.describe_change_set(StackName="importer", ChangeSetName="bring")["Changes"][0]["ResourceChange"]
    assert (change["Action"], change["LogicalResourceId"], change["PhysicalResourceId"]) == ("Import", "Note", note_id)

    cfn.execute_change_set(StackName="importer", ChangeSetName="bring")
    served.wait("stack_import_complete", StackName="importer")
    detail = cfn.describe_stack_resource(StackName="importer", LogicalResourceId="Note")["StackResourceDetail"]
    assert (detail["PhysicalResourceId"], detail["ResourceStatus"]) == (note_id, "IMPORT_COMPLETE")
    assert [s.split(":")[0] for s in _reasons(served, "importer", "Note")] == ["IMPORT_IN_PROGRESS", "IMPORT_COMPLETE"]
    assert cfn.describe_change_set(StackName="importer", ChangeSetName="bring")["ExecutionStatus"] == "EXECUTE_COMPLETE"

    # The imported note is the stack's now: an update reaches it through its handler.
    cfn.update_stack(StackName="importer", TemplateBody=note_template(title="renamed", policy="Retain"))
    served.wait("stack_update_complete", StackName="importer")
    assert cfn.describe_stack_resource(StackName="importer", LogicalResourceId="Note")["StackResourceDetail"]["PhysicalResourceId"] == note_id


def test_an_import_of_a_resource_read_cannot_find_rolls_back_and_deletes_nothing(served: Served) -> None:
    cfn = served.cloudformation
    cfn.create_change_set(
        StackName="import-missing", ChangeSetName="bring", ChangeSetType="IMPORT",
        TemplateBody=note_template(policy="Retain"), ResourcesToImport=_to_import("note-000000000000"),
    )
    served.wait("change_set_create_complete", StackName="import-missing", ChangeSetName="bring")
    cfn.execute_change_set(StackName="import-missing", ChangeSetName="bring")
    with pytest.raises(WaiterError):
        served.wait("stack_import_complete", StackName="import-missing")
    assert served.stack("import-missing")["StackStatus"] == "IMPORT_ROLLBACK_COMPLETE"
    failed = [r for r in _reasons(served, "import-missing", "Note") if r.startswith("IMPORT_FAILED")]
    assert failed and "NotFound" in failed[0]
    assert cfn.describe_stack_resources(StackName="import-missing")["StackResources"] == []


def test_an_import_change_set_is_refused_with_the_services_reasons(served: Served) -> None:
    cfn = served.cloudformation
    cfn.create_stack(StackName="import-into", TemplateBody=note_template(title="present"))
    served.wait("stack_create_complete", StackName="import-into")
    note_id = _retained_note(served, "import-source-2")
    present = {"Type": "Cfnrun::Sample::Note", "DeletionPolicy": "Delete", "Properties": {"Title": "present", "Folder": "inbox"}}

    def refused(template: Dict[str, Any], resources: List[Dict[str, Any]]) -> str:
        error = _error(
            cfn.create_change_set, StackName="import-into", ChangeSetName="bring", ChangeSetType="IMPORT",
            TemplateBody=json.dumps(template), ResourcesToImport=resources,
        )
        assert error["Code"] == "ValidationError"
        return error["Message"]

    extra = {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": "kept"}}
    assert refused({"Resources": {"Note": present, "Extra": extra}}, _to_import(note_id, "Extra")) == (
        "The following resources to import [Extra] must have DeletionPolicy attribute specified in the template."
    )
    retained = {**extra, "DeletionPolicy": "Retain"}
    changed = {**present, "Properties": {"Title": "changed", "Folder": "inbox"}}
    assert refused({"Resources": {"Note": changed, "Extra": retained}}, _to_import(note_id, "Extra")) == (
        "You have modified resources [Note] in your template that are not being imported. "
        "Update, create or delete operations cannot be executed during import operations."
    )
    with_output = {"Resources": {"Note": present, "Extra": retained}, "Outputs": {"Id": {"Value": {"Ref": "Extra"}}}}
    assert refused(with_output, _to_import(note_id, "Extra")) == "As part of the import operation, you cannot modify or add [Outputs]"
    error = _error(
        cfn.create_change_set, StackName="import-new", ChangeSetName="bring", ChangeSetType="IMPORT",
        TemplateBody=json.dumps({"Resources": {"Note": extra}}), ResourcesToImport=_to_import(note_id),
    )
    assert error["Message"] == "The following resources to import [Note] must have DeletionPolicy attribute specified in the template."
    assert _error(cfn.describe_stacks, StackName="import-new")["Message"] == "Stack with id import-new does not exist"  # not left in review
    wrong_key = [{**_to_import(note_id, "Extra")[0], "ResourceIdentifier": {"Title": "kept"}}]
    assert "is identified by [NoteId]" in refused({"Resources": {"Note": present, "Extra": retained}}, wrong_key)

    # Into an existing stack, with the rest of the template unchanged: accepted, and executed.
    cfn.create_change_set(
        StackName="import-into", ChangeSetName="bring", ChangeSetType="IMPORT",
        TemplateBody=json.dumps({"Resources": {"Note": present, "Extra": retained}}), ResourcesToImport=_to_import(note_id, "Extra"),
    )
    served.wait("change_set_create_complete", StackName="import-into", ChangeSetName="bring")
    cfn.execute_change_set(StackName="import-into", ChangeSetName="bring")
    served.wait("stack_import_complete", StackName="import-into")
    ids = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cfn.describe_stack_resources(StackName="import-into")["StackResources"]}
    assert ids["Extra"] == note_id and set(ids) == {"Note", "Extra"}


def test_a_wait_condition_with_a_creation_policy_waits_for_signal_resource(served: Served) -> None:
    cfn = served.cloudformation
    template = {
        "Resources": {
            "Ready": {"Type": "AWS::CloudFormation::WaitCondition", "CreationPolicy": {"ResourceSignal": {"Count": 1, "Timeout": "PT5M"}}},
        }
    }
    cfn.create_stack(StackName="wait-policy", TemplateBody=json.dumps(template))
    _physical_id(served, "wait-policy", "Ready")
    assert served.stack("wait-policy")["StackStatus"] == "CREATE_IN_PROGRESS"
    cfn.signal_resource(StackName="wait-policy", LogicalResourceId="Ready", UniqueId="ci-job", Status="SUCCESS")
    served.wait("stack_create_complete", StackName="wait-policy")
    assert "CREATE_IN_PROGRESS: Received SUCCESS signal with UniqueId ci-job" in _reasons(served, "wait-policy", "Ready")


def test_a_stack_that_is_not_there_or_a_name_the_api_refuses_is_answered_in_the_services_words(served: Served) -> None:
    cfn = served.cloudformation
    assert _error(cfn.describe_stacks, StackName="nowhere")["Message"] == "Stack with id nowhere does not exist"
    assert _error(cfn.update_stack, StackName="nowhere", UsePreviousTemplate=True)["Message"] == "Stack [nowhere] does not exist"
    assert _error(cfn.describe_stack_events, StackName="nowhere")["Message"] == "Stack [nowhere] does not exist"
    too_long = "a" * 129
    assert _error(cfn.create_stack, StackName=too_long, TemplateBody=note_template())["Message"] == (
        f"1 validation error detected: Value '{too_long}' at 'stackName' failed to satisfy constraint: "
        "Member must have length less than or equal to 128"
    )


def test_an_aws_type_the_service_does_not_have_is_refused_at_the_call(served: Served) -> None:
    cfn = served.cloudformation
    template = json.dumps({"Resources": {"B": {"Type": "AWS::S3::Buckett"}, "N": {"Type": "AWS::Nope::Thing"}, "C": {"Type": "AWS::S3::Buckett"}}})
    expected = "Template format error: Unrecognized resource types: [AWS::S3::Buckett, AWS::Nope::Thing]"
    for call, arguments in ((cfn.create_stack, {"StackName": "typo"}), (cfn.validate_template, {})):
        error = _error(call, TemplateBody=template, **arguments)
        assert (error["Code"], error["Message"]) == ("ValidationError", expected)
    assert _error(cfn.describe_stacks, StackName="typo")["Message"] == "Stack with id typo does not exist"  # nothing was made


def test_a_call_without_a_member_it_cannot_go_without_is_a_validation_error_not_an_internal_one(served: Served) -> None:
    """GetTemplate with neither StackName nor a change set ARN, GetHookResult without HookResultId: the model leaves them
    optional, the call needs them (found sending the model's shapes at random past boto3's own checks)."""
    import boto3
    from botocore.config import Config

    lax = boto3.client("cloudformation", endpoint_url=served.server.url, config=Config(parameter_validation=False, retries={"max_attempts": 0}), **CREDENTIALS)
    for call, member in ((lax.get_template, "stackName"), (lax.get_hook_result, "hookResultId")):
        assert _error(call) == {
            "Type": "Sender", "Code": "ValidationError",
            "Message": f"1 validation error detected: Value null at '{member}' failed to satisfy constraint: Member must not be null",
        }


def test_get_template_summary_can_take_unrecognized_resource_types_as_warnings(served: Served) -> None:
    cfn = served.cloudformation
    body = json.dumps({"Resources": {"Note": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": "t"}}, "Other": {"Type": "AWS::S3::Buckett"}}})
    assert "Unrecognized resource types: [AWS::S3::Buckett]" in _error(cfn.get_template_summary, TemplateBody=body)["Message"]
    summary = cfn.get_template_summary(TemplateBody=body, TemplateSummaryConfig={"TreatUnrecognizedResourceTypesAsWarnings": True})
    assert summary["Warnings"] == {"UnrecognizedResourceTypes": ["AWS::S3::Buckett"]}
    assert summary["ResourceTypes"] == ["AWS::S3::Buckett", "Cfnrun::Sample::Note"]


def test_deployment_config_is_kept_and_shown_and_its_disable_rollback_keeps_a_failed_create(served: Served) -> None:
    cfn = served.cloudformation
    broken = {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": "broken", "Priority": 9}}  # the handler refuses it
    config = {"Mode": "EXPRESS", "DisableRollback": True}
    cfn.create_stack(StackName="deployed", TemplateBody=json.dumps({"Resources": {"Broken": broken}}), DeploymentConfig=config, DisableValidation=True)
    wait_until(lambda: not served.stack("deployed")["StackStatus"].endswith("_IN_PROGRESS"), timeout=PATIENCE_S, what="the create to end")
    stack = served.stack("deployed")
    assert (stack["StackStatus"], stack["DeploymentConfig"]) == ("CREATE_FAILED", config)  # kept, not rolled back
    cfn.delete_stack(StackName="deployed")


def test_a_change_set_s_deployment_config_is_shown_and_its_disable_rollback_acts_at_execution(served: Served) -> None:
    """As `cdk deploy --express` sends it: DeploymentConfig on CreateChangeSet, nothing on ExecuteChangeSet."""
    cfn = served.cloudformation
    broken = {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": "broken", "Priority": 9}}  # the handler refuses it
    config = {"Mode": "EXPRESS", "DisableRollback": True}
    cfn.create_change_set(
        StackName="expressed", ChangeSetName="express", ChangeSetType="CREATE", TemplateBody=json.dumps({"Resources": {"Broken": broken}}),
        DeploymentConfig=config, DisableValidation=True,
    )
    cfn.get_waiter("change_set_create_complete").wait(StackName="expressed", ChangeSetName="express", WaiterConfig={"Delay": 0.1, "MaxAttempts": 600})
    assert cfn.describe_change_set(StackName="expressed", ChangeSetName="express")["DeploymentConfig"] == config
    cfn.execute_change_set(StackName="expressed", ChangeSetName="express")
    wait_until(lambda: not served.stack("expressed")["StackStatus"].endswith("_IN_PROGRESS"), timeout=PATIENCE_S, what="the create to end")
    stack = served.stack("expressed")
    assert (stack["StackStatus"], stack["DeploymentConfig"], stack["DisableRollback"]) == ("CREATE_FAILED", config, True)
    cfn.delete_stack(StackName="expressed")


def test_no_two_events_of_a_stack_share_a_timestamp(served: Served) -> None:
    """Clients order a stack's events by Timestamp (CDK's progress display does): events made in the same millisecond
    would show out of order."""
    cfn = served.cloudformation
    notes = {f"Note{n}": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": f"n{n}"}} for n in range(8)}
    cfn.create_stack(StackName="many-at-once", TemplateBody=json.dumps({"Resources": notes}))
    wait_until(lambda: served.stack("many-at-once")["StackStatus"] == "CREATE_COMPLETE", timeout=PATIENCE_S, what="the create")
    stamps = [e["Timestamp"] for e in cfn.describe_stack_events(StackName="many-at-once")["StackEvents"]]  # newest first
    assert len(stamps) >= 2 + 2 * 8
    assert all(newer > older for newer, older in zip(stamps, stamps[1:])), stamps
    cfn.delete_stack(StackName="many-at-once")
