"""Hooks (``cfn init --artifact-type HOOK``): the real CLI, real workers, the bundled hook sample."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, List

import pytest
from conftest import SAMPLES, cfnrun, events, result_of

from cfnrun.model.project import load_project

# A hook function written against the wire format alone: it answers what it was sent.
ECHO_HOOK = '''
import json


def handler(event, context):
    context_in = event["requestContext"]
    seen = (context_in.get("callbackContext") or {}).get("seen", [])
    seen = seen + [context_in["invocation"]]
    data = event["requestData"]
    report = {
        "seen": seen,
        "callerCredentials": type(data.get("callerCredentials")).__name__,
        "targetModel": data["targetModel"],
        "hookModel": event.get("hookModel"),
        "point": event["actionInvocationPoint"],
    }
    print("REPORT " + json.dumps(report))
    if len(seen) < 3:
        return {"hookStatus": "IN_PROGRESS", "callbackContext": {"seen": seen}, "callbackDelaySeconds": 5}
    return {"hookStatus": "SUCCESS", "message": "seen " + ",".join(map(str, seen))}
'''


def with_echo_function(project: Path) -> Path:
    (project / "src" / "echo_hook.py").write_text(ECHO_HOOK)
    template = project / "template.yml"
    template.write_text(
        template.read_text()
        + "\n  EchoFunction:\n    Type: AWS::Serverless::Function\n    Properties:\n"
        "      Handler: echo_hook.handler\n      Runtime: python3.11\n      CodeUri: build/\n"
    )
    return project


def reports(stdout: str) -> List[dict]:
    found = []
    for record in (json.loads(line) for line in stdout.splitlines() if line.strip()):
        for line in (record.get("logs") or "").splitlines():
            if line.startswith("REPORT "):
                found.append(json.loads(line[len("REPORT "):]))
    return found


def invocation_lines(stdout: str) -> List[List[str]]:
    return [line.split()[:2] for line in stdout.splitlines() if line.startswith("#")]


def test_a_hook_project_is_found_with_its_entrypoints() -> None:
    project = load_project(SAMPLES / "hook")
    assert project.is_hook
    assert project.type_name == "Cfnrun::Sample::BucketGuard"
    assert project.type_function().handler == "cfnrun_sample_bucketguard.handlers.hook"
    assert project.test_function().handler == "cfnrun_sample_bucketguard.handlers.test_entrypoint"


def test_pre_create_replays_in_progress_then_succeeds_with_annotations(sample: Callable[[str], Path]) -> None:
    project = sample("hook")
    run = cfnrun("invoke", "CREATE_PRE_PROVISION", "requests/create.json", "--virtual-clock", "--no-credentials", cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    assert invocation_lines(run.stdout) == [["#1", "IN_PROGRESS"], ["#2", "SUCCESS"]]
    assert "callback after 1 s (virtual, not waited)" in run.stdout
    assert "◆ BucketEncryption PASSED: SSEAlgorithm AES256, required AES256" in run.stdout
    assert "SUCCESS CREATE_PRE_PROVISION after 2 invocation(s)" in run.stdout


def test_a_non_compliant_target_fails_with_non_compliant_and_exit_1(sample: Callable[[str], Path]) -> None:
    project = sample("hook")
    run = cfnrun("invoke", "preCreate", "requests/create-unencrypted.json", "--virtual-clock", "--no-credentials", cwd=project)
    assert run.returncode == 1, run.stdout + run.stderr
    assert invocation_lines(run.stdout) == [["#1", "IN_PROGRESS"], ["#2", "FAILED"]]
    assert "◆ BucketEncryption FAILED HIGH: SSEAlgorithm none, required AES256 → fix: set BucketEncryption" in run.stdout
    result = result_of(cfnrun("invoke", "preCreate", "requests/create-unencrypted.json", "--virtual-clock", "--json", "--no-credentials", cwd=project))
    assert result["status"] == "FAILED" and result["errorCode"] == "NonCompliant"
    assert result["action"] == "CREATE_PRE_PROVISION"


def test_pre_update_sees_previous_properties_and_pre_delete_passes(sample: Callable[[str], Path]) -> None:
    project = sample("hook")
    updated = result_of(cfnrun("invoke", "preUpdate", "requests/update.json", "--json", "--no-credentials", cwd=project))
    assert updated["status"] == "FAILED" and updated["errorCode"] == "NonCompliant"
    assert "cannot change (AES256 → aws:kms)" in updated["message"]
    deleted = cfnrun("invoke", "delete_pre_provision", "requests/delete.json", "--no-credentials", cwd=project)
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr
    assert "SUCCESS DELETE_PRE_PROVISION after 1 invocation(s)" in deleted.stdout


def test_replay_counts_request_context_invocation_and_carries_callback_context(sample: Callable[[str], Path]) -> None:
    project = with_echo_function(sample("hook"))
    run = cfnrun(
        "invoke", "UPDATE_PRE_PROVISION", "requests/update.json", "--function", "EchoFunction", "--json", "--virtual-clock",
        cwd=project, env={"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret-example", "AWS_PROFILE": None},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    seen = reports(run.stdout)
    assert [r["seen"] for r in seen] == [[1], [1, 2], [1, 2, 3]]
    assert {r["point"] for r in seen} == {"UPDATE_PRE_PROVISION"}
    assert seen[0]["callerCredentials"] == "str"  # a JSON string, as the service sends it
    request = json.loads((project / "requests" / "update.json").read_text())
    assert seen[2]["targetModel"] == request["targetModel"]  # never changed by the replay
    result = result_of(run)
    assert result["invocations"] == 3 and result["elapsedSeconds"] >= 10  # two 5 s callbacks on the virtual clock
    assert "AKIDEXAMPLE" not in run.stdout and "secret-example" not in run.stdout


def test_print_request_shows_the_hook_invocation_request(sample: Callable[[str], Path]) -> None:
    project = sample("hook")
    run = cfnrun("invoke", "preCreate", "requests/create.json", "--print-request", cwd=project)
    assert run.returncode == 0, run.stderr
    request = json.loads(run.stdout)
    assert request["actionInvocationPoint"] == "CREATE_PRE_PROVISION"
    assert request["hookTypeName"] == "Cfnrun::Sample::BucketGuard"
    assert request["requestContext"] == {"invocation": 1}
    assert request["requestData"]["targetName"] == "AWS::S3::Bucket"
    assert request["requestData"]["targetType"] == "RESOURCE"
    assert "callerCredentials" not in request["requestData"]


def test_a_hook_test_event_goes_to_the_test_entrypoint(sample: Callable[[str], Path], tmp_path: Path) -> None:
    project = sample("hook")
    desired = json.loads((project / "requests" / "create.json").read_text())
    event = {
        "credentials": {"accessKeyId": "<Access Key Id>", "secretAccessKey": "<Secret>", "sessionToken": "<Token>"},
        "actionInvocationPoint": "CREATE_PRE_PROVISION",
        "request": {"clientRequestToken": "token-1", "hookContext": {"targetName": "AWS::S3::Bucket", "targetModel": desired["targetModel"]}},
        "callbackContext": None,
        "typeConfiguration": {"EncryptionAlgorithm": "aws:kms"},
    }
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    run = cfnrun("invoke", "preCreate", str(path), "--json", "--virtual-clock", "--no-credentials", cwd=project)
    started = next(e for e in events(run) if e["event"] == "start")
    assert started["function"] == "TestEntrypoint"
    result = result_of(run)
    # the event's typeConfiguration reaches the handler: AES256 is not the configured aws:kms
    assert result["status"] == "FAILED" and result["errorCode"] == "NonCompliant" and result["invocations"] == 2
    assert "aws:kms" in result["message"]


def test_usage_errors_name_the_points_and_the_file(sample: Callable[[str], Path], tmp_path: Path) -> None:
    project = sample("hook")
    resource_action = cfnrun("invoke", "CREATE", "requests/create.json", cwd=project)
    assert resource_action.returncode == 2
    assert "CREATE is a resource action, but this is a hook project" in resource_action.stderr
    assert "CREATE_PRE_PROVISION (preCreate)" in resource_action.stderr

    note = sample("note")
    hook_point = cfnrun("invoke", "preCreate", "requests/create.json", cwd=note)
    assert hook_point.returncode == 2
    assert "CREATE_PRE_PROVISION is a hook invocation point, but this is a resource type project" in hook_point.stderr

    unknown = cfnrun("invoke", "preCreat", "requests/create.json", cwd=project)
    assert unknown.returncode == 2 and "'preCreat' is not an action" in unknown.stderr

    resource_file = tmp_path / "resource.json"
    resource_file.write_text(json.dumps({"desiredResourceState": {"BucketName": "b"}}))
    wrong_file = cfnrun("invoke", "preCreate", str(resource_file), cwd=project)
    assert wrong_file.returncode == 2
    assert "not a hook request file" in wrong_file.stderr and '"targetName": "AWS::S3::Bucket"' in wrong_file.stderr

    no_file = cfnrun("invoke", "preCreate", cwd=project)
    assert no_file.returncode == 2 and "a hook needs a request file" in no_file.stderr


def write_json(path: Path, document: object) -> str:
    path.write_text(json.dumps(document))
    return str(path)


def hook_configuration(properties: dict) -> dict:
    return {"CloudFormationConfiguration": {"HookConfiguration": {"FailureMode": "FAIL", "Properties": properties}}}


def test_typeconfig_reaches_the_hook_and_an_invalid_one_is_refused_before_invoking(
    sample: Callable[[str], Path], tmp_path: Path
) -> None:
    project = sample("hook")
    kms = cfnrun("invoke", "preCreate", "requests/create.json", "--typeconfig", "typeconfig-kms.json", "--json", "--virtual-clock", "--no-credentials", cwd=project)
    result = result_of(kms)
    assert result["status"] == "FAILED" and "must use server-side encryption aws:kms (found AES256)" in result["message"]

    invalid = write_json(tmp_path / "invalid.json", hook_configuration({"EncryptionAlgorithm": "rot13"}))
    refused = cfnrun("invoke", "preCreate", "requests/create.json", "--typeconfig", invalid, "--json", cwd=project)
    assert refused.returncode == 2
    assert "/EncryptionAlgorithm: 'rot13' is not one of" in refused.stderr and "InvalidTypeConfiguration" in refused.stderr
    assert not [e for e in events(refused) if e["event"] == "invocation"]

    flat = write_json(tmp_path / "flat.json", {"EncryptionAlgorithm": "aws:kms"})
    misshapen = cfnrun("invoke", "preCreate", "requests/create.json", "--typeconfig", flat, cwd=project)
    assert misshapen.returncode == 2 and "'CloudFormationConfiguration' is missing under the top level" in misshapen.stderr


def test_cfn_default_type_configuration_file_is_read_like_cfn(sample: Callable[[str], Path], tmp_path: Path) -> None:
    project = sample("hook")
    home = tmp_path / "home"
    (home / ".cfn-cli").mkdir(parents=True)
    write_json(home / ".cfn-cli" / "typeConfiguration.json", hook_configuration({"EncryptionAlgorithm": "aws:kms"}))
    printed = cfnrun("invoke", "preCreate", "requests/create.json", "--print-request", cwd=project, env={"HOME": str(home)})
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout)["hookModel"] == {"EncryptionAlgorithm": "aws:kms"}
    run = cfnrun("invoke", "preCreate", "requests/create.json", "--virtual-clock", "--no-credentials", cwd=project, env={"HOME": str(home)})
    assert run.returncode == 1 and "must use server-side encryption aws:kms" in run.stdout
    assert "type configuration from ~/.cfn-cli/typeConfiguration.json" in run.stderr


def test_the_history_keeps_no_type_configuration_and_a_replay_sends_cfns_file_instead(sample: Callable[[str], Path], tmp_path: Path) -> None:
    project = sample("hook")
    home = tmp_path / "home"
    (home / ".cfn-cli").mkdir(parents=True)
    write_json(home / ".cfn-cli" / "typeConfiguration.json", hook_configuration({"EncryptionAlgorithm": "aws:kms"}))
    recorded = {"HOME": str(home), "CFNRUN_HISTORY": "on"}
    run = cfnrun("invoke", "preCreate", "requests/create.json", "--virtual-clock", "--no-credentials", cwd=project, env=recorded)
    assert run.returncode == 1 and "must use server-side encryption aws:kms" in run.stdout  # not a credential's name: shown
    listed = cfnrun("history", "--json", cwd=project, env=recorded)
    newest = json.loads(listed.stdout.splitlines()[-1])
    shown = cfnrun("history", "show", str(newest["id"]), "--json", cwd=project, env=recorded)
    assert '"EncryptionAlgorithm": "aws:kms"' not in shown.stdout + (project / ".cfnrun" / "history.sqlite3").read_text(errors="replace")
    replayed = cfnrun("replay", str(newest["id"]), cwd=project, env=recorded)
    assert "the typeConfiguration was not recorded (history masks its values)" in replayed.stderr, replayed.stdout + replayed.stderr
    assert replayed.returncode == 0 and f"same outcome as #{newest['id']}" in replayed.stdout, replayed.stdout + replayed.stderr


def test_typeconfig_for_a_resource_type_is_the_whole_file_and_is_validated(sample: Callable[[str], Path], tmp_path: Path) -> None:
    project = sample("note")
    schema_path = project / "cfnrun-sample-note.json"
    no_declaration = write_json(tmp_path / "tc.json", {"Color": "blue"})
    undeclared = cfnrun("invoke", "CREATE", "requests/create.json", "--typeconfig", no_declaration, cwd=project)
    assert undeclared.returncode == 2 and "the schema declares no typeConfiguration" in undeclared.stderr

    schema = json.loads(schema_path.read_text())
    schema["typeConfiguration"] = {
        "properties": {"Color": {"type": "string", "enum": ["blue", "green"]}},
        "additionalProperties": False,
    }
    schema_path.write_text(json.dumps(schema))
    printed = cfnrun("invoke", "CREATE", "requests/create.json", "--typeconfig", no_declaration, "--print-request", cwd=project)
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout)["requestData"]["typeConfiguration"] == {"Color": "blue"}

    wrong = write_json(tmp_path / "wrong.json", {"Colour": "blue"})
    refused = cfnrun("invoke", "CREATE", "requests/create.json", "--typeconfig", wrong, cwd=project)
    assert refused.returncode == 2 and "Additional properties are not allowed ('Colour' was unexpected)" in refused.stderr


CFN_HOOK_SUITE = [
    f"contract_pre_{point}_{case}"
    for point in ("create", "update", "delete")
    for case in ("success", "failed", "failed_unsupported_target")
]
# Anything cfn test would fetch from the registry (ListTypes for AWS::S3::*, DescribeType) goes
# nowhere: the suite must get its target schemas from the project.
NO_REGISTRY = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_MAX_ATTEMPTS": "1", "AWS_PROFILE": None}


def passed_tests(output: str) -> List[str]:
    return [line.split("::")[1].split()[0] for line in output.splitlines() if "::" in line and " PASSED" in line]


def test_the_cfn_test_hook_suite_passes_against_cfnrun_serve(sample: Callable[[str], Path], serve: Callable[..., Any]) -> None:
    pytest.importorskip("rpdk.core")
    project = sample("hook")
    server = serve(project, "--sts-standin")
    env = {**os.environ, **{k: v for k, v in NO_REGISTRY.items() if v}, "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "example"}
    env.pop("AWS_PROFILE", None)
    completed = subprocess.run(
        [sys.executable, "-m", "cfnrun.app.cfn_offline", "--sts-endpoint", server.url, "--virtual-clock", "--project-targets",
         "test", "--endpoint", server.url, "--region", "us-east-1"],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    assert set(CFN_HOOK_SUITE) <= set(passed_tests(completed.stdout)), completed.stdout[-4000:]
    # the server saw TypeFunction calls by invocation point, with the hook's own status
    server.wait_for_line(r"TypeFunction CREATE_PRE_PROVISION → IN_PROGRESS")
    server.wait_for_line(r"TypeFunction (CREATE|UPDATE|DELETE)_PRE_PROVISION → FAILED UnsupportedTarget")
    assert not [line for line in server.output if "Cloud Control API" in line]  # a hook provisions nothing


def test_cfnrun_test_runs_the_hook_suite_offline_with_the_projects_target_schemas(sample: Callable[[str], Path]) -> None:
    pytest.importorskip("rpdk.core")
    project = sample("hook")
    run = cfnrun("test", str(project), "--virtual-clock", env=NO_REGISTRY, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert set(CFN_HOOK_SUITE) <= set(passed_tests(run.stdout)), run.stdout[-4000:]
    assert "SKIPPED" not in run.stdout
    assert "no contract violations in the handlers' answers" in run.stdout
    log = (project / ".cfnrun" / "test.log").read_text()
    assert "TypeFunction DELETE_PRE_PROVISION → FAILED NonCompliant" in log  # the protected bucket


def test_a_recorded_hook_operation_replays_against_the_same_target(sample: Callable[[str], Path]) -> None:
    project = sample("hook")
    recording = {"CFNRUN_HISTORY": "on"}
    first = cfnrun("invoke", "preCreate", "requests/create-unencrypted.json", "--virtual-clock", "--no-credentials", cwd=project, env=recording)
    assert first.returncode == 1, first.stdout + first.stderr
    replayed = cfnrun("replay", "1", "--virtual-clock", cwd=project, env=recording)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr  # replay's status: 0 when the outcome is the same
    assert "same outcome as #1: FAILED" in replayed.stdout
    assert "NonCompliant" in replayed.stdout and "UnsupportedTarget" not in replayed.stdout


def test_the_hook_samples_own_tests_pass_through_the_pytest_plugin(sample: Callable[[str], Path]) -> None:
    project = sample("hook")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=project, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout, run.stdout


def test_cfnrun_test_names_the_target_schemas_a_hook_project_lacks(sample: Callable[[str], Path]) -> None:
    pytest.importorskip("rpdk.core")
    project = sample("hook")
    (project / "target-info.json").unlink()  # AWS::S3::* now stands for nothing the project lists
    run = cfnrun("test", str(project), env=NO_REGISTRY)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "AWS::S3::*: no type in target-info.json matches it" in run.stderr
    schema_path = project / "cfnrun-sample-bucketguard.json"
    # an AWS type's schema ships with cloudformation-cli or cfn-lint (#30.5); a third-party type's is the project's to give
    schema_path.write_text(schema_path.read_text().replace('"AWS::S3::*"', '"Acme::Queue::Thing"'))
    run = cfnrun("test", str(project), env=NO_REGISTRY)
    assert run.returncode == 2 and "Acme::Queue::Thing: no schema in target-schemas/ or target-info.json" in run.stderr
    assert "--aws to let cfn fetch them" in run.stderr


def test_validate_checks_a_hook_schema_by_the_hook_rules(sample: Callable[[str], Path]) -> None:
    project = sample("hook")
    clean = cfnrun("validate", str(project))
    assert clean.returncode == 0 and "0 error(s), 0 warning(s)" in clean.stdout, clean.stdout + clean.stderr
    schema_path = project / "cfnrun-sample-bucketguard.json"
    schema = json.loads(schema_path.read_text())
    schema["handlers"]["preCreate"]["timeoutInMinutes"] = 5
    schema["handlers"]["preUpdate"]["targetNames"] = []
    schema["handlers"]["create"] = {"permissions": []}
    del schema["typeConfiguration"]
    schema_path.write_text(json.dumps(schema))
    broken = cfnrun("validate", str(schema_path), "--json")  # a schema file alone is told to be a hook's too
    assert broken.returncode == 1, broken.stdout + broken.stderr
    problems = {p["pointer"]: p["message"] for p in json.loads(broken.stdout)["problems"]}
    assert problems["/handlers/preCreate/timeoutInMinutes"] == "a hook handler takes only targetNames and permissions"
    assert "list the target types" in problems["/handlers/preUpdate/targetNames"]
    assert "unknown hook handler 'create'" in problems["/handlers/create"]
    assert "declares its typeConfiguration" in problems["/typeConfiguration"]
    assert "/primaryIdentifier" not in problems and "/properties" not in problems
