"""invoke --lambda-endpoint: the same operation loop against a function behind any Lambda Invoke API (issue #11).

The endpoint here is a separately started ``cfnrun serve``, as a user would run one (or sam local).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable

from conftest import MISBEHAVING, ServerProcess, cfnrun, events, result_of

STEPS_HANDLER = '''
def handler(event, context):
    callback = event.get("callbackContext") or {}
    step = callback.get("step", 0) + 1
    print(f"step {step} of {event['requestData']['resourceProperties']['Steps']}")
    if step < event["requestData"]["resourceProperties"]["Steps"]:
        return {"status": "IN_PROGRESS", "callbackDelaySeconds": 5, "callbackContext": {"step": step},
                "resourceModel": event["requestData"]["resourceProperties"]}
    return {"status": "SUCCESS", "resourceModel": {**event["requestData"]["resourceProperties"], "Id": "steps-1"}}
'''
STEPS_SCHEMA = {
    "typeName": "Cfnrun::Test::Steps",
    "description": "IN_PROGRESS until the last step",
    "properties": {"Id": {"type": "string"}, "Steps": {"type": "integer"}},
    "additionalProperties": False,
    "primaryIdentifier": ["/properties/Id"],
    "readOnlyProperties": ["/properties/Id"],
    "handlers": {"create": {"permissions": []}},
}
STEPS_TEMPLATE = """Resources:
  TypeFunction:
    Type: AWS::Serverless::Function
    Properties:
      Handler: steps.handler
      Runtime: python3.9
      FunctionName: steps-function
      Timeout: 30
"""


def steps_project(folder: Path) -> Path:
    folder.mkdir()
    (folder / "steps.py").write_text(STEPS_HANDLER)
    (folder / "cfnrun-test-steps.json").write_text(json.dumps(STEPS_SCHEMA))
    (folder / "template.yml").write_text(STEPS_TEMPLATE)
    config = {"artifact_type": "RESOURCE", "typeName": "Cfnrun::Test::Steps", "language": "python39", "runtime": "python3.9",
              "entrypoint": "steps.handler"}
    (folder / ".rpdk-config").write_text(json.dumps(config))
    (folder / "create.json").write_text(json.dumps({"desiredResourceState": {"Steps": 3}}))
    return folder


def test_invoke_replays_in_progress_against_a_separately_started_serve(tmp_path: Path, serve: Callable[..., ServerProcess]) -> None:
    project = steps_project(tmp_path / "steps")
    server = serve(project, "--no-reload", "--workers", "1")
    run = cfnrun("invoke", "CREATE", "create.json", "--lambda-endpoint", server.url, "--virtual-clock", "--json", cwd=project)
    result = result_of(run)
    assert (result["status"], result["invocations"]) == ("SUCCESS", 3), run.stdout + run.stderr
    assert result["resourceModel"] == {"Steps": 3, "Id": "steps-1"}
    calls = [e for e in events(run) if e["event"] == "invocation"]
    assert [c["logs"].strip() for c in calls] == ["step 1 of 3", "step 2 of 3", "step 3 of 3"]  # from X-Amz-Log-Result
    served = server.wait_for_line(r"TypeFunction CREATE → SUCCESS")
    assert served and calls[-1]["requestId"][:8] in served  # the request id is the endpoint's
    assert [e["event"] for e in events(run)].count("wait") == 2

    recorded = {"CFNRUN_HISTORY": "on"}
    again = cfnrun("invoke", "CREATE", "create.json", "--lambda-endpoint", server.url, "--virtual-clock", cwd=project, env=recorded)
    assert again.returncode == 0, again.stdout + again.stderr
    newest = json.loads(cfnrun("history", "--json", cwd=project, env=recorded).stdout.splitlines()[0])
    replayed = cfnrun("replay", str(newest["id"]), cwd=project, env=recorded)
    assert f"same outcome as #{newest['id']}: SUCCESS" in replayed.stdout, replayed.stdout + replayed.stderr
    assert f"the calls go to steps-function on {server.url}" in replayed.stderr  # replayed at the endpoint, not locally


def test_the_note_sample_against_serve_with_contract_checks(sample: Callable[[str], Path], serve: Callable[..., ServerProcess]) -> None:
    project = sample("note")
    server = serve(project, "--no-reload")
    run = cfnrun("invoke", "CREATE", "requests/create.json", "--lambda-endpoint", server.url, cwd=project)
    assert run.returncode == 0 and "SUCCESS CREATE after 1 invocation(s)" in run.stdout, run.stdout + run.stderr
    assert f"cfnrun: note: the calls go to TypeFunction on {server.url}" in run.stderr
    listed = cfnrun("invoke", "LIST", "--lambda-endpoint", server.url, "--function", "TypeFunction", "--json", cwd=project)
    assert result_of(listed)["status"] == "SUCCESS" and len(result_of(listed)["resourceModels"]) == 1


def _misbehaving(tmp_path: Path) -> Path:
    project = tmp_path / "misbehaving"
    shutil.copytree(MISBEHAVING, project)
    return project


def test_function_errors_crashes_and_timeouts_map_to_the_same_outcomes(tmp_path: Path, serve: Callable[..., ServerProcess]) -> None:
    project = _misbehaving(tmp_path)
    server = serve(project, "--no-reload", "--workers", "2")
    endpoint = ["--lambda-endpoint", server.url, "--contract", "off", "--json"]

    def run(do: str, *flags: str) -> dict:
        (project / "request.json").write_text(json.dumps({"desiredResourceState": {"do": do, "seconds": 5}}))
        completed = cfnrun("invoke", "CREATE", "request.json", *endpoint, *flags, cwd=project)
        return {"result": result_of(completed), "calls": [e for e in events(completed) if e["event"] == "invocation"]}

    raised = run("raise")
    assert raised["result"]["reason"] == "function-error"
    assert "ValueError: the handler broke on purpose" in raised["result"]["message"]
    assert "about to fail" in raised["calls"][0]["logs"]

    exited = run("exit")
    assert exited["result"]["reason"] == "worker-died" and exited["calls"][0]["outcome"] == "worker_died"

    broken = run("echo", "--function", "Broken")  # broken_syntax.py: serve answers Runtime.UserCodeSyntaxError
    assert broken["result"]["reason"] == "init-error" and "Syntax error in module 'broken_syntax'" in broken["result"]["message"]

    slow = run("sleep", "--invocation-timeout", "1")
    assert slow["result"]["reason"] == "invocation-budget-exceeded", slow
    assert slow["calls"][0]["outcome"] == "timed_out" and "cfnrun stopped waiting" in slow["calls"][0]["note"]


def test_endpoint_problems_and_local_only_flags_are_clear_errors(tmp_path: Path, serve: Callable[..., ServerProcess]) -> None:
    project = _misbehaving(tmp_path)
    server = serve(project, "--no-reload", "--workers", "1")
    missing = cfnrun("invoke", "CREATE", "--lambda-endpoint", server.url, "--function", "NoSuchFunction", cwd=project)
    assert missing.returncode == 2 and "invoking NoSuchFunction failed: ResourceNotFoundException" in missing.stderr, missing.stderr
    nobody = cfnrun("invoke", "CREATE", "--lambda-endpoint", "http://127.0.0.1:9", cwd=project)
    assert nobody.returncode == 2 and "--lambda-endpoint http://127.0.0.1:9: Could not connect" in nobody.stderr, nobody.stderr
    clash = cfnrun("invoke", "CREATE", "--lambda-endpoint", server.url, "--in-process", "--inject", "ssm:GetParameter=+1s", cwd=project)
    assert clash.returncode == 2 and "--in-process, --inject only change how cfnrun runs it locally" in clash.stderr
    assert "Traceback" not in missing.stderr + nobody.stderr + clash.stderr


def test_ctrl_c_during_a_long_remote_call_ends_invoke_at_once(tmp_path: Path, serve: Callable[..., ServerProcess]) -> None:
    import signal
    import subprocess
    import sys

    from conftest import wait_until

    project = _misbehaving(tmp_path)
    server = serve(project, "--no-reload", "--workers", "1")
    started, release = tmp_path / "started", tmp_path / "release"
    (project / "request.json").write_text(json.dumps({"desiredResourceState": {"do": "wait_for", "release": str(release), "started": str(started)}}))
    process = subprocess.Popen(
        [sys.executable, "-m", "cfnrun", "invoke", "CREATE", "request.json", "--lambda-endpoint", server.url, "--contract", "off"],
        cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        wait_until(started.exists, timeout=30, what="the remote call to start")
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10)  # the call is still waiting for the release file: invoke did not wait for its answer
        assert "Traceback" not in (process.stderr.read() if process.stderr else "")
    finally:
        release.touch()  # the handler answers, so serve's graceful stop has nothing left to wait for
        if process.poll() is None:
            process.kill()
            process.wait()
