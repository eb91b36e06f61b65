"""Random sequences of stack operations on one serve, driven by boto3, and what must hold after each settles.

Hypothesis picks the next call among CreateStack, UpdateStack, DeleteStack, a change set made and executed,
CancelUpdateStack, ContinueUpdateRollback and RollbackStack, on a few stack names and templates of the note
sample: in-place updates, a replacement (its createOnly Folder), notes added and removed, and a WaitCondition
that is never signalled, so that creates and updates fail and roll back (or, with DisableRollback, stay failed).
One rule kills serve (SIGKILL) just after it answers a CreateStack, UpdateStack or DeleteStack, wherever that
operation's handler calls are, and starts it again on the same ``--state``.
Once every stack has settled:

- no call was answered with a 5xx or a traceback, and serve still answers;
- every stack and resource status is one botocore's model names;
- the notes that exist (the note type's LIST, through Cloud Control) are exactly those the stacks' records hold:
  none leaked by a failed create, a rollback, a replacement or a delete, none lost from a record (while an update
  that failed with DisableRollback is UPDATE_FAILED, the old note of a replacement it made waits aside, in no record).

The suite runs a few short sequences (derandomized); a longer, random but repeatable run:
``CFNRUN_STACK_MACHINE_EXAMPLES=50 python -m pytest -q --hypothesis-seed=1 tests/test_stack_state_machine.py``.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Set

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from conftest import LOCAL_STATE, SAMPLES, ServerProcess, pid_alive, wait_until
from kept_state import kept_text
from test_serve_stack_drift import client

EXAMPLES = int(os.environ.get("CFNRUN_STACK_MACHINE_EXAMPLES", "10"))
LONG_RUN = "CFNRUN_STACK_MACHINE_EXAMPLES" in os.environ  # random then (repeatable with --hypothesis-seed), else derandomized
NOTE = "Cfnrun::Sample::Note"
NAMES = ["alpha", "beta"][:1 if "CFNRUN_STACK_MACHINE_EXAMPLES" not in os.environ else 2]  # one stack: more steps act on it


def _note(title: str, folder: str = "inbox") -> Dict[str, Any]:
    return {"Type": NOTE, "Properties": {"Title": title, "Folder": folder}}


NEVER_SIGNALLED = {
    "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
    "Ready": {"Type": "AWS::CloudFormation::WaitCondition", "Properties": {"Handle": {"Ref": "Handle"}, "Timeout": "1"}},
}
TEMPLATES = [json.dumps({"Resources": resources}) for resources in (
    {"A": _note("one")},
    {"A": _note("two")},  # A updated in place
    {"A": _note("two", "archive")},  # A replaced: Folder is createOnly
    {"A": _note("one"), "B": _note("bee")},
    {"B": _note("bee", "archive")},  # A deleted, B made or replaced
    {"A": _note("three"), "B": _note("bee"), **NEVER_SIGNALLED},  # fails once its notes are made: a rollback
    {"A": _note("one"), "Later": {**_note("later"), "DependsOn": "Ready"}, **NEVER_SIGNALLED},  # Later never starts
)]


def _statuses(shape: str) -> Set[str]:
    import botocore.session

    return set(botocore.session.get_session().get_service_model("cloudformation").shape_for(shape).enum)


class Serve:
    """The one serve the sequences talk to, on ``--state``: killed (SIGKILL) and started again by the crash rule."""

    def __init__(self, root: Path, clock: str = "--virtual-clock") -> None:
        self.project, self.state, self.clock = root / "note", root / "state", clock
        shutil.copytree(SAMPLES / "note", self.project, ignore=LOCAL_STATE)
        self.process = self._started()

    def _started(self) -> ServerProcess:
        return ServerProcess(self.project, "--no-reload", *([self.clock] if self.clock else []), "--state", str(self.state))

    def crash(self) -> None:
        workers = self.process.worker_pids()
        self.process.stop(signal.SIGKILL)
        for pid in workers:  # a worker a test stopped (SIGSTOP) must run to see its serve is gone
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        wait_until(lambda: not [pid for pid in workers if pid_alive(pid)], timeout=60, what="the killed serve's workers to end")
        self.process = self._started()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    served = Serve(tmp_path_factory.mktemp("machine"))
    yield served
    served.process.stop()


class StackOperations(RuleBasedStateMachine):
    serve: Serve

    def __init__(self) -> None:
        super().__init__()
        self._clients()
        self.stack_statuses = _statuses("StackStatus")
        self.resource_statuses = _statuses("ResourceStatus")
        self.updates_failed: List[str] = []
        self.own_errors: List[str] = []  # a stack status reason that tells of a bug in cfnrun, not of a handler or template
        self.leaked_before = self._notes() - self._held()  # a note an earlier sequence leaked fails that one, not every one after

    def _clients(self) -> None:
        self.server = self.serve.process
        self.cloudformation = client(self.server, "cloudformation")
        self.cloudcontrol = client(self.server, "cloudcontrol")

    def _notes(self) -> Set[str]:
        """The notes that exist, by the note type's LIST (Cloud Control's ListResources)."""
        pages = self.cloudcontrol.get_paginator("list_resources").paginate(TypeName=NOTE)
        return {d["Identifier"] for page in pages for d in page["ResourceDescriptions"]}

    def _call(self, operation: str, **params: Any) -> Optional[Dict[str, Any]]:
        """The call's answer; None when it was refused with a 4xx that has a code and a message (a state it may not be in)."""
        try:
            answer: Dict[str, Any] = getattr(self.cloudformation, operation)(**params)
            return answer
        except ClientError as error:
            status = error.response["ResponseMetadata"]["HTTPStatusCode"]
            assert 400 <= status < 500 and error.response["Error"].get("Code") and error.response["Error"].get("Message"), (operation, params, error.response)
            return None

    def _settled(self) -> List[Dict[str, Any]]:
        stacks: List[Dict[str, Any]] = []

        def done() -> bool:
            stacks[:] = self.cloudformation.describe_stacks()["Stacks"]
            return not any(s["StackStatus"].endswith("_IN_PROGRESS") and s["StackStatus"] != "REVIEW_IN_PROGRESS" for s in stacks)

        wait_until(done, timeout=120, what="every stack to settle")
        return stacks

    @rule(name=st.sampled_from(NAMES), template=st.sampled_from(TEMPLATES), disable_rollback=st.booleans())
    def create(self, name: str, template: str, disable_rollback: bool) -> None:
        self._call("create_stack", StackName=name, TemplateBody=template, DisableRollback=disable_rollback)

    @rule(name=st.sampled_from(NAMES), template=st.sampled_from(TEMPLATES), disable_rollback=st.booleans())
    def update(self, name: str, template: str, disable_rollback: bool) -> None:
        self._call("update_stack", StackName=name, TemplateBody=template, DisableRollback=disable_rollback)

    @rule(name=st.sampled_from(NAMES), template=st.sampled_from(TEMPLATES))
    def change_set(self, name: str, template: str) -> None:
        exists = any(s["StackName"] == name for s in self.cloudformation.describe_stacks()["Stacks"])
        made = self._call("create_change_set", StackName=name, ChangeSetName="next", TemplateBody=template,
                          ChangeSetType="UPDATE" if exists else "CREATE")
        if made is None:
            return
        described: Dict[str, Any] = {}

        def over() -> bool:
            described.update(self.cloudformation.describe_change_set(ChangeSetName=made["Id"]))
            return not described["Status"].endswith(("PENDING", "IN_PROGRESS"))

        wait_until(over, timeout=60, what="the change set to be made")
        self._call("execute_change_set", ChangeSetName=made["Id"])

    @rule(name=st.sampled_from(NAMES), template=st.sampled_from(TEMPLATES), operation=st.sampled_from(["create_stack", "update_stack", "delete_stack"]))
    def crash_during(self, name: str, template: str, operation: str) -> None:
        """serve killed (SIGKILL) as soon as the operation is answered, wherever its handler calls are, and started
        again on the same ``--state``: it carries on what was cut off (``interrupted_operations.py``)."""
        params = {"StackName": name} if operation == "delete_stack" else {"StackName": name, "TemplateBody": template}
        self._call(operation, **params)
        self.serve.crash()
        self._clients()

    @rule(name=st.sampled_from(NAMES))
    def delete(self, name: str) -> None:
        self._call("delete_stack", StackName=name)

    @rule(name=st.sampled_from(NAMES))
    def cancel(self, name: str) -> None:
        self._call("cancel_update_stack", StackName=name)

    @rule(name=st.sampled_from(NAMES))
    def continue_rollback(self, name: str) -> None:
        self._call("continue_update_rollback", StackName=name)

    @rule(name=st.sampled_from(NAMES))
    def roll_back(self, name: str) -> None:
        self._call("rollback_stack", StackName=name)

    @invariant()
    def records_hold_every_note_and_no_other(self) -> None:
        held = self._held()
        existing = self._notes() - self.leaked_before
        assert held <= existing, f"notes the records hold that are gone: {held - existing}"
        if not self.updates_failed:  # else an old resource its update replaced waits aside, in no record, for what comes next
            assert existing == held, f"notes that exist but no record holds: {existing - held}"
        assert not [line for line in self.server.output if "Traceback" in line and "│" not in line]
        assert not self.own_errors, f"cfnrun's own errors: {self.own_errors}"

    def _held(self) -> Set[str]:
        """The notes the stacks' records hold, once every stack has settled (each status one the model names)."""
        held: Set[str] = set()
        stacks = self._settled()
        self.updates_failed = [s["StackId"] for s in stacks if s["StackStatus"] == "UPDATE_FAILED"]
        self.own_errors = [s["StackStatusReason"] for s in stacks if "cfnrun failed" in s.get("StackStatusReason", "")]
        for stack in stacks:
            assert stack["StackStatus"] in self.stack_statuses, stack
            pages = self.cloudformation.get_paginator("list_stack_resources").paginate(StackName=stack["StackId"])
            for resource in (r for page in pages for r in page["StackResourceSummaries"]):
                assert resource["ResourceStatus"] in self.resource_statuses, resource
                gone = resource["ResourceStatus"] in ("DELETE_COMPLETE", "CREATE_FAILED", "DELETE_SKIPPED")
                if resource["ResourceType"] == NOTE and resource.get("PhysicalResourceId") and not gone:
                    held.add(resource["PhysicalResourceId"])
        return held

    def teardown(self) -> None:
        self._held()
        for stack_id in self.updates_failed:  # DeleteStack refuses UPDATE_FAILED: rolled back first
            self._call("rollback_stack", StackName=stack_id)
        for stack in self._settled():
            self._call("update_termination_protection", StackName=stack["StackId"], EnableTerminationProtection=False)
            self._call("delete_stack", StackName=stack["StackId"])
        self._settled()


@pytest.mark.timeout(max(300, EXAMPLES * 6))  # a long run's hang guard grows with it (200 sequences: ~5 min on 2 quiet cores)
def test_any_sequence_of_stack_operations_leaves_every_note_in_a_record(server: Serve) -> None:
    StackOperations.serve = server
    run_state_machine_as_test(
        StackOperations,
        settings=settings(max_examples=EXAMPLES, stateful_step_count=10, deadline=None, derandomize=not LONG_RUN, database=None,
                          phases=[Phase.explicit, Phase.generate],  # no shrinking: serve's state outlives a sequence, a replay differs
                          suppress_health_check=list(HealthCheck)),
    )


def test_an_update_killed_after_adding_a_note_is_rolled_back_without_it(tmp_path: Path) -> None:
    """Found by the sequences above: the next serve rolled the interrupted update back and deleted the note it had added,
    yet the stack's record listed it again (with the WaitCondition that had failed), as if it were still there."""
    serve = Serve(tmp_path, clock="")  # a real clock: the WaitCondition waits its hour while the test kills serve
    try:
        cloudformation, cloudcontrol = client(serve.process, "cloudformation"), client(serve.process, "cloudcontrol")
        cloudformation.create_stack(StackName="kept", TemplateBody=json.dumps({"Resources": {"A": _note("one")}}))
        cloudformation.get_waiter("stack_create_complete").wait(StackName="kept", WaiterConfig={"Delay": 0.1, "MaxAttempts": 600})
        waits = {**NEVER_SIGNALLED, "Ready": {**NEVER_SIGNALLED["Ready"], "Properties": {"Handle": {"Ref": "Handle"}, "Timeout": "3600"}}}
        cloudformation.update_stack(StackName="kept", TemplateBody=json.dumps({"Resources": {"A": _note("one"), "B": _note("bee"), **waits}}))

        def added() -> bool:
            events = cloudformation.describe_stack_events(StackName="kept")["StackEvents"]
            return any(e["LogicalResourceId"] == "B" and e["ResourceStatus"] == "CREATE_COMPLETE" for e in events)

        wait_until(added, timeout=60, what="the update to make note B")
        note_b = cloudformation.describe_stack_resource(StackName="kept", LogicalResourceId="B")["StackResourceDetail"]["PhysicalResourceId"]
        serve.crash()
        cloudformation, cloudcontrol = client(serve.process, "cloudformation"), client(serve.process, "cloudcontrol")
        wait_until(lambda: cloudformation.describe_stacks(StackName="kept")["Stacks"][0]["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE",
                   timeout=60, what="the next serve to roll the update back")
        listed = [r["LogicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="kept")["StackResources"]]
        assert listed == ["A"]
        notes = {d["Identifier"] for d in cloudcontrol.list_resources(TypeName=NOTE)["ResourceDescriptions"]}
        assert note_b not in notes and len(notes) == 1
    finally:
        serve.process.stop()


@pytest.mark.parametrize(("then", "restart"), [
    ("update", False), ("failing update", False), ("update", True), ("failing update", True), ("RollbackStack", True),
])
def test_the_old_note_a_failed_update_replaced_goes_with_the_next_update(tmp_path: Path, then: str, restart: bool) -> None:
    """Found by the sequences above: an update that failed with DisableRollback (UPDATE_FAILED) had replaced note B; the
    next update, whether it completed or rolled back, never deleted the old B, which no record held any more. With serve
    started again in between (``restart``), the old B was forgotten, and RollbackStack ended UPDATE_ROLLBACK_FAILED on an
    error of cfnrun's own."""
    serve = Serve(tmp_path)
    try:
        cloudformation, cloudcontrol = client(serve.process, "cloudformation"), client(serve.process, "cloudcontrol")
        fast = {"Delay": 0.1, "MaxAttempts": 600}
        cloudformation.create_stack(StackName="kept", TemplateBody=TEMPLATES[4])  # B in the archive folder
        cloudformation.get_waiter("stack_create_complete").wait(StackName="kept", WaiterConfig=fast)
        old_b = cloudformation.describe_stack_resource(StackName="kept", LogicalResourceId="B")["StackResourceDetail"]["PhysicalResourceId"]
        cloudformation.update_stack(StackName="kept", TemplateBody=TEMPLATES[5], DisableRollback=True)  # B to the inbox: replaced; fails
        wait_until(lambda: cloudformation.describe_stacks(StackName="kept")["Stacks"][0]["StackStatus"] == "UPDATE_FAILED",
                   timeout=60, what="the update to fail")
        if restart:
            serve.crash()
            cloudformation, cloudcontrol = client(serve.process, "cloudformation"), client(serve.process, "cloudcontrol")
        if then == "RollbackStack":
            cloudformation.rollback_stack(StackName="kept")
        else:
            cloudformation.update_stack(StackName="kept", TemplateBody=TEMPLATES[3] if then == "update" else TEMPLATES[6])
        ends = "UPDATE_COMPLETE" if then == "update" else "UPDATE_ROLLBACK_COMPLETE"
        wait_until(lambda: not cloudformation.describe_stacks(StackName="kept")["Stacks"][0]["StackStatus"].endswith("_IN_PROGRESS"),
                   timeout=60, what="the next operation to end")
        assert cloudformation.describe_stacks(StackName="kept")["Stacks"][0]["StackStatus"] == ends
        notes = {d["Identifier"] for d in cloudcontrol.list_resources(TypeName=NOTE)["ResourceDescriptions"]}
        held = {r["PhysicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="kept")["StackResources"]
                if r["ResourceType"] == NOTE}
        if then == "RollbackStack":  # B back to the old one, note A (the update's) gone
            assert notes == held == {old_b}, (old_b, notes, held)
        else:
            assert old_b not in notes and notes == held, (old_b, notes, held)
            events = cloudformation.describe_stack_events(StackName="kept")["StackEvents"]
            assert any(e["PhysicalResourceId"] == old_b and e["ResourceStatus"] == "DELETE_COMPLETE" for e in events)
    finally:
        serve.process.stop()


def test_a_failed_update_read_back_after_a_restart_rolls_back_to_the_template_parameters_and_tags_before_it(tmp_path: Path) -> None:
    """Found while fixing the above: after a restart, RollbackStack (and the rollback of an update serve stopped during)
    put each resource back but left the stack on the failed update's template, parameters and tags, so the next change
    set compared against a template that was never deployed. What an update rolls back to is now kept with it; the NoEcho
    values of either side are not."""
    serve = Serve(tmp_path)
    try:
        cloudformation, cloudcontrol = client(serve.process, "cloudformation"), client(serve.process, "cloudcontrol")
        secret = {"Secret": {"Type": "String", "NoEcho": True}, "Title": {"Type": "String"}}
        note = {"Type": NOTE, "Properties": {"Title": {"Ref": "Title"}, "Folder": "inbox"}}
        before = json.dumps({"Parameters": secret, "Resources": {"A": note}})
        after = json.dumps({"Parameters": secret, "Resources": {"A": note, **NEVER_SIGNALLED}})

        def given(secret: str, title: str) -> List[Dict[str, str]]:
            return [{"ParameterKey": "Secret", "ParameterValue": secret}, {"ParameterKey": "Title", "ParameterValue": title}]

        cloudformation.create_stack(StackName="kept", TemplateBody=before, Parameters=given("first-s3cret", "one"), Tags=[{"Key": "k", "Value": "v1"}])
        cloudformation.get_waiter("stack_create_complete").wait(StackName="kept", WaiterConfig={"Delay": 0.1, "MaxAttempts": 600})
        note_a = cloudformation.describe_stack_resource(StackName="kept", LogicalResourceId="A")["StackResourceDetail"]["PhysicalResourceId"]
        cloudformation.update_stack(StackName="kept", TemplateBody=after, Parameters=given("second-s3cret", "two"), DisableRollback=True,
                                    Tags=[{"Key": "k", "Value": "v2"}])
        wait_until(lambda: cloudformation.describe_stacks(StackName="kept")["Stacks"][0]["StackStatus"] == "UPDATE_FAILED",
                   timeout=60, what="the update to fail")
        serve.crash()
        kept = kept_text(serve.state)
        assert "first-s3cret" not in kept and "second-s3cret" not in kept
        cloudformation, cloudcontrol = client(serve.process, "cloudformation"), client(serve.process, "cloudcontrol")
        cloudformation.rollback_stack(StackName="kept")
        wait_until(lambda: not cloudformation.describe_stacks(StackName="kept")["Stacks"][0]["StackStatus"].endswith("_IN_PROGRESS"),
                   timeout=60, what="the rollback to end")
        stack = cloudformation.describe_stacks(StackName="kept")["Stacks"][0]
        assert stack["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
        assert stack["Tags"] == [{"Key": "k", "Value": "v1"}]
        assert {p["ParameterKey"]: p["ParameterValue"] for p in stack["Parameters"]}["Title"] == "one"
        assert json.loads(json.dumps(cloudformation.get_template(StackName="kept")["TemplateBody"])) == json.loads(before)
        model = json.loads(cloudcontrol.get_resource(TypeName=NOTE, Identifier=note_a)["ResourceDescription"]["Properties"])
        assert model["Title"] == "one"
    finally:
        serve.process.stop()


def test_a_cleanup_cut_off_deletes_by_the_template_from_before_the_update_what_it_had_not_begun_to(tmp_path: Path) -> None:
    """Serve killed while an update's cleanup deleted the first of the notes the update removes (A), and the next serve
    killed too while it went on with that cleanup: the third finishes A's delete and deletes the others too, each by its
    DeletionPolicy in the template from before the update (B Delete, C Retain), after A, which depended on them. Found by
    the sequences above: A stayed in the stack's record for good; and, once that was fixed, those whose delete had not
    begun still did (after a second kill, until the cleanup a restarted serve resumes kept that template in the record)."""
    serve = Serve(tmp_path)
    try:
        cloudformation, cloudcontrol = client(serve.process, "cloudformation"), client(serve.process, "cloudcontrol")
        handle = {"W": NEVER_SIGNALLED["Handle"]}
        removed = {"A": {**_note("one"), "DependsOn": ["B", "C"]}, "B": _note("bee"), "C": {**_note("sea"), "DeletionPolicy": "Retain"}}
        cloudformation.create_stack(StackName="kept", TemplateBody=json.dumps({"Resources": {**removed, **handle}}))
        cloudformation.get_waiter("stack_create_complete").wait(StackName="kept", WaiterConfig={"Delay": 0.1, "MaxAttempts": 600})
        notes = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="kept")["StackResources"]}
        for pid in serve.process.worker_pids():  # A's DELETE cannot answer: serve is killed with it in flight
            os.kill(pid, signal.SIGSTOP)
        cloudformation.update_stack(StackName="kept", TemplateBody=json.dumps({"Resources": handle}))

        def deletes_of_a() -> int:
            events = cloudformation.describe_stack_events(StackName="kept")["StackEvents"]
            return sum(e["LogicalResourceId"] == "A" and e["ResourceStatus"] == "DELETE_IN_PROGRESS" for e in events)

        wait_until(lambda: deletes_of_a() == 1, timeout=60, what="the cleanup to begin deleting note A")
        with open(serve.project / ".state" / "notes.lock", "a") as lock:  # the next serve's DELETEs wait at the notes' lock
            fcntl.flock(lock, fcntl.LOCK_EX)
            serve.crash()
            cloudformation = client(serve.process, "cloudformation")
            wait_until(lambda: deletes_of_a() == 2, timeout=60, what="the next serve to go on deleting note A")
            serve.process.stop(signal.SIGKILL)
        serve.crash()
        cloudformation, cloudcontrol = client(serve.process, "cloudformation"), client(serve.process, "cloudcontrol")
        wait_until(lambda: cloudformation.describe_stacks(StackName="kept")["Stacks"][0]["StackStatus"] == "UPDATE_COMPLETE",
                   timeout=60, what="the next serve to finish the cleanup")
        assert [r["LogicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="kept")["StackResources"]] == ["W"]
        assert {d["Identifier"] for d in cloudcontrol.list_resources(TypeName=NOTE)["ResourceDescriptions"]} == {notes["C"]}
        events = cloudformation.describe_stack_events(StackName="kept")["StackEvents"]
        assert [e["ResourceStatus"] for e in events if e["LogicalResourceId"] == "C"][0] == "DELETE_SKIPPED"
    finally:
        serve.process.stop()
