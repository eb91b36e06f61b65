"""A failed step says why and what to do (#30.2, #30.3): the handler's own exception, wherever an outcome is shown,
a --moto/--aws-endpoint hint when it tried to reach AWS, and serve's recipe for a handler that calls AWS works."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from conftest import ServerProcess, cfnrun
from test_aws_calls import NO_LOCAL_CREDENTIALS

pytest.importorskip("moto.server")
ON = {**NO_LOCAL_CREDENTIALS, "CFNRUN_HISTORY": "on"}
REAL_LOOKING_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYlocal"


def closed_port_url() -> str:
    """A loopback address nothing listens on: the handler's AWS calls are refused there."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def aws_cli() -> str:
    found = shutil.which("aws", path=os.path.dirname(sys.executable)) or shutil.which("aws")
    if found is None:
        pytest.skip("the aws CLI is not installed")
    return found


def lambda_invoke(server: ServerProcess, event: Path, out: Path) -> dict:
    completed = subprocess.run(
        [aws_cli(), "lambda", "invoke", "--endpoint-url", server.url, "--no-sign-request", "--region", "us-east-1",
         "--function-name", "TypeFunction", "--payload", f"fileb://{event}", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    return dict(json.loads(out.read_text()))


def test_readme_serve_recipe_works_for_a_handler_that_calls_aws(sample: Callable[[str], Path], tmp_path: Path) -> None:
    project = sample("parameter")
    env = {**NO_LOCAL_CREDENTIALS, "AWS_ACCESS_KEY_ID": "AKIAREALLOOKINGLOCAL1", "AWS_SECRET_ACCESS_KEY": REAL_LOOKING_SECRET}
    printed = cfnrun("invoke", "CREATE", "requests/create.json", "--print-request", "--moto", cwd=project, env=env)
    assert printed.returncode == 0, printed.stderr
    assert REAL_LOOKING_SECRET not in printed.stdout and "AKIAREALLOOKINGLOCAL1" not in printed.stdout  # never the local ones
    assert json.loads(printed.stdout)["requestData"]["callerCredentials"]["accessKeyId"] == "CFNRUNLOCALPLACEHOLDER"
    event = tmp_path / "event.json"
    event.write_text(printed.stdout)
    server = ServerProcess(project, "--no-reload", "--moto")
    try:
        answer = lambda_invoke(server, event, tmp_path / "out.json")
    finally:
        server.stop_cleanly()
    assert answer["status"] == "SUCCESS", answer


def test_serve_says_a_handler_got_no_session_and_what_to_do(sample: Callable[[str], Path], tmp_path: Path) -> None:
    project = sample("parameter")
    printed = cfnrun("invoke", "CREATE", "requests/create.json", "--print-request", cwd=project, env=NO_LOCAL_CREDENTIALS)
    assert "callerCredentials" not in printed.stdout  # no stand-in named: nothing to give
    event = tmp_path / "event.json"
    event.write_text(printed.stdout)
    server = ServerProcess(project, "--no-reload", "--moto")
    try:
        answer = lambda_invoke(server, event, tmp_path / "out.json")
        hint = server.wait_for_line(r"hint: the handler got no caller session")
        cause = server.has_printed(r"cause: RuntimeError: no caller session")
    finally:
        server.stop_cleanly()
    assert (answer["status"], answer["errorCode"]) == ("FAILED", "InternalFailure")  # what the function answered, unchanged
    assert "--print-request --moto" in hint, hint
    assert cause


def test_a_failed_step_shows_the_handlers_exception_in_invoke_history_and_replay(sample: Callable[[str], Path]) -> None:
    project = sample("parameter")
    refused = closed_port_url()
    run = cfnrun("invoke", "CREATE", "requests/create.json", "--aws-endpoint", refused, cwd=project, env=ON)
    assert run.returncode == 1, run.stdout + run.stderr
    cause = f'cause: botocore.exceptions.EndpointConnectionError: Could not connect to the endpoint URL: "{refused}/"'
    assert cause in run.stdout, run.stdout
    assert f"hint: nothing answered at {refused}/" in run.stdout and "add --moto to cfnrun invoke" in run.stdout
    # the support library's FAILED without a message names the exception, not a bare [failed-message]
    assert "[failed-message] FAILED without a message: the handler raised botocore.exceptions.EndpointConnectionError" in run.stdout

    [operation] = [json.loads(line) for line in cfnrun("history", "--json", cwd=project, env=ON).stdout.splitlines()]
    shown = cfnrun("history", "show", str(operation["id"]), cwd=project, env=ON)
    assert cause in shown.stdout, shown.stdout
    replayed = cfnrun("replay", str(operation["id"]), cwd=project, env=ON)
    assert cause in replayed.stdout, replayed.stdout + replayed.stderr


def test_without_a_stand_in_the_hint_names_moto(sample: Callable[[str], Path]) -> None:
    project = sample("parameter")
    # offline: "Could not connect to the endpoint URL"; online: AWS refuses the placeholder credentials
    run = cfnrun("invoke", "CREATE", "requests/create.json", "--json", cwd=project, env=NO_LOCAL_CREDENTIALS)
    result = json.loads(run.stdout.splitlines()[-1])
    assert result["status"] == "FAILED" and result["cause"], result
    assert "add --moto to cfnrun invoke" in result["hint"], result


def test_cfnrun_test_summary_names_each_failed_test_and_tells_requests_from_answers(fresh: Path) -> None:
    pytest.importorskip("rpdk.core")
    model = {"TPSCode": "ABC123456", "Title": "a title that is long enough", "TestCode": "NOT_STARTED", "Tags": [{"Key": "a", "Value": "b"}]}
    inputs = fresh / "inputs"  # the stub's own example_inputs hold "..." placeholders: inputs a user would write instead
    inputs.mkdir()
    (inputs / "inputs_1_create.json").write_text(json.dumps(model))
    (inputs / "inputs_1_update.json").write_text(json.dumps({**model, "Title": "another title, long enough"}))
    (inputs / "inputs_1_invalid.json").write_text(json.dumps({**model, "TPSCode": "x"}))
    run = cfnrun("test", "--virtual-clock", cwd=fresh, timeout=600)
    assert run.returncode != 0
    summary = run.stdout[run.stdout.index("cfnrun test: ", run.stdout.index("One or more contract tests failed")):]
    assert "  contract_create_delete (failed): " in summary, summary  # its reason: what the suite asserted or met
    assert "contract_update_without_create (failed): AssertionError: An update handler MUST return FAILED with a NotFound" in summary
    # the real failure, which stayed in the log: the stub's uniqueItems Tags read into a set
    assert "CREATE → FAILED InvalidRequest unhashable type: 'dict'" in summary and "hint: models.py from cfn generate" in summary
    answers, requests = summary.split("in the suite's own requests")
    assert "[request-has-identifier]" not in answers.split("in the handlers' answers")[-1]  # not counted against the handler
    assert "contract ✗ [request-has-identifier]" in requests


def test_cfnrun_test_without_a_stand_in_says_what_stopped_cfn_and_names_moto(sample: Callable[[str], Path]) -> None:
    pytest.importorskip("rpdk.core")
    project = sample("parameter")  # its inputs read an {{Export}}: the suite looks it up at AWS's CloudFormation
    run = cfnrun("test", "--virtual-clock", cwd=project, env=NO_LOCAL_CREDENTIALS, timeout=600)
    assert run.returncode != 0
    assert "cfnrun test: cfn test itself stopped on botocore.exceptions." in run.stdout, run.stdout[-3000:]
    assert "add --moto to cfnrun test" in run.stdout
