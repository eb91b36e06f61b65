"""``cfnrun stack test``: the real command line, in its own process, on private copies of the samples.

Each run starts its own serve in-process (port 0), so these run side by side under ``-n auto``.
The samples keep their resources' state in their folders: a copy per test starts empty, and a
run that passes leaves none of them behind.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List

import boto3
import pytest

from cfnrun.model.schema import WRITE_ONLY_MASK
from tests.conftest import FIXTURES, LOCAL_STATE, SAMPLES, cfnrun, sandboxes_of
from tests.kept_state import kept_records

PROVIDERS = ("note", "cluster", "parameter")
SECRET = "s3cret-NoEcho-value-9"


@pytest.fixture
def stack_samples(sample: Callable[[str], Path], tmp_path: Path) -> Path:
    """The three sample providers and the sample stack's template, copied side by side under ``tmp_path``."""
    for name in PROVIDERS:
        sample(name)
    shutil.copytree(SAMPLES / "stack", tmp_path / "stack")
    return tmp_path


def stack_test(folder: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    providers = [arg for name in PROVIDERS for arg in ("--provider", name)]
    return cfnrun("stack", "test", *args, *providers, "--virtual-clock", cwd=folder, timeout=timeout)


def records(completed: subprocess.CompletedProcess) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in completed.stdout.splitlines()]


def test_create_two_updates_and_delete_pass_and_show_the_replacement(stack_samples: Path) -> None:
    completed = stack_test(
        stack_samples, "stack/template.yaml", "--moto", "--update", "NodeCount=2", "--update", "Folder=archive"
    )
    out = completed.stdout
    assert completed.returncode == 0, out + completed.stderr
    for header in ("step 1/4: create", "step 2/4: update NodeCount=2", "step 3/4: update Folder=archive", "step 4/4: delete"):
        assert header in out
    step_3 = out[out.index("step 3/4"):out.index("step 4/4")]
    replacing = [line for line in step_3.splitlines() if "Requested update requires the creation of a new physical resource" in line]
    assert len(replacing) == 1 and replacing[0].split()[1] == "Note", step_3
    assert any(line.split()[1:4] == ["Note", "Cfnrun::Sample::Note", "DELETE_COMPLETE"] for line in step_3.splitlines())  # the old note
    assert "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS" in step_3
    # Bucket, Cluster, two notes, NoteSetting: each confirmed gone (READ NotFound, the bucket's endpoint stack deleted)
    assert "5 made (replacements included), 5 confirmed gone after delete" in out
    assert "PASSED: stack test template" in out
    assert json.loads((stack_samples / "note" / ".state" / "notes.json").read_text(encoding="utf-8"))["notes"] == {}


def test_a_second_resource_failing_schema_validation_rolls_back_the_first(stack_samples: Path) -> None:
    (stack_samples / "fails.yaml").write_text(
        "Resources:\n"
        "  Cluster:\n    Type: Cfnrun::Sample::Cluster\n    Properties: {Name: first, NodeCount: 1}\n"
        "  Note:\n    Type: Cfnrun::Sample::Note\n    Properties:\n      Title: second\n"
        "      Folder: !GetAtt Cluster.Endpoint\n",  # known once Cluster exists: cfn-lint cannot refuse it up front
        encoding="utf-8",
    )
    completed = stack_test(stack_samples, "fails.yaml")
    out = completed.stdout
    assert completed.returncode == 1, out + completed.stderr
    lines = out.splitlines()
    failed = next(index for index, line in enumerate(lines) if "Note" in line and "CREATE_FAILED" in line)
    assert "Properties validation failed for resource Note" in lines[failed]
    after = "\n".join(lines[failed:])
    assert "ROLLBACK_IN_PROGRESS" in after and "ROLLBACK_COMPLETE" in after
    assert any(line.split()[1:4] == ["Cluster", "Cfnrun::Sample::Cluster", "DELETE_COMPLETE"] for line in lines[failed:])
    assert "✗ step 1 create: ROLLBACK_COMPLETE (rolled back)" in out
    assert "1 made (replacements included), 1 confirmed gone after delete" in out
    assert "FAILED: stack test fails" in out
    assert "stack-test.log" in completed.stderr


def test_json_is_ndjson_in_the_event_vocabulary_without_the_noecho_value(stack_samples: Path) -> None:
    completed = stack_test(
        stack_samples, "stack/template.yaml", "--moto", "--json", "--parameters", f"NotePassword={SECRET}", "--update", "Folder=archive"
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert SECRET not in completed.stdout and SECRET not in completed.stderr
    assert SECRET not in (stack_samples / ".cfnrun" / "stack-test.log").read_text(encoding="utf-8")
    found = records(completed)
    kinds = [record["event"] for record in found]
    assert kinds[0] == "stackTestStart" and kinds[-1] == "stackTestResult"
    assert found[0]["steps"] == ["create NotePassword=****", "update Folder=archive", "delete"]
    assert [r["kind"] for r in found if r["event"] == "stackStep"] == ["create", "update", "delete"]
    assert all(r["ok"] for r in found if r["event"] == "stackStepResult")
    notes = [r for r in found if r["event"] == "stackEvent" and r["logicalResourceId"] == "Note" and "resourceProperties" in r]
    assert notes and all(json.loads(r["resourceProperties"])["AccessPassword"] == WRITE_ONLY_MASK for r in notes)  # writeOnly and NoEcho
    stack_events = [r for r in found if r["event"] == "stackEvent" and r["resourceType"] == "AWS::CloudFormation::Stack"]
    assert stack_events[-1]["resourceStatus"] == "DELETE_COMPLETE"
    result = found[-1]
    assert result["failed"] is False and result["leftovers"] == [] and result["checkedGone"] == result["resources"] == 5


def test_keep_skips_the_delete_and_lists_what_the_stack_holds(stack_samples: Path) -> None:
    completed = stack_test(stack_samples, "stack/template.yaml", "--moto", "--keep")
    out = completed.stdout
    assert completed.returncode == 0, out + completed.stderr
    assert "steps: create" in out and "delete" not in out.split("summary")[0].split("steps:")[1].splitlines()[0]
    assert "DELETE_IN_PROGRESS" not in out
    assert "4 resource(s), not deleted" in out
    assert "ends with this command" in out


def test_keep_with_state_keeps_the_stack_for_serve_to_delete_later(stack_samples: Path, serve: Any) -> None:
    kept = stack_test(stack_samples, "stack/template.yaml", "--moto", "--keep", "--state", "kept", "--json")
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert records(kept)[-1]["keptIn"] == "kept"
    [stack] = kept_records(stack_samples / "kept")
    assert (stack["name"], stack["status"]) == ("template", "CREATE_COMPLETE")

    again = stack_test(stack_samples, "stack/template.yaml", "--moto", "--state", "kept")
    assert again.returncode == 2, again.stdout + again.stderr
    assert "a stack named template is already kept in kept (CREATE_COMPLETE)" in again.stderr

    # as the summary says: serve reads it back and deletes it, though the bucket and the SSM parameter went with the first moto
    providers = [arg for name in PROVIDERS[1:] for arg in ("--provider", str(stack_samples / name))]
    server = serve(stack_samples / "note", *providers, "--moto", "--virtual-clock", "--state", str(stack_samples / "kept"))
    server.has_printed("is gone from the AWS endpoint")
    client = boto3.client(
        "cloudformation", endpoint_url=server.url, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y"
    )
    client.delete_stack(StackName="template")
    client.get_waiter("stack_delete_complete").wait(StackName="template", WaiterConfig={"Delay": 0.2, "MaxAttempts": 200})
    assert json.loads((stack_samples / "note" / ".state" / "notes.json").read_text(encoding="utf-8"))["notes"] == {}


def test_a_hook_that_fails_a_resource_fails_the_step_with_its_reason(sample: Callable[[str], Path], tmp_path: Path) -> None:
    sample("hook")
    (tmp_path / "bucket.yaml").write_text("Resources:\n  Bucket:\n    Type: AWS::S3::Bucket\n", encoding="utf-8")
    completed = cfnrun("stack", "test", "bucket.yaml", "--hook", "hook", "--moto", "--json", cwd=tmp_path)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    found = records(completed)
    hooked = [r for r in found if r["event"] == "stackEvent" and r.get("hookStatus") == "HOOK_COMPLETE_FAILED"]
    assert [(r["logicalResourceId"], r["hookType"], r["hookFailureMode"]) for r in hooked] == [("Bucket", "Cfnrun::Sample::BucketGuard", "FAIL")]
    create = next(r for r in found if r["event"] == "stackStepResult" and r["kind"] == "create")
    assert create["stackStatus"] == "ROLLBACK_COMPLETE"
    assert create["reason"].startswith("Bucket HOOK_COMPLETE_FAILED Cfnrun::Sample::BucketGuard: Hook failed with message: Bucket must use server-side encryption")


def test_a_resource_read_finds_after_its_delete_is_left_behind(sample: Callable[[str], Path], tmp_path: Path) -> None:
    note = sample("note")
    handlers = next((note / "src").glob("*/handlers.py"))
    text = handlers.read_text(encoding="utf-8")
    handlers.write_text(text.replace('del state["notes"][record["NoteId"]]', "pass  # a DELETE that deletes nothing"), encoding="utf-8")
    (tmp_path / "one.yaml").write_text("Resources:\n  Note:\n    Type: Cfnrun::Sample::Note\n    Properties: {Title: kept}\n", encoding="utf-8")
    completed = cfnrun("stack", "test", "one.yaml", "--provider", "note", "--virtual-clock", "--json", cwd=tmp_path)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    result = records(completed)[-1]
    assert [left["logicalResourceId"] for left in result["leftovers"]] == ["Note"]
    assert "READ still answers SUCCESS" in result["leftovers"][0]["reason"]
    assert all(r["ok"] for r in records(completed) if r["event"] == "stackStepResult")


@pytest.mark.parametrize(
    "args, says",
    [
        (["missing.yaml"], "missing.yaml: no such template file"),
        (["stack/template.yaml", "--update", "NodeCount"], "'NodeCount' is not KEY=VALUE"),
        (["stack/template.yaml", "--update="], "names no parameter"),
        (["stack/template.yaml", "--parameters", "Nope=1"], "stack/template.yaml: Parameters: [Nope] do not exist in the template"),
        (["stack/template.yaml", "--update", "NodeCount=1"], "step 2 (update NodeCount=1): it changes no parameter's value"),
        # told from the template alone, before serve starts: before the missing provider (which serve's start reads) is
        (["stack/template.yaml", "--parameters", "Nope=1", "--provider", "no-such-provider"], "Parameters: [Nope] do not exist"),
        (["stack/template.yaml", "--update", "Env=prod", "--update", "Bogus=1", "--provider", "no-such-provider"],
         "stack/template.yaml, step 3 (update Bogus=1): Parameters: [Bogus] do not exist in the template"),
    ],
)
def test_usage_errors_exit_2_with_one_line(stack_samples: Path, args: List[str], says: str) -> None:
    completed = stack_test(stack_samples, *args, "--moto")
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert completed.stderr.splitlines() == [f"cfnrun: error: {completed.stderr.split('cfnrun: error: ')[1].strip()}"]
    assert says in completed.stderr
    assert "step 1" not in completed.stdout  # refused before anything was made


def test_a_value_the_service_refuses_is_told_without_waiting_for_the_templates_lint(sample: Callable[[str], Path], tmp_path: Path) -> None:
    """The refusal comes once serve has read the template; the lint started beside it is stopped, its findings (which
    the same template with an allowed value writes to the log) never written."""
    sample("note")
    (tmp_path / "env.yaml").write_text(
        "Parameters:\n  Env: {Type: String, AllowedValues: [dev, prod]}\n  Unused: {Type: String, Default: x}\n"
        "Resources:\n  Note:\n    Type: Cfnrun::Sample::Note\n    Properties: {Title: !Ref Env}\n",
        encoding="utf-8",
    )
    log = tmp_path / ".cfnrun" / "stack-test.log"
    refused = cfnrun("stack", "test", "env.yaml", "--provider", "note", "--parameters", "Env=test", cwd=tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr == "cfnrun: error: env.yaml: Parameter 'Env' must be one of AllowedValues\n"
    assert "template lint" not in log.read_text()
    accepted = cfnrun("stack", "test", "env.yaml", "--provider", "note", "--parameters", "Env=dev", "--virtual-clock", cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "[W2001] Parameter Unused not used" in log.read_text()


@pytest.fixture
def rule_breaker_stack(tmp_path: Path) -> Path:
    """The rule breaker fixture's type, in a one-resource stack whose CREATE answers a null value (a MUST violation)."""
    shutil.copytree(FIXTURES / "rulebreaker", tmp_path / "rulebreaker", ignore=LOCAL_STATE)
    (tmp_path / "breaks.yaml").write_text(
        "Resources:\n  Breaker:\n    Type: Cfnrun::Test::RuleBreaker\n    Properties: {Name: one, Breaks: no-null-values}\n",
        encoding="utf-8",
    )
    return tmp_path


def test_contract_warn_reports_the_violation_and_passes(rule_breaker_stack: Path) -> None:
    # --keep: this handler's READ never answers NotFound, which is not what is tested here
    completed = cfnrun("stack", "test", "breaks.yaml", "--provider", "rulebreaker", "--contract", "warn", "--keep", "--json", cwd=rule_breaker_stack)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    result = records(completed)[-1]
    assert result["failingViolations"] == 0
    assert {(v["logicalResourceId"], v["action"], v["severity"]) for v in result["violations"]} == {("Breaker", "CREATE", "error")}


def test_contract_strict_fails_on_a_must_violation(rule_breaker_stack: Path) -> None:
    completed = cfnrun("stack", "test", "breaks.yaml", "--provider", "rulebreaker", "--keep", cwd=rule_breaker_stack)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "Breaker                Cfnrun::Test::RuleBreaker    CREATE_FAILED" in completed.stdout
    assert "contract   2 MUST, 0 SHOULD violation(s)" in completed.stdout  # model-shape and no-null-values
    assert "✗ Breaker (Cfnrun::Test::RuleBreaker) CREATE: [no-null-values]" in completed.stdout
    assert "FAILED: stack test breaks" in completed.stdout


def test_ctrl_c_while_a_handler_stabilizes_stops_serve_and_every_worker(sample: Callable[[str], Path], tmp_path: Path) -> None:
    sample("cluster")
    (tmp_path / "slow.yaml").write_text(
        "Resources:\n  Cluster:\n    Type: Cfnrun::Sample::Cluster\n    Properties: {Name: slow, NodeCount: 1}\n", encoding="utf-8"
    )
    # the real clock: the cluster answers IN_PROGRESS with CallbackDelaySeconds, so the create is still running when Ctrl-C comes
    process = subprocess.Popen(
        [sys.executable, "-m", "cfnrun", "stack", "test", "slow.yaml", "--provider", "cluster", "--json"],
        cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "NO_COLOR": "1"},
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            record = json.loads(line)
            if record.get("logicalResourceId") == "Cluster" and record.get("resourceStatus") == "CREATE_IN_PROGRESS":
                break
        assert sandboxes_of(process.pid), "the cluster's workers run"
        process.send_signal(signal.SIGINT)  # what Ctrl-C sends
        assert process.wait(timeout=60) == 130
    finally:
        process.kill()
        process.wait()
    assert process.stderr is not None and "interrupted" in process.stderr.read()
    assert sandboxes_of(process.pid) == []


def test_each_resource_is_confirmed_gone_right_after_its_own_delete(sample: Callable[[str], Path], tmp_path: Path) -> None:
    """An item cannot be read once its table is gone: the note standing for an item answers a service error (not NotFound)
    when the note it belongs to is gone, so it must be asked right after its own DELETE, while its "table" still exists."""
    note = sample("note")
    handlers = next((note / "src").glob("*/handlers.py"))
    text = handlers.read_text(encoding="utf-8")
    read = "return _success(_public(_existing(request.desiredResourceState)))"
    assert text.count(read) == 1
    handlers.write_text(text.replace(read, (
        "parent = request.desiredResourceState.Content if request.desiredResourceState else None\n"
        "    if parent and parent.startswith('note-') and parent not in store.load()['notes']:\n"
        "        return ProgressEvent.failed(HandlerErrorCode.GeneralServiceException, f'the note {parent} it is in is gone')\n"
        "    " + read
    )), encoding="utf-8")
    (tmp_path / "table.yaml").write_text(
        "Resources:\n"
        "  Table:\n    Type: Cfnrun::Sample::Note\n    Properties: {Title: table}\n"
        "  Item:\n    Type: Cfnrun::Sample::Note\n    Properties: {Title: item, Content: !Ref Table}\n",
        encoding="utf-8",
    )
    completed = cfnrun("stack", "test", "table.yaml", "--provider", "note", "--virtual-clock", "--json", cwd=tmp_path)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    result = records(completed)[-1]
    assert result["leftovers"] == [] and result["checkedGone"] == 2


def test_no_worker_starts_for_a_test_entrypoint_which_no_stack_calls_while_serve_still_warms_it(
    sample: Callable[[str], Path], tmp_path: Path, serve: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    note = sample("note")
    marker = tmp_path / "test-entrypoint-imported"
    (note / "src" / "cfnrun_sample_note" / "entry_marker.py").write_text(
        "import os\n\nwith open(os.environ['ENTRY_MARKER'], 'w') as out:  # a worker of TestEntrypoint loads this\n"
        "    out.write(os.environ['_HANDLER'])\n\nfrom .handlers import test_entrypoint  # noqa: E402,F401\n",
        encoding="utf-8",
    )
    template = note / "template.yml"
    template.write_text(
        template.read_text(encoding="utf-8").replace("handlers.test_entrypoint", "entry_marker.test_entrypoint"), encoding="utf-8"
    )
    monkeypatch.setenv("ENTRY_MARKER", str(marker))
    (tmp_path / "one.yaml").write_text("Resources:\n  Note:\n    Type: Cfnrun::Sample::Note\n    Properties: {Title: t}\n", encoding="utf-8")

    completed = cfnrun("stack", "test", "one.yaml", "--provider", "note", "--virtual-clock", cwd=tmp_path)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert not marker.exists()  # stacks call TypeFunction only

    server = serve(note)
    server.has_printed(r"TestEntrypoint\s.*warm in")
    assert marker.read_text(encoding="utf-8") == "cfnrun_sample_note.entry_marker.test_entrypoint"


def test_a_template_with_cfnruns_own_types_and_a_key_pair_parameter_passes_on_the_embedded_moto(tmp_path: Path) -> None:
    """Its moto starts empty and nothing can be made on it first: an AWS-specific parameter is not looked up there; a
    wait condition handle (cfnrun's own type, on no endpoint) is gone with the stack, not a leftover."""
    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    (tmp_path / "own.yaml").write_text(
        "Parameters:\n  KeyName: {Type: 'AWS::EC2::KeyPair::KeyName'}\n"
        "Resources:\n  Handle: {Type: AWS::CloudFormation::WaitConditionHandle}\n"
        "  Note:\n    Type: Cfnrun::Sample::Note\n    Properties: {Title: !Ref KeyName}\n",
        encoding="utf-8",
    )
    completed = cfnrun("stack", "test", "own.yaml", "--provider", "note", "--moto", "--virtual-clock", "--json",
                       "--parameters", "KeyName=deployer", cwd=tmp_path)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    result = records(completed)[-1]
    assert result["leftovers"] == [] and result["unchecked"] == [], result
    assert result["checkedGone"] == 2, result


REST_API = """\
Resources:
  Api:
    Type: AWS::ApiGateway::RestApi
    Properties: {Name: items}
  Items:
    Type: AWS::ApiGateway::Resource
    Properties: {RestApiId: !Ref Api, ParentId: !GetAtt Api.RootResourceId, PathPart: items}
  List:
    Type: AWS::ApiGateway::Method
    Properties: {RestApiId: !Ref Api, ResourceId: !Ref Items, HttpMethod: GET, AuthorizationType: NONE, Integration: {Type: HTTP_PROXY, IntegrationHttpMethod: GET, Uri: "https://example.com/items"}}
  Deployment:
    Type: AWS::ApiGateway::Deployment
    DependsOn: List
    Properties: {RestApiId: !Ref Api, StageName: prod}
"""


def test_a_deleted_rest_api_deployment_is_confirmed_gone(sample: Callable[[str], Path], tmp_path: Path) -> None:
    # moto's GetDeployment of a deployment it deleted breaks (KeyError) instead of answering NotFound: the check after the
    # delete called the deployment a leftover, and the stack test failed
    sample("note")
    (tmp_path / "api.yaml").write_text(REST_API, encoding="utf-8")
    completed = cfnrun("stack", "test", "api.yaml", "--provider", "note", "--moto", "--json", cwd=tmp_path)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    result = records(completed)[-1]
    assert (result["leftovers"], result["checkedGone"], result["resources"]) == ([], 4, 4), result
