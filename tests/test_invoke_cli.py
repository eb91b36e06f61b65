"""``cfnrun invoke`` as a user runs it: the real CLI, real workers, the bundled samples."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, Optional

import pytest

from conftest import LIB_PROVIDER, MISBEHAVING, cfnrun, events, result_of

LIB = ["--schema", str(LIB_PROVIDER / "thing.json"), "--code-dir", str(LIB_PROVIDER), "--no-credentials"]
LIB_CREATE = str(LIB_PROVIDER / "create.json")
PLAIN = ["--handler", "behaviours.handler", "--schema", str(MISBEHAVING / "cfnrun-test-misbehaving.json"), "--code-dir", str(MISBEHAVING)]


def write_request(tmp_path: Path, desired: dict, name: str = "request.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"desiredResourceState": desired, "previousResourceState": None}))
    return str(path)


def test_stabilizing_create_replays_in_progress_until_success(sample: Callable[[str], Path]) -> None:
    project = sample("cluster")
    run = cfnrun("invoke", "CREATE", "requests/create.json", "--virtual-clock", cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert [line.split()[:2] for line in lines if line.startswith("#")] == [
        ["#1", "IN_PROGRESS"],
        ["#2", "IN_PROGRESS"],
        ["#3", "SUCCESS"],
    ]
    assert "callback after 2 s (virtual, not waited)" in run.stdout  # real waits: tests/unit/test_operation_replay.py
    assert "is ACTIVE" in run.stdout  # the handler's own log line, under its invocation
    assert "SUCCESS CREATE after 3 invocation(s)" in run.stdout
    assert '"Status": "ACTIVE"' in run.stdout


def test_full_lifecycle_of_the_stabilizing_sample(sample: Callable[[str], Path], tmp_path: Path) -> None:
    project = sample("cluster")
    created = result_of(cfnrun("invoke", "CREATE", "requests/create.json", "--json", "--virtual-clock", cwd=project))
    assert created["status"] == "SUCCESS" and created["invocations"] == 3
    model = created["resourceModel"]
    identifier = {"ClusterId": model["ClusterId"]}

    read = result_of(cfnrun("invoke", "READ", write_request(tmp_path, identifier), "--json", cwd=project))
    assert read["resourceModel"] == model

    resized = {**model, "NodeCount": 5}
    updated = result_of(cfnrun("invoke", "UPDATE", write_request(tmp_path, resized), "--json", "--virtual-clock", cwd=project))
    assert updated["status"] == "SUCCESS" and updated["resourceModel"]["NodeCount"] == 5

    listed = result_of(cfnrun("invoke", "LIST", "--json", cwd=project))
    assert [m["ClusterId"] for m in listed["resourceModels"]] == [model["ClusterId"]]

    deleted = result_of(cfnrun("invoke", "DELETE", write_request(tmp_path, identifier), "--json", "--virtual-clock", cwd=project))
    assert deleted["status"] == "SUCCESS" and "resourceModel" not in deleted

    gone = cfnrun("invoke", "READ", write_request(tmp_path, identifier), "--json", cwd=project)
    assert gone.returncode == 1
    assert result_of(gone)["errorCode"] == "NotFound"


def test_json_output_is_one_event_per_line(sample: Callable[[str], Path]) -> None:
    run = cfnrun("invoke", "CREATE", "requests/create.json", "--json", "--virtual-clock", cwd=sample("cluster"))
    kinds = [e["event"] for e in events(run)]
    assert kinds == ["start", "invocation", "wait", "invocation", "wait", "invocation", "result"]
    start = events(run)[0]
    assert start["invocationBudget"]["seconds"] == 60 and start["operationBudget"]["seconds"] == 600
    second = events(run)[3]
    assert second["status"] == "IN_PROGRESS"
    assert second["progressEvent"]["callbackContext"] == {"stage": "create", "checksLeft": 1}
    assert "still CREATING" in second["logs"]


def test_sam_tests_event_goes_to_the_test_entrypoint(sample: Callable[[str], Path]) -> None:
    run = cfnrun("invoke", "CREATE", "sam-tests/create.json", "--json", "--virtual-clock", cwd=sample("cluster"))
    assert run.returncode == 0, run.stdout + run.stderr
    assert events(run)[0]["function"] == "TestEntrypoint"
    assert result_of(run)["resourceModel"]["Name"] == "from-sam-tests"


def test_replay_carries_the_returned_model_and_callback_context() -> None:
    run = cfnrun("invoke", "CREATE", LIB_CREATE, "--handler", "lib_behaviours.echo", *LIB, "--json")
    assert result_of(run)["resourceModel"]["Name"] == "widget+1+2+3"
    logs = [e["logs"] for e in events(run) if e["event"] == "invocation"]
    assert logs == [
        "step 1 got Name=widget Secret=set\n",
        "step 2 got Name=widget+1 Secret=set\n",
        "step 3 got Name=widget+1+2 Secret=set\n",
    ]


def test_max_reinvoke_stops_early_and_exits_non_zero() -> None:
    run = cfnrun("invoke", "CREATE", LIB_CREATE, "--handler", "lib_behaviours.echo", *LIB, "--json", "--max-reinvoke", "1")
    assert run.returncode == 1
    result = result_of(run)
    assert (result["status"], result["reason"], result["invocations"]) == ("IN_PROGRESS", "reinvoke-limit", 2)


def test_invocation_over_budget_is_cut_and_fails_the_operation() -> None:
    run = cfnrun("invoke", "CREATE", LIB_CREATE, "--handler", "lib_behaviours.slow", *LIB, "--invocation-timeout", "0.5")
    assert run.returncode == 1
    assert "TIMED OUT" in run.stdout and "starting slow work" in run.stdout
    assert "invocation 1 did not return a ProgressEvent within --invocation-timeout (0.5 s)" in run.stdout


def test_time_scale_shrinks_the_contract_budget() -> None:
    run = cfnrun("invoke", "READ", LIB_CREATE, "--handler", "lib_behaviours.slow", *LIB, "--time-scale", "0.01", "--json")
    result = result_of(run)
    assert result["reason"] == "invocation-budget-exceeded"
    assert "30 s response budget for READ scaled by --time-scale 0.01 (0.3 s)" in result["message"]


def test_default_budgets_are_the_contracts() -> None:
    create = events(cfnrun("invoke", "CREATE", LIB_CREATE, "--handler", "lib_behaviours.leaky", *LIB, "--json"))[0]
    read = events(cfnrun("invoke", "READ", LIB_CREATE, "--handler", "lib_behaviours.leaky", *LIB, "--json"))[0]
    assert create["invocationBudget"]["seconds"] == 60 and read["invocationBudget"]["seconds"] == 30
    assert create["operationBudget"]["seconds"] == 120 * 60


def test_virtual_clock_runs_a_two_hour_stabilization_into_its_deadline() -> None:
    run = cfnrun("invoke", "CREATE", LIB_CREATE, "--handler", "lib_behaviours.forever", *LIB, "--virtual-clock", "--json")
    assert run.returncode == 1
    result = result_of(run)
    assert result["reason"] == "operation-timeout"
    assert result["elapsedSeconds"] >= 7200
    assert result["invocations"] == 12  # one call every 600 s until 120 minutes are used up
    assert "handlers.create.timeoutInMinutes = 120" in result["message"]


def test_operation_timeout_override() -> None:
    run = cfnrun(
        "invoke", "CREATE", LIB_CREATE, "--handler", "lib_behaviours.forever", *LIB, "--virtual-clock", "--operation-timeout", "1500", "--json"
    )
    result = result_of(run)
    assert result["reason"] == "operation-timeout" and result["invocations"] == 3


def test_list_pagination_that_repeats_is_stopped_with_an_explanation() -> None:
    run = cfnrun("invoke", "LIST", "--handler", "lib_behaviours.pager", *LIB, "--json")
    assert run.returncode == 1
    result = result_of(run)
    assert result["reason"] == "list-pagination-loop"
    assert "does not pass the request's nextToken" in result["hint"]


def test_unserializable_model_is_explained() -> None:
    run = cfnrun("invoke", "CREATE", LIB_CREATE, "--handler", "lib_behaviours.set_model", *LIB)
    assert run.returncode == 1
    assert "resourceModel.Labels (a set)" in run.stdout
    assert "hint: FAILED InternalFailure with an empty message" in run.stdout


def test_handler_exception_shows_its_traceback_and_the_hint() -> None:
    run = cfnrun("invoke", "CREATE", LIB_CREATE, "--handler", "lib_behaviours.raiser", *LIB)
    assert run.returncode == 1
    assert "KeyError: 'missing-configuration'" in run.stdout
    assert "lib_behaviours.py" in run.stdout
    assert "in checked" not in run.stdout and "runtime/worker/" not in run.stdout  # cfnrun's own wrapper frame is left out
    assert "hint: FAILED InternalFailure with an empty message" in run.stdout


@pytest.mark.parametrize("as_json", [False, True])
def test_write_only_values_are_never_printed(as_json: bool) -> None:
    run = cfnrun("invoke", "CREATE", LIB_CREATE, "--handler", "lib_behaviours.leaky", *LIB, *(["--json"] if as_json else []))
    assert run.returncode == 0
    assert "hunter2-secret" not in run.stdout + run.stderr
    assert "*** writeOnly ***" in run.stdout


def test_local_credentials_reach_the_handler_but_are_never_printed(sample: Callable[[str], Path]) -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    env = {"AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE", "AWS_SECRET_ACCESS_KEY": secret}
    run = cfnrun("invoke", "CREATE", "requests/create.json", "--json", cwd=sample("note"), env=env)
    assert run.returncode == 0
    assert secret not in run.stdout + run.stderr
    assert "AKIAIOSFODNN7EXAMPLE" not in run.stdout + run.stderr


@pytest.mark.parametrize(
    "do, reason, shown",
    [
        ("segfault", "worker-died", "killed by SIGSEGV"),
        ("exit", "worker-died", "exited with status 3"),
        ("raise", "function-error", "ValueError: the handler broke on purpose"),
        ("string", "invalid-progress-event", "not a ProgressEvent"),
    ],
)
def test_misbehaving_handler_fails_the_operation_clearly(tmp_path: Path, do: str, reason: str, shown: str) -> None:
    run = cfnrun("invoke", "CREATE", write_request(tmp_path, {"do": do}), *PLAIN, "--no-credentials")
    assert run.returncode == 1, run.stdout + run.stderr
    assert shown in run.stdout
    as_json = cfnrun("invoke", "CREATE", write_request(tmp_path, {"do": do}), *PLAIN, "--no-credentials", "--json")
    assert result_of(as_json)["reason"] == reason


def test_python_option_runs_the_provider_in_another_interpreter(tmp_path: Path) -> None:
    env = tmp_path / "provider-env"  # a bare virtualenv: no cfnrun, no pip, nothing installed
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    request = write_request(tmp_path, {"do": "interpreter"})
    run = cfnrun("invoke", "CREATE", request, *PLAIN, "--no-credentials", "--json", "--python", str(env / "bin" / "python"))
    assert result_of(run)["status"] == "SUCCESS", run.stdout + run.stderr
    [invocation] = [e for e in events(run) if e["event"] == "invocation"]
    assert invocation["logs"] == f"prefix {env}\n"


def test_syntax_error_in_the_provider_is_a_project_error_naming_file_and_line(sample: Callable[[str], Path]) -> None:
    project = sample("note")
    handlers = project / "src" / "cfnrun_sample_note" / "handlers.py"
    lines = handlers.read_text().splitlines()
    lines[40] = "def broken(:"
    handlers.write_text("\n".join(lines) + "\n")
    run = cfnrun("invoke", "CREATE", "requests/create.json", cwd=project)
    assert run.returncode == 2
    assert "Runtime.UserCodeSyntaxError" in run.stderr
    assert "src/cfnrun_sample_note/handlers.py:41" in run.stderr


@pytest.mark.parametrize(
    "breakage, expected",
    [
        (lambda p: (p / ".rpdk-config").unlink(), ".rpdk-config: not found"),
        (lambda p: (p / ".rpdk-config").write_text("{oops"), ".rpdk-config: not valid JSON"),
        (lambda p: (p / "cfnrun-sample-note.json").write_text('{"typeName": 1}'), "cfnrun-sample-note.json: the schema has no typeName"),
        (lambda p: (p / "cfnrun-sample-note.json").unlink(), "cfnrun-sample-note.json: resource schema file not found"),
        (lambda p: (p / "template.yml").write_text("Resources: [\n"), "template.yml: not valid YAML at line 2"),
    ],
)
def test_broken_project_files_are_named(sample: Callable[[str], Path], breakage: Callable[[Path], None], expected: str) -> None:
    project = sample("note")
    breakage(project)
    run = cfnrun("invoke", "CREATE", "requests/create.json", cwd=project)
    assert run.returncode == 2
    assert expected in run.stderr
    assert "Traceback" not in run.stderr


def test_usage_errors_exit_2(sample: Callable[[str], Path], tmp_path: Path) -> None:
    project = sample("note")
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"desiredResourceState": ')
    missing = cfnrun("invoke", "CREATE", "nope.json", cwd=project)
    malformed = cfnrun("invoke", "CREATE", str(bad_json), cwd=project)
    unknown_function = cfnrun("invoke", "CREATE", "requests/create.json", "--function", "Nope", cwd=project)
    bad_action = cfnrun("invoke", "EXPLODE", cwd=project)
    assert [r.returncode for r in (missing, malformed, unknown_function, bad_action)] == [2, 2, 2, 2]
    assert "nope.json: request file not found" in missing.stderr
    assert "not valid JSON: Expecting value at line 1 column 26" in malformed.stderr
    assert "unknown function 'Nope' (this project has: TypeFunction, TestEntrypoint)" in unknown_function.stderr


ENV_AND_CONTEXT = ["--handler", "lib_behaviours.env_and_context", *LIB, "--json", "--contract", "off"]


def test_region_flag_sets_the_functions_region() -> None:
    run = cfnrun("invoke", "CREATE", LIB_CREATE, *ENV_AND_CONTEXT, "--region", "eu-central-1", env={"AWS_REGION": "us-west-2"})
    seen = result_of(run)["resourceModel"]["Name"]
    assert seen == "AWS_REGION=eu-central-1,AWS_DEFAULT_REGION=eu-central-1,AWS_LAMBDA_FUNCTION_NAME=TypeFunction"


def test_profile_flag_picks_the_profiles_credentials_and_region(tmp_path: Path) -> None:
    secret = "profile-secret-never-printed"
    (tmp_path / "config").write_text("[profile dev]\nregion = ap-south-1\n")
    (tmp_path / "credentials").write_text(f"[dev]\naws_access_key_id = AKIAPROFILEDEV\naws_secret_access_key = {secret}\n")
    files = {"AWS_CONFIG_FILE": str(tmp_path / "config"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials")}
    unset = ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE")
    env: Dict[str, Optional[str]] = {**files, **{name: None for name in unset}}
    args = ["invoke", "CREATE", LIB_CREATE, "--handler", "lib_behaviours.env_and_context", "--schema", str(LIB_PROVIDER / "thing.json"),
            "--code-dir", str(LIB_PROVIDER), "--json", "--contract", "off"]
    with_profile = cfnrun(*args, "--profile", "dev", env=env)
    assert result_of(with_profile)["resourceModel"]["Name"].startswith("AWS_REGION=ap-south-1,")
    assert "no AWS credentials found locally" not in with_profile.stderr  # the profile's keys were found
    assert secret not in with_profile.stdout + with_profile.stderr
    without = cfnrun(*args, env=env)
    assert "no AWS credentials found locally" in without.stderr
    unknown = cfnrun(*args, "--profile", "nope", env=env)
    assert unknown.returncode == 2 and "--profile nope: no such profile" in unknown.stderr and "Traceback" not in unknown.stderr


def test_entrypoint_flag_overrides_the_request_files_shape(sample: Callable[[str], Path]) -> None:
    project = sample("cluster")
    as_test = cfnrun("invoke", "CREATE", "requests/create.json", "--entrypoint", "test", "--json", "--virtual-clock", cwd=project)
    as_type = cfnrun("invoke", "CREATE", "sam-tests/create.json", "--entrypoint", "type", "--json", "--virtual-clock", cwd=project)
    assert (events(as_test)[0]["function"], events(as_test)[0]["entrypoint"]) == ("TestEntrypoint", "test")
    assert (events(as_type)[0]["function"], events(as_type)[0]["entrypoint"]) == ("TypeFunction", "type")
    assert result_of(as_type)["resourceModel"]["Name"] == "from-sam-tests"


LOGGING_HANDLER = """\
import logging

def handler(event, context):
    logging.getLogger("provider").debug("a debug detail")
    logging.getLogger("provider").info("an info line")
    return {"status": "SUCCESS", "resourceModel": {"Id": "thing-1"}}
"""


def test_log_level_flag_sets_the_handlers_root_logger(tmp_path: Path) -> None:
    (tmp_path / "logging_handler.py").write_text(LOGGING_HANDLER)
    args = ["invoke", "CREATE", "--handler", "logging_handler.handler", "--schema", str(MISBEHAVING / "cfnrun-test-misbehaving.json"),
            "--code-dir", str(tmp_path), "--no-credentials", "--json", "--contract", "off"]
    def output(*extra: str) -> str:
        run = cfnrun(*args, *extra)
        assert run.returncode == 0, run.stdout + run.stderr
        return "".join(e["logs"] for e in events(run) if e["event"] == "invocation") + run.stderr  # in-process: stderr

    for mode in ([], ["--in-process"]):
        default, debug = output(*mode), output(*mode, "--log-level", "debug")
        assert "an info line" in default and "a debug detail" not in default, mode
        assert "[DEBUG]" in debug and "a debug detail" in debug, mode
