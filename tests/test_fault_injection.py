"""--inject: faults in the handler's AWS calls, applied inside the worker, shown in the timeline (issue #11)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict

import pytest

from conftest import ServerProcess, cfnrun, events, result_of
from test_aws_calls import GREETING, NO_LOCAL_CREDENTIALS, _serve_request, aws, parameter_names


def test_a_throttled_put_is_mapped_retried_and_shown(sample: Callable[[str], Path], moto_url: str) -> None:
    project = sample("parameter")
    flags = ["--aws-endpoint", moto_url, "--inject", "ssm:PutParameter=ThrottlingException@1", "--virtual-clock"]
    run = cfnrun("invoke", "CREATE", "requests/create.json", *flags, "--json", cwd=project, env=NO_LOCAL_CREDENTIALS)
    result = result_of(run)
    assert (result["status"], result["invocations"]) == ("SUCCESS", 2), run.stdout + run.stderr
    first, second = [e for e in events(run) if e["event"] == "invocation"]
    # a real botocore ClientError with that code reached the handler, which mapped it to Throttling
    assert first["progressEvent"]["errorCode"] == "Throttling"
    assert "An error occurred (ThrottlingException) when calling the PutParameter operation" in first["progressEvent"]["message"]
    assert first["injected"] == [
        {"rule": "ssm:PutParameter=ThrottlingException@1", "call": "ssm:PutParameter", "count": 1, "status": 400}
    ]
    assert [e["errorCode"] for e in events(run) if e["event"] == "retry"] == ["Throttling"]
    assert second["status"] == "SUCCESS" and "injected" not in second  # @1: the second call goes through
    assert aws("ssm", moto_url).get_parameter(Name=GREETING)["Parameter"]["Value"] == "hello from cfnrun"

    deleted = cfnrun("invoke", "DELETE", "requests/delete.json", *flags, cwd=project, env=NO_LOCAL_CREDENTIALS)
    assert "SUCCESS DELETE" in deleted.stdout, deleted.stdout + deleted.stderr
    assert GREETING not in parameter_names(moto_url)
    assert "⚡" not in deleted.stdout  # the rule never matched DeleteParameter

    recorded = {**NO_LOCAL_CREDENTIALS, "CFNRUN_HISTORY": "on"}
    real_clock = [flag for flag in flags if flag != "--virtual-clock"]
    again = cfnrun("invoke", "CREATE", "requests/create.json", *real_clock, cwd=project, env=recorded)
    assert "⚡ injected --inject ssm:PutParameter=ThrottlingException@1 into ssm:PutParameter (matching call 1)" in again.stdout
    assert "↻ Throttling is retriable: retry 1/3 as #2, the same request after 1 s\n" in again.stdout
    assert "… waiting 1 s (backoff before the retry)" in again.stdout  # not a CallbackDelaySeconds the handler asked for
    newest = json.loads(cfnrun("history", "--json", cwd=project, env=recorded).stdout.splitlines()[0])
    shown = cfnrun("history", "show", str(newest["id"]), cwd=project, env=recorded)
    assert "⚡ injected --inject ssm:PutParameter=ThrottlingException@1" in shown.stdout, shown.stdout + shown.stderr

    aws("ssm", moto_url).delete_parameter(Name=GREETING)  # from scratch, the replay does what the recording did
    replayed = cfnrun("replay", str(newest["id"]), "--virtual-clock", cwd=project, env=recorded)
    assert replayed.returncode == 0 and f"same outcome as #{newest['id']}: SUCCESS" in replayed.stdout, replayed.stdout + replayed.stderr
    assert "⚡ injected --inject ssm:PutParameter=ThrottlingException@1" in replayed.stdout  # the endpoint and the fault, again


def test_every_matching_call_a_delay_and_a_service_wide_rule(sample: Callable[[str], Path], moto_url: str) -> None:
    project = sample("parameter")
    always = cfnrun(
        "invoke", "DELETE", "requests/delete.json", "--aws-endpoint", moto_url, "--no-retry", "--json",
        "--inject", "ssm:*=InternalServerError", "--inject", "ssm:GetParameter=+50ms",
        cwd=project, env=NO_LOCAL_CREDENTIALS,
    )
    result = result_of(always)
    assert (result["status"], result["errorCode"]) == ("FAILED", "ServiceInternalError"), always.stdout + always.stderr
    (call,) = [e for e in events(always) if e["event"] == "invocation"]
    assert call["injected"] == [{"rule": "ssm:*=InternalServerError", "call": "ssm:DeleteParameter", "count": 1, "status": 500}]

    slow = cfnrun(
        "invoke", "READ", "requests/delete.json", "--aws-endpoint", moto_url, "--json", "--contract", "off",
        "--inject", "ssm:GetParameter=+300ms", cwd=project, env=NO_LOCAL_CREDENTIALS,
    )
    (read,) = [e for e in events(slow) if e["event"] == "invocation"]
    assert read["injected"][0]["status"] is None and read["durationMs"] >= 300
    assert result_of(slow)["errorCode"] == "NotFound", slow.stdout + slow.stderr  # delayed, then sent: moto answered


@pytest.mark.parametrize(
    "value, problem",
    [
        ("ssm-PutParameter=ThrottlingException", "expected SERVICE:Operation=ErrorCode"),
        ("ssm:PutParameter=", "say what happens to the call"),
        ("ssm:PutParameter=ThrottlingException@0", "calls are counted from 1"),
        ("ssm:PutParameter=ThrottlingException%150", "a rate is a percentage"),
    ],
)
def test_a_bad_inject_value_is_a_usage_error(sample: Callable[[str], Path], value: str, problem: str) -> None:
    run = cfnrun("invoke", "CREATE", "requests/create.json", "--inject", value, cwd=sample("parameter"))
    assert run.returncode == 2 and problem in run.stderr, run.stderr
    assert "Traceback" not in run.stderr


def test_serve_injects_into_every_worker_call(
    sample: Callable[[str], Path], serve: Callable[..., ServerProcess], moto_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in NO_LOCAL_CREDENTIALS.items():
        monkeypatch.delenv(key, raising=False) if value is None else monkeypatch.setenv(key, value)
    server = serve(sample("parameter"), "--aws-endpoint", moto_url, "--no-reload", "--workers", "1",
        "--inject", "ssm:PutParameter=AccessDeniedException@2",
    )
    client = server.client()

    def call(action: str, name: str) -> Dict[str, Any]:
        payload = _serve_request(action, {"Name": name, "Value": "v"})
        answer: Dict[str, Any] = json.loads(client.invoke(FunctionName="TypeFunction", Payload=payload)["Payload"].read())
        return answer

    assert call("CREATE", "/one")["status"] == "SUCCESS"
    denied = call("CREATE", "/two")  # the worker's second PutParameter
    assert (denied["status"], denied["errorCode"]) == ("FAILED", "AccessDenied"), denied
    assert "AccessDeniedException" in denied["message"]
    server.wait_for_line(r"⚡ injected --inject ssm:PutParameter=AccessDeniedException@2 into ssm:PutParameter \(matching call 2\)")
    assert call("CREATE", "/three")["status"] == "SUCCESS"
    assert sorted(parameter_names(moto_url)) == ["/one", "/three"]


def test_in_process_injects_too(sample: Callable[[str], Path], moto_url: str) -> None:
    project = sample("parameter")
    run = cfnrun(
        "invoke", "CREATE", "requests/create.json", "--in-process", "--aws-endpoint", moto_url, "--virtual-clock", "--json",
        "--inject", "ssm:PutParameter=ThrottlingException@1", cwd=project, env=NO_LOCAL_CREDENTIALS,
    )
    result = result_of(run)
    assert (result["status"], result["invocations"]) == ("SUCCESS", 2), run.stdout + run.stderr
    first = next(e for e in events(run) if e["event"] == "invocation")
    assert first["injected"][0]["rule"] == "ssm:PutParameter=ThrottlingException@1"


def test_replay_of_a_moto_operation_starts_a_fresh_moto_server(sample: Callable[[str], Path]) -> None:
    project = sample("parameter")
    recorded = {**NO_LOCAL_CREDENTIALS, "CFNRUN_HISTORY": "on"}
    created = cfnrun("invoke", "CREATE", "requests/create.json", "--moto", cwd=project, env=recorded)
    assert created.returncode == 0, created.stdout + created.stderr
    newest = json.loads(cfnrun("history", "--json", cwd=project, env=recorded).stdout.splitlines()[0])
    replayed = cfnrun("replay", str(newest["id"]), cwd=project, env=recorded)
    assert replayed.returncode == 0 and f"same outcome as #{newest['id']}: SUCCESS" in replayed.stdout, replayed.stdout + replayed.stderr
    assert "moto server (AWS stand-in) at http://127.0.0.1:" in replayed.stderr
