"""Recorded operations (issue #15): history from invoke and serve, masked, bounded; show; replay."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, List

import pytest

from conftest import ServerProcess, cfnrun

ON = {"CFNRUN_HISTORY": "on"}
PASSWORD = "pw-marker-7f3a9c2e"  # the note sample's writeOnly AccessPassword
SECRET_KEY = "secret-marker-51d0b6"


def history(project: Path, *args: str) -> List[Dict[str, object]]:
    run = cfnrun("history", "--json", *args, cwd=project, env=ON)
    assert run.returncode == 0, run.stdout + run.stderr
    return [json.loads(line) for line in run.stdout.splitlines()]


def note_request(project: Path, password: str = PASSWORD, title: str = "Quarterly TPS report") -> str:
    path = project / "requests" / "secret.json"
    desired = {"Title": title, "Folder": "reports", "Priority": 2, "AccessPassword": password}
    path.write_text(json.dumps({"desiredResourceState": desired}))
    return str(path)


def test_invoke_is_recorded_with_writeonly_values_and_credentials_masked(sample: Callable[[str], Path]) -> None:
    project = sample("note")
    credentials = {"AWS_ACCESS_KEY_ID": "AKIDMARKER0001", "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_SESSION_TOKEN": "token-marker-99"}
    run = cfnrun("invoke", "CREATE", note_request(project), cwd=project, env={**ON, **credentials})
    assert run.returncode == 0, run.stdout + run.stderr

    [operation] = history(project)
    assert operation["action"] == "CREATE" and operation["status"] == "SUCCESS" and operation["source"] == "invoke"
    assert operation["invocations"] == 1 and operation["cfnrunVersion"]
    database = b"".join(path.read_bytes() for path in (project / ".cfnrun").iterdir())  # with any -wal file
    assert b"Quarterly TPS report" in database  # the request and the model are there ...
    for secret in (PASSWORD, SECRET_KEY, "AKIDMARKER0001", "token-marker-99"):
        assert secret.encode() not in database  # ... their secrets are not
    assert (project / ".cfnrun" / ".gitignore").read_text().strip().endswith("*")


def test_recording_off_writes_nothing(sample: Callable[[str], Path]) -> None:
    project = sample("note")
    run = cfnrun("invoke", "LIST", cwd=project, env={"CFNRUN_HISTORY": "off"})
    assert run.returncode == 0, run.stdout + run.stderr
    assert not (project / ".cfnrun").exists()
    listed = cfnrun("history", cwd=project, env=ON)
    assert listed.returncode == 2 and "no history yet" in listed.stderr


def test_history_keeps_the_newest_operations_up_to_the_limit(sample: Callable[[str], Path]) -> None:
    project = sample("note")
    for _ in range(3):
        assert cfnrun("invoke", "LIST", cwd=project, env={**ON, "CFNRUN_HISTORY_LIMIT": "2"}).returncode == 0
    assert [op["id"] for op in history(project)] == [3, 2]


def test_history_show_prints_the_timeline_invoke_printed(sample: Callable[[str], Path]) -> None:
    project = sample("cluster")
    run = cfnrun("invoke", "CREATE", "requests/create.json", "--virtual-clock", cwd=project, env=ON)
    assert run.returncode == 0, run.stdout + run.stderr
    [operation] = history(project)
    assert operation["invocations"] == 3

    shown = cfnrun("history", "show", str(operation["id"]), cwd=project, env=ON)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(run.stdout)  # the same timeline, line for line, then where it comes from
    assert "recorded" in shown.stdout[len(run.stdout):]


def test_history_show_of_an_unknown_id_is_a_usage_error(sample: Callable[[str], Path]) -> None:
    project = sample("note")
    assert cfnrun("invoke", "LIST", cwd=project, env=ON).returncode == 0
    shown = cfnrun("history", "show", "42", cwd=project, env=ON)
    assert shown.returncode == 2 and "no operation 42" in shown.stderr


def test_serve_records_each_operation_once_grouping_its_callbacks(
    sample: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("rpdk.core")
    project = sample("cluster")
    monkeypatch.setenv("CFNRUN_HISTORY", "on")
    server = ServerProcess(project, "--sts-standin")
    try:
        env = {**os.environ, "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_SESSION_TOKEN": "example"}
        completed = subprocess.run(
            [sys.executable, "-m", "cfnrun.app.cfn_offline", "--sts-endpoint", server.url,
             "invoke", "--endpoint", server.url, "--region", "us-east-1", "resource", "CREATE", "requests/create.json"],
            cwd=project, env=env, capture_output=True, text=True, timeout=120,
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr
        server.wait_for_line(r"TypeFunction CREATE → SUCCESS")
    finally:
        server.stop_cleanly()
    [operation] = history(project)
    assert operation["source"] == "serve" and operation["action"] == "CREATE"
    assert operation["status"] == "SUCCESS" and operation["invocations"] == 3
    assert sorted(path.name for path in (project / ".cfnrun").iterdir()) == [".gitignore", "history.sqlite3"]  # closed cleanly
    assert SECRET_KEY.encode() not in (project / ".cfnrun" / "history.sqlite3").read_bytes()
    shown = cfnrun("history", "show", str(operation["id"]), cwd=project, env=ON)
    assert shown.returncode == 0, shown.stderr
    assert [line.split()[:2] for line in shown.stdout.splitlines() if line.startswith("#")] == [
        ["#1", "IN_PROGRESS"], ["#2", "IN_PROGRESS"], ["#3", "SUCCESS"]
    ]
    assert "SUCCESS CREATE after 3 invocation(s)" in shown.stdout

    # serve's calls replay as one operation; the cluster now exists, so CREATE fails, and replay says so
    replayed = cfnrun("replay", str(operation["id"]), "--virtual-clock", cwd=project, env=ON)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "status: SUCCESS → FAILED" in replayed.stdout and "errorCode: None → AlreadyExists" in replayed.stdout
    shutil.rmtree(project / ".state")  # from scratch, CREATE does what it did
    replayed = cfnrun("replay", str(operation["id"]), "--virtual-clock", cwd=project, env=ON)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert f"same outcome as #{operation['id']}: SUCCESS" in replayed.stdout
    assert "violations are not compared" in replayed.stderr


def test_serve_records_a_hooks_calls_and_they_replay(sample: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    project = sample("hook")
    printed = cfnrun("invoke", "preCreate", "requests/create-unencrypted.json", "--print-request", cwd=project)
    assert printed.returncode == 0, printed.stderr
    request = json.loads(printed.stdout)
    request["requestData"]["callerCredentials"] = json.dumps(
        {"accessKeyId": "AKIAEXAMPLE", "secretAccessKey": SECRET_KEY, "sessionToken": "example"}
    )
    monkeypatch.setenv("CFNRUN_HISTORY", "on")
    server = ServerProcess(project)
    try:
        client = server.client()
        answer = json.loads(client.invoke(FunctionName="TypeFunction", Payload=json.dumps(request))["Payload"].read())
        assert answer["hookStatus"] == "IN_PROGRESS"  # the sample takes a callback before it decides
        request["requestContext"] = {"invocation": 2, "callbackContext": answer["callbackContext"]}
        answer = json.loads(client.invoke(FunctionName="TypeFunction", Payload=json.dumps(request))["Payload"].read())
        assert answer["hookStatus"] == "FAILED" and answer["errorCode"] == "NonCompliant"
        server.wait_for_line(r"TypeFunction CREATE_PRE_PROVISION → FAILED NonCompliant")
    finally:
        server.stop_cleanly()
    [operation] = history(project)
    assert operation["source"] == "serve" and operation["action"] == "CREATE_PRE_PROVISION"
    assert operation["status"] == "FAILED" and operation["errorCode"] == "NonCompliant" and operation["invocations"] == 2
    assert SECRET_KEY.encode() not in (project / ".cfnrun" / "history.sqlite3").read_bytes()
    shown = cfnrun("history", "show", str(operation["id"]), cwd=project, env=ON)
    assert shown.returncode == 0 and "FAILED CREATE_PRE_PROVISION after 2 invocation(s)" in shown.stdout, shown.stdout + shown.stderr
    # the recorded call replays against the same target, with the same outcome
    replayed = cfnrun("replay", str(operation["id"]), "--virtual-clock", cwd=project, env=ON)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert f"same outcome as #{operation['id']}: FAILED" in replayed.stdout and "UnsupportedTarget" not in replayed.stdout


def test_replay_matches_on_unchanged_code_and_reports_what_a_change_did(sample: Callable[[str], Path]) -> None:
    project = sample("note")
    assert cfnrun("invoke", "CREATE", note_request(project), cwd=project, env=ON).returncode == 0
    [recorded] = history(project)

    same = cfnrun("replay", str(recorded["id"]), cwd=project, env=ON)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "same outcome as #1: SUCCESS" in same.stdout  # a new NoteId and CreatedAt (readOnly) are not a change
    assert "writeOnly /properties/AccessPassword was not recorded" in same.stderr

    handlers = project / "src" / "cfnrun_sample_note" / "handlers.py"
    code = handlers.read_text()
    handlers.write_text(code.replace("        **_writable(model),\n", "        **_writable(model),\n        \"Priority\": 5,\n", 1))
    changed = cfnrun("replay", str(recorded["id"]), cwd=project, env=ON)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    report = changed.stdout.split("changed since #1:")[1]
    assert '-  "Priority": 2' in report and '+  "Priority": 5' in report and "resourceModel recorded (#1)" in report
    assert "violations: + [success-matches-request]" in report
    assert [op["id"] for op in history(project)] == [3, 2, 1]  # replays are recorded too


def test_replay_usage_errors_exit_2(sample: Callable[[str], Path]) -> None:
    project = sample("note")
    assert cfnrun("invoke", "LIST", cwd=project, env=ON).returncode == 0
    unknown = cfnrun("replay", "7", cwd=project, env=ON)
    assert unknown.returncode == 2 and "no operation 7" in unknown.stderr
    missing = cfnrun("replay", "1", "--request", "nowhere.json", cwd=project, env=ON)
    assert missing.returncode == 2 and "request file not found" in missing.stderr


def _processes_in(folder: Path) -> List[int]:
    """Processes whose working folder is ``folder``: a provider's workers run there."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and Path(os.readlink(entry / "cwd")).resolve() == folder.resolve():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


FAILING_TEST = '''
from pathlib import Path


def test_list_is_reported_with_its_timeline(cfnrun):
    note = cfnrun.provider(Path(__file__).resolve().parents[1], virtual_clock=True)
    listed = note.invoke("LIST")
    assert listed.status == "SUCCESS" and listed.models == [] and listed.invocations == 1
    assert listed.status == "FAILED", "fails on purpose: the report shows the timeline"
'''


def test_pytest_plugin_runs_the_samples_tests_in_a_separate_pytest(sample: Callable[[str], Path]) -> None:
    project = sample("note")
    (project / "tests" / "test_failing.py").write_text(FAILING_TEST)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=project, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 1, run.stdout + run.stderr  # the sample's example tests pass; the one above fails
    assert "2 passed" in run.stdout and "1 failed" in run.stdout, run.stdout
    report = run.stdout.split("cfnrun operations")[1]
    assert "LIST Cfnrun::Sample::Note → TypeFunction" in report and "SUCCESS LIST after 1 invocation(s)" in report
    assert _processes_in(project) == []  # the session's warm workers stopped with it


def test_a_writeonly_value_the_handler_logs_or_keeps_in_its_context_is_masked_too(tmp_path: Path) -> None:
    from cfnrun.history.masking import Masker
    from cfnrun.history.recorder import OperationRecorder
    from cfnrun.history.store import HistoryStore
    from cfnrun.events.operation import InvocationCompleted, OperationCompleted, OperationResult
    from cfnrun.model.endings import EndReason
    from cfnrun.model.protocol import Action, OperationStatus, ProgressEvent
    from cfnrun.model.schema import ResourceSchema
    from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind

    schema = ResourceSchema.load(Path(__file__).resolve().parents[1] / "samples" / "note" / "cfnrun-sample-note.json")
    masker = Masker(schema)
    masker.learn([{"Title": "t", "AccessPassword": PASSWORD}], [{"accessKeyId": "AKIDMARKER0002", "secretAccessKey": SECRET_KEY}])
    store = HistoryStore(tmp_path)
    recorder = OperationRecorder(store, masker, {"typeName": schema.type_name, "note": f"said {PASSWORD}"}, None)
    answer = ProgressEvent.model_validate(
        {"status": "IN_PROGRESS", "callbackContext": {"pw": PASSWORD}, "resourceModel": {"Title": "t", "AccessPassword": PASSWORD}}
    )
    logs = f"logging in with {PASSWORD} and {SECRET_KEY}\n"
    recorder(InvocationCompleted(1, InvocationOutcome(OutcomeKind.RETURNED, "r1", 1.0, logs=logs), answer, None, 0.1))
    recorder(OperationCompleted(OperationResult(Action.CREATE, OperationStatus.SUCCESS, EndReason.HANDLER, "", 1, 0.1, resource_model={"Title": "t"})))

    assert recorder.recorded_id == 1
    database = b"".join(path.read_bytes() for path in (tmp_path / ".cfnrun").iterdir())
    assert b"logging in with" in database
    assert PASSWORD.encode() not in database and SECRET_KEY.encode() not in database
    [invocation] = [record for record in store.events(1) if record["event"] == "invocation"]
    assert invocation["progressEvent"]["resourceModel"]["AccessPassword"] == "*** writeOnly ***"
    assert invocation["logs"] == "logging in with *** masked *** and *** masked ***\n"
