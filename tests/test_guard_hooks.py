"""Guard hooks in local stacks: an AWS::CloudFormation::GuardHook stack activates Guard rules kept in S3 (moto) or a local file.

One serve (per module and xdist worker) serves the note sample with an embedded moto; each test's
hooks are scoped with StackFilters to that test's own stacks, so the tests stay independent.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from typing import Any, Dict, Iterator, List, Optional

import pytest

from conftest import LOCAL_STATE, SAMPLES, ServerProcess, wait_until
from test_local_stacks import Stacks

SETTLE_S = float(os.environ.get("CFNRUN_TEST_STACK_BUDGET_S", "120"))
RULES_BUCKET = "guard-rules"
SECRET_LINE = "$6$notahash$whatserveneverquotes"
VERSIONING_RULES = """\
let buckets = Resources.*[ Type == "AWS::S3::Bucket" ]

rule bucket_versioning_enabled when %buckets !empty {
    %buckets.Properties.VersioningConfiguration.Status == "Enabled"
    <<
        Buckets must keep versioning Enabled
    >>
}
"""
# The same policy, with the wanted status from the hook's input parameters (Options.InputParams).
PARAMETERIZED_RULES = """\
let buckets = Resources.*[ Type == "AWS::S3::Bucket" ]
let wanted = Policy.VersioningStatus

rule bucket_versioning_as_wanted when %buckets !empty {
    %buckets.Properties.VersioningConfiguration.Status == %wanted
    << Bucket versioning must be as the policy says >>
}
"""


def hook_template(alias: str, stacks_in_scope: List[str], mode: str = "FAIL", input_params: Optional[str] = None) -> str:
    options = f"      Options:\n        InputParams:\n          Uri: {input_params}\n" if input_params else ""
    return f"""\
Parameters:
  Rules:
    Type: String
Resources:
  Guard:
    Type: AWS::CloudFormation::GuardHook
    Properties:
      Alias: {alias}
      RuleLocation:
        Uri: !Ref Rules
      ExecutionRole: arn:aws:iam::123456789012:role/guard-hook
      HookStatus: ENABLED
      FailureMode: {mode}
      TargetOperations: [RESOURCE]
      TargetFilters:
        TargetNames: [AWS::S3::Bucket]
      StackFilters:
        FilteringCriteria: ALL
        StackNames:
          Include: {json.dumps(stacks_in_scope)}
{options}Outputs:
  HookArn:
    Value: !GetAtt Guard.HookArn
"""


BUCKET_TEMPLATE = """\
Parameters:
  Versioning:
    Type: String
    AllowedValues: [Enabled, Suspended]
Resources:
  Note:
    Type: Cfnrun::Sample::Note
    Properties:
      Title: made before the bucket
  Bucket:
    Type: AWS::S3::Bucket
    DependsOn: Note
    Properties:
      VersioningConfiguration:
        Status: !Ref Versioning
"""


@pytest.fixture(scope="module")
def stacks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stacks]:
    folder = tmp_path_factory.mktemp("guard")
    shutil.copytree(SAMPLES / "note", folder / "note", ignore=LOCAL_STATE)
    (folder / "policy").mkdir()
    (folder / "policy" / "versioning.guard").write_text(PARAMETERIZED_RULES, encoding="utf-8")
    (folder / "policy" / "enabled.yaml").write_text("Policy:\n  VersioningStatus: Enabled\n", encoding="utf-8")
    (folder / "private").mkdir()  # a file beside the policy that serve was not told to read: a hook cannot name it
    (folder / "private" / "shadow").write_text(f"root:{SECRET_LINE}:19000:0:99999:7:::\n", encoding="utf-8")
    (folder / "policy" / "linked.guard").symlink_to(folder / "private" / "shadow")
    process = subprocess.Popen(
        [
            sys.executable, "-m", "cfnrun", "serve", "--port", "0", "--no-reload", "--moto", "--virtual-clock", "--provider", "note",
            "--guard-rules-dir", "policy",
        ],
        cwd=str(folder), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "NO_COLOR": "1", "NOTES_STATE_DIR": str(folder / "notes")},
    )
    server = ServerProcess(folder, process=process)
    try:
        found = Stacks(server, folder)
        found.s3.create_bucket(Bucket=RULES_BUCKET)
        yield found
    finally:
        server.stop()


def settle(stacks: Stacks, name: str) -> str:
    """The stack's status once no operation is in progress."""
    statuses: List[str] = []

    def settled() -> bool:
        statuses.append(stacks.cloudformation.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"])
        return not statuses[-1].endswith("_IN_PROGRESS")

    wait_until(settled, timeout=SETTLE_S, what=f"stack {name} to settle")
    return statuses[-1]


def deploy(stacks: Stacks, name: str, body: str, **parameters: str) -> str:
    given = [{"ParameterKey": key, "ParameterValue": value} for key, value in parameters.items()]
    stacks.cloudformation.create_stack(StackName=name, TemplateBody=body, Parameters=given)
    return settle(stacks, name)


def remove(stacks: Stacks, name: str) -> None:
    stacks.cloudformation.delete_stack(StackName=name)
    stacks.wait("stack_delete_complete", StackName=name)


def hook_events(stacks: Stacks, name: str, logical_id: str = "Bucket") -> List[Dict[str, Any]]:
    return [e for e in stacks.events(name) if e["LogicalResourceId"] == logical_id and "HookStatus" in e]


def notes(stacks: Stacks) -> Dict[str, Any]:
    path = stacks.folder / "notes" / "notes.json"
    return dict(json.loads(path.read_text())["notes"]) if path.exists() else {}


def put_rules(stacks: Stacks, key: str, text: str) -> str:
    stacks.s3.put_object(Bucket=RULES_BUCKET, Key=key, Body=text.encode())
    return f"s3://{RULES_BUCKET}/{key}"


def test_a_fail_guard_hook_rolls_back_a_bucket_without_versioning_and_stops_when_its_stack_is_deleted(stacks: Stacks) -> None:
    rules = put_rules(stacks, "fail/versioning.guard", VERSIONING_RULES)
    alias = "Cfnrun::Guard::Versioning"
    assert deploy(stacks, "guard-fail-hook", hook_template(alias, ["guard-fail-suspended", "guard-fail-enabled", "guard-fail-unreadable", "guard-fail-after"]), Rules=rules) == "CREATE_COMPLETE"
    assert stacks.outputs("guard-fail-hook")["HookArn"].endswith(":type/hook/Cfnrun-Guard-Versioning")
    try:
        assert deploy(stacks, "guard-fail-suspended", BUCKET_TEMPLATE, Versioning="Suspended") == "ROLLBACK_COMPLETE"
        hooked = hook_events(stacks, "guard-fail-suspended")
        assert [(e["HookType"], e["HookStatus"], e["HookFailureMode"]) for e in hooked] == [
            (alias, "HOOK_IN_PROGRESS", "FAIL"), (alias, "HOOK_COMPLETE_FAILED", "FAIL"),
        ]
        assert hooked[-1]["HookStatusReason"] == "Hook failed with message: Rule [bucket_versioning_enabled] failed: Buckets must keep versioning Enabled"
        assert hooked[-1]["HookInvocationPoint"] == "PRE_PROVISION"
        result = stacks.cloudformation.get_hook_result(HookResultId=hooked[-1]["HookInvocationId"])
        assert (result["TypeName"], result["OriginalTypeName"]) == (alias, "AWS::Hooks::GuardHook")  # the public hook its Alias activates
        failed = [e for e in stacks.events("guard-fail-suspended") if e["LogicalResourceId"] == "Bucket" and e["ResourceStatus"] == "CREATE_FAILED"]
        assert alias in failed[0]["ResourceStatusReason"]
        assert stacks.statuses("guard-fail-suspended", "Note")[-1] == "DELETE_COMPLETE"
        assert notes(stacks) == {}  # the user resource made before the bucket is gone

        assert deploy(stacks, "guard-fail-enabled", BUCKET_TEMPLATE, Versioning="Enabled") == "CREATE_COMPLETE"
        assert [e["HookStatus"] for e in hook_events(stacks, "guard-fail-enabled")] == ["HOOK_IN_PROGRESS", "HOOK_COMPLETE_SUCCEEDED"]
        assert hook_events(stacks, "guard-fail-enabled", "Note") == []  # TargetNames: buckets only

        # Rules that cannot be read any more: the hook fails (HOOK_FAILED), and in FAIL mode so does the bucket.
        stacks.s3.delete_object(Bucket=RULES_BUCKET, Key="fail/versioning.guard")
        assert deploy(stacks, "guard-fail-unreadable", BUCKET_TEMPLATE, Versioning="Enabled") == "ROLLBACK_COMPLETE"
        last = hook_events(stacks, "guard-fail-unreadable")[-1]
        assert last["HookStatus"] == "HOOK_FAILED"
        assert f"{rules} cannot be read" in last["HookStatusReason"] and "NoSuchKey" in last["HookStatusReason"]
    finally:
        remove(stacks, "guard-fail-hook")
    assert deploy(stacks, "guard-fail-after", BUCKET_TEMPLATE, Versioning="Suspended") == "CREATE_COMPLETE"
    assert hook_events(stacks, "guard-fail-after") == []


def test_a_warn_guard_hook_lets_the_bucket_through_with_the_rules_message_in_the_events(stacks: Stacks) -> None:
    rules = put_rules(stacks, "warn/versioning.guard", VERSIONING_RULES)
    alias = "Cfnrun::Guard::Warned"
    assert deploy(stacks, "guard-warn-hook", hook_template(alias, ["guard-warn-bucket"], mode="WARN"), Rules=rules) == "CREATE_COMPLETE"
    try:
        assert deploy(stacks, "guard-warn-bucket", BUCKET_TEMPLATE, Versioning="Suspended") == "CREATE_COMPLETE"
        last = hook_events(stacks, "guard-warn-bucket")[-1]
        assert (last["HookStatus"], last["HookFailureMode"]) == ("HOOK_COMPLETE_FAILED", "WARN")
        assert "Buckets must keep versioning Enabled" in last["HookStatusReason"]
        assert stacks.statuses("guard-warn-bucket", "Bucket")[-1] == "CREATE_COMPLETE"
    finally:
        remove(stacks, "guard-warn-hook")


def test_local_rules_take_their_input_parameters_from_options(stacks: Stacks) -> None:
    alias = "Cfnrun::Guard::Local"
    body = hook_template(alias, ["guard-local-suspended", "guard-local-enabled"], input_params="policy/enabled.yaml")
    assert deploy(stacks, "guard-local-hook", body, Rules="policy/versioning.guard") == "CREATE_COMPLETE"
    try:
        assert deploy(stacks, "guard-local-suspended", BUCKET_TEMPLATE, Versioning="Suspended") == "ROLLBACK_COMPLETE"
        assert hook_events(stacks, "guard-local-suspended")[-1]["HookStatusReason"] == (
            "Hook failed with message: Rule [bucket_versioning_as_wanted] failed: Bucket versioning must be as the policy says"
        )
        assert deploy(stacks, "guard-local-enabled", BUCKET_TEMPLATE, Versioning="Enabled") == "CREATE_COMPLETE"
    finally:
        remove(stacks, "guard-local-hook")


@pytest.mark.parametrize(
    "rules, reason",
    [
        ("rule broken {{{ ", "do not parse at line 1, column 14"),
        (None, "NoSuchKey"),
        ("policy/absent.guard", "policy/absent.guard cannot be read"),
    ],
    ids=["rules-that-do-not-parse", "s3-object-that-does-not-exist", "local-file-that-does-not-exist"],
)
def test_a_guard_hook_whose_rules_cannot_be_used_fails_where_it_is_declared(stacks: Stacks, rules: Optional[str], reason: str) -> None:
    name = f"guard-bad-{time.monotonic_ns()}"
    if rules is None:
        location = f"s3://{RULES_BUCKET}/nothing/here.guard"
    elif rules.startswith("policy/"):
        location = rules
    else:
        location = put_rules(stacks, f"{name}.guard", rules)
    assert deploy(stacks, name, hook_template("Cfnrun::Guard::Broken", [name]), Rules=location) == "ROLLBACK_COMPLETE"
    failed = [e for e in stacks.events(name) if e["LogicalResourceId"] == "Guard" and e["ResourceStatus"] == "CREATE_FAILED"]
    assert reason in failed[0]["ResourceStatusReason"], failed
    assert "Guard hook Cfnrun::Guard::Broken" in failed[0]["ResourceStatusReason"]
    # Nothing was activated: the same alias can be declared again.
    good = put_rules(stacks, f"{name}-good.guard", VERSIONING_RULES)
    assert deploy(stacks, f"{name}-again", hook_template("Cfnrun::Guard::Broken", [name]), Rules=good) == "CREATE_COMPLETE"
    remove(stacks, f"{name}-again")



@pytest.mark.parametrize(
    "where", ["absolute", "relative", "dot-dot", "symbolic-link", "input-params"],
)
def test_a_guard_hook_reads_local_files_only_below_the_folders_it_was_given(stacks: Stacks, where: str) -> None:
    name = f"guard-outside-{where}"
    shadow = stacks.folder / "private" / "shadow"
    rules, params = {
        "absolute": (str(shadow), None),
        "relative": ("private/shadow", None),
        "dot-dot": ("policy/../private/shadow", None),
        "symbolic-link": ("policy/linked.guard", None),
        "input-params": ("policy/versioning.guard", str(shadow)),
    }[where]
    assert deploy(stacks, name, hook_template("Cfnrun::Guard::Outside", [name], input_params=params), Rules=rules) == "ROLLBACK_COMPLETE"
    events = stacks.events(name)
    failed = [e for e in events if e["LogicalResourceId"] == "Guard" and e["ResourceStatus"] == "CREATE_FAILED"]
    assert "is outside the folders cfnrun reads rules from" in failed[0]["ResourceStatusReason"], failed
    assert "--guard-rules-dir" in failed[0]["ResourceStatusReason"]
    assert SECRET_LINE not in json.dumps(events, default=str)
