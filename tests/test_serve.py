"""``cfnrun serve`` driven by real clients: boto3, the aws CLI and cloudformation-cli."""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict

import pytest
from botocore.exceptions import ClientError

from conftest import MISBEHAVING, ServerProcess, cfnrun, pid_alive, wait_until


def payload(response: Dict[str, Any]) -> Any:
    return json.loads(response["Payload"].read())


def handler_request(action: str, properties: Dict[str, Any], type_name: str = "Cfnrun::Test::Misbehaving") -> bytes:
    return json.dumps(
        {
            "action": action,
            "awsAccountId": "123456789012",
            "bearerToken": "token-1",
            "region": "us-east-1",
            "resourceType": type_name,
            "requestData": {"resourceProperties": properties, "logicalResourceId": "MyResource"},
        }
    ).encode()


def error_code(error: ClientError) -> "tuple[int, str, str]":
    return (
        error.response["ResponseMetadata"]["HTTPStatusCode"],
        error.response["Error"]["Code"],
        error.response["Error"]["Message"],
    )


@pytest.mark.parametrize("name, first_status", [("note", "SUCCESS"), ("cluster", "IN_PROGRESS")])
def test_boto3_invokes_both_entrypoints_of_each_sample(
    sample: Callable[[str], Path], serve: Callable[..., ServerProcess], name: str, first_status: str
) -> None:
    project = sample(name)
    server = serve(project)
    client = server.client()
    type_name = json.loads((project / ".rpdk-config").read_text())["typeName"]

    listed = client.invoke(FunctionName="TypeFunction", Payload=handler_request("LIST", {}, type_name))
    assert listed["StatusCode"] == 200 and "FunctionError" not in listed
    assert payload(listed) == {"status": "SUCCESS", "message": "", "callbackDelaySeconds": 0, "resourceModels": []}
    server.wait_for_line(r"TypeFunction LIST → SUCCESS [\d.]+ ms")

    event = json.loads((project / "sam-tests" / "create.json").read_text())
    created = payload(client.invoke(FunctionName="TestEntrypoint", Payload=json.dumps(event).encode()))
    assert created["status"] == first_status
    assert created["resourceModel"]["Name" if name == "cluster" else "Title"]
    server.wait_for_line(rf"TestEntrypoint CREATE → {first_status}")


def test_console_shows_each_calls_logs_tagged_with_its_request_id(serve: Callable[..., ServerProcess]) -> None:
    server = serve(MISBEHAVING)
    response = server.client().invoke(FunctionName="TypeFunction", Payload=handler_request("CREATE", {"do": "echo"}))
    request_id = response["ResponseMetadata"]["HTTPHeaders"]["x-amzn-requestid"]
    head = server.wait_for_line(r"TypeFunction CREATE → SUCCESS")
    assert f"[{request_id[:8]}]" in head
    assert server.wait_for_line(r"echo call 1") == f"    {request_id[:8]} │ echo call 1"


def test_function_name_qualifier_and_arn_resolve_to_the_same_function(serve: Callable[..., ServerProcess]) -> None:
    client = serve(MISBEHAVING).client()
    names = [
        "TypeFunction",
        "misbehaving-function",
        "arn:aws:lambda:us-east-1:123456789012:function:misbehaving-function",
        "arn:aws:lambda:us-east-1:123456789012:function:TypeFunction:$LATEST",
    ]
    counts = [payload(client.invoke(FunctionName=name, Payload=b'{"do": "echo"}'))["count"] for name in names]
    assert counts == [1, 2, 3, 4]
    qualified = client.invoke(FunctionName="TypeFunction", Qualifier="$LATEST", Payload=b'{"do": "echo"}')
    assert payload(qualified)["count"] == 5 and qualified["ExecutedVersion"] == "$LATEST"
    with pytest.raises(ClientError) as alias:  # no versions or aliases: refused, not run as $LATEST
        client.invoke(FunctionName="TypeFunction", Qualifier="live", Payload=b'{"do": "echo"}')
    assert alias.value.response["Error"]["Code"] == "InvalidParameterValueException"
    assert "keeps no versions or aliases" in alias.value.response["Error"]["Message"]
    assert payload(client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["count"] == 6


def test_handler_exception_is_an_unhandled_function_error(serve: Callable[..., ServerProcess]) -> None:
    client = serve(MISBEHAVING).client()
    response = client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "raise"}')
    assert response["StatusCode"] == 200 and response["FunctionError"] == "Unhandled"
    error = payload(response)
    assert (error["errorType"], error["errorMessage"]) == ("ValueError", "the handler broke on purpose")
    assert any("behaviours.py" in frame for frame in error["stackTrace"])
    assert payload(client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["count"] == 2


def test_payloads_near_the_6_mb_limit_go_through(serve: Callable[..., ServerProcess]) -> None:
    client = serve(MISBEHAVING).client()
    event = json.dumps({"do": "big", "blob": "x" * (5 * 1024 * 1024), "size": 4 * 1024 * 1024}).encode()
    result = payload(client.invoke(FunctionName="TypeFunction", Payload=event))
    assert result["received"] == 5 * 1024 * 1024 and len(result["blob"]) == 4 * 1024 * 1024


@pytest.mark.parametrize(
    "body",
    [
        b'  {"do": "event", "n": [1, 2.5, null, true], "s": "plain"}\n',  # ASCII: forwarded as sent
        '{"do": "event", "s": "h\u00e9llo \u65e5\u672c \U0001f600"}'.encode("utf-8"),
        '{"do": "event", "s": "h\u00e9llo"}'.encode("utf-16"),
        '{"do": "event", "s": "plain"}'.encode("utf-16-le"),  # bytes all ASCII, NULs among them: JSON's encoding detection reads them
    ],
    ids=["ascii", "utf-8", "utf-16", "utf-16-le-ascii-bytes"],
)
def test_handler_receives_the_event_the_client_sent(serve: Callable[..., ServerProcess], body: bytes) -> None:
    client = serve(MISBEHAVING).client()
    assert payload(client.invoke(FunctionName="TypeFunction", Payload=body))["event"] == json.loads(body)


def test_a_body_is_read_as_the_json_module_reads_it_and_one_it_cannot_read_is_refused_in_its_words(serve: Callable[..., ServerProcess]) -> None:
    client = serve(MISBEHAVING).client()
    read = [
        b'{"do":"event","n":[1,2.5e3,-0.0,1E400,null,true,{}],"s":"\\u00e9\\ud83d\\ude00 \\"q\\"","k":1,"k":2}',  # one object, nothing around it
        b'{"do": "event", "a": []}\r\n\t ',
        b'\n{"do": "event"}',
    ]
    for body in read:
        assert payload(client.invoke(FunctionName="TypeFunction", Payload=body))["event"] == json.loads(body), body
    unreadable = [b'{"do": "event"} {"x": 1}', b'{"do": "event"}]', b'{"do": "event",}', b'{"n": 01}', b"[1, 2", b"{'do': 1}", b"{", b"[]x"]
    for body in unreadable:
        with pytest.raises(json.JSONDecodeError) as json_says:
            json.loads(body)
        with pytest.raises(ClientError) as caught:
            client.invoke(FunctionName="TypeFunction", Payload=body)
        assert error_code(caught.value) == (400, "InvalidRequestContentException", f"Could not parse request body into json: {json_says.value}"), body
    assert payload(client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["count"] == len(read) + 1  # still serving, same worker


def test_timeouts_kill_the_worker_and_contract_breaches_are_logged(serve: Callable[..., ServerProcess]) -> None:
    # Timeout 100 s in template.yml and the contract's 60 s, both scaled to 1 s and 0.6 s.
    server = serve(MISBEHAVING, "--time-scale", "0.01")
    client = server.client()

    plain = client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "sleep", "seconds": 30}')
    assert plain["FunctionError"] == "Unhandled"
    assert payload(plain)["errorMessage"].endswith("Task timed out after 1.00 seconds")
    note = server.wait_for_line(r"! no answer within")
    assert "the function's Timeout in template.yml (1 s)" in note and "contract breach" not in note

    create = client.invoke(FunctionName="TypeFunction", Payload=handler_request("CREATE", {"do": "sleep", "seconds": 30}))
    assert payload(create)["errorMessage"].endswith("Task timed out after 0.60 seconds")
    breach = server.wait_for_line(r"contract breach")
    assert "the handler contract's 60 s response budget for CREATE" in breach

    assert payload(client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["count"] == 1


@pytest.mark.parametrize("do, shown", [("segfault", "killed by SIGSEGV"), ("hard_exit", "exited with status 7")])
def test_crashed_worker_is_reported_and_replaced(serve: Callable[..., ServerProcess], do: str, shown: str) -> None:
    client = serve(MISBEHAVING).client()
    crashed = client.invoke(FunctionName="TypeFunction", Payload=json.dumps({"do": do}).encode())
    assert crashed["FunctionError"] == "Unhandled"
    error = payload(crashed)
    assert error["errorType"] == "Runtime.ExitError" and shown in error["errorMessage"]
    assert payload(client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["count"] == 1


def test_tail_returns_the_calls_log(serve: Callable[..., ServerProcess]) -> None:
    client = serve(MISBEHAVING).client()
    response = client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}', LogType="Tail")
    log = base64.b64decode(response["LogResult"]).decode()
    request_id = response["ResponseMetadata"]["HTTPHeaders"]["x-amzn-requestid"]
    assert log.startswith(f"START RequestId: {request_id} Version: $LATEST\necho call 1\nEND RequestId: {request_id}\n")
    assert "REPORT RequestId" in log and "Duration:" in log
    flood = client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "flood", "lines": 5000}', LogType="Tail")
    assert len(base64.b64decode(flood["LogResult"])) == 4096


def test_the_tail_report_line_gives_the_workers_max_memory_used_as_lambdas_does(serve: Callable[..., ServerProcess]) -> None:
    # Lambda's REPORT line ends "Memory Size: 128 MB<tab>Max Memory Used: 71 MB<tab>"; the figure is the worker's peak resident
    # set size so far, so a call that touches 32 MB more reports at least that much, above what a fresh worker's echo did.
    client = serve(MISBEHAVING).client()

    def max_memory_used(answer: Dict[str, Any]) -> int:
        request_id = answer["ResponseMetadata"]["HTTPHeaders"]["x-amzn-requestid"]
        report = base64.b64decode(answer["LogResult"]).decode().splitlines()[-1]
        shape = rf"REPORT RequestId: {request_id}\tDuration: \d+\.\d\d ms\tBilled Duration: \d+ ms\tMemory Size: 128 MB\tMax Memory Used: (\d+) MB\t"
        matched = re.fullmatch(shape, report)
        assert matched, report
        return int(matched.group(1))

    fresh = max_memory_used(client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}', LogType="Tail"))
    grown = max_memory_used(client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "allocate", "megabytes": 32}', LogType="Tail"))
    assert 0 < fresh < grown and grown >= 32, (fresh, grown)


def test_event_invocation_answers_202_and_runs_in_the_background(serve: Callable[..., ServerProcess]) -> None:
    server = serve(MISBEHAVING)
    response = server.client().invoke(
        FunctionName="TypeFunction", InvocationType="Event", Payload=b'{"do": "print", "text": "from an Event call"}'
    )
    assert response["StatusCode"] == 202
    server.wait_for_line(r"│ from an Event call")


def test_dry_run_checks_the_function_without_running_it(serve: Callable[..., ServerProcess]) -> None:
    client = serve(MISBEHAVING).client()
    assert client.invoke(FunctionName="TypeFunction", InvocationType="DryRun", Payload=b"{}")["StatusCode"] == 204
    assert payload(client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["count"] == 1
    with pytest.raises(ClientError) as missing:
        client.invoke(FunctionName="Nope", InvocationType="DryRun")
    assert error_code(missing.value)[:2] == (404, "ResourceNotFoundException")


def test_service_errors_have_lambdas_status_and_error_type(serve: Callable[..., ServerProcess]) -> None:
    server = serve(MISBEHAVING)
    client = server.client()
    cases = {
        "unknown function": (dict(FunctionName="Nope", Payload=b"{}"), 404, "ResourceNotFoundException"),
        "malformed JSON": (dict(FunctionName="TypeFunction", Payload=b"{oops"), 400, "InvalidRequestContentException"),
        "over 6 MB": (dict(FunctionName="TypeFunction", Payload=b'"' + b"x" * (6 * 1024 * 1024) + b'"'), 413, "RequestTooLargeException"),
        "invocation type": (dict(FunctionName="TypeFunction", InvocationType="Later", Payload=b"{}"), 400, "InvalidParameterValueException"),
    }
    for name, (arguments, status, code) in cases.items():
        with pytest.raises(ClientError) as caught:
            client.invoke(**arguments)
        assert error_code(caught.value)[:2] == (status, code), name
    with pytest.raises(ClientError) as unknown:
        client.invoke(FunctionName="Nope", Payload=b"{}")
    assert "Served functions: TypeFunction, misbehaving-function, Broken" in error_code(unknown.value)[2]

    for method, path, status, code in [
        ("GET", "/2015-03-31/functions/TypeFunction/invocations", 405, "MethodNotAllowedException"),
        ("POST", "/2015-03-31/event-source-mappings", 404, "UnknownOperationException"),
        ("POST", "/2015-03-31/functions", 400, "InvalidParameterValueException"),  # CreateFunction without a FunctionName
        ("GET", "/no-such-page", 404, "UnknownOperationException"),  # GET / is the console (issue #35)
    ]:
        with pytest.raises(urllib.error.HTTPError) as http:
            urllib.request.urlopen(urllib.request.Request(server.url + path, method=method, data=b"{}" if method == "POST" else None))
        assert (http.value.code, http.value.headers["x-amzn-ErrorType"]) == (status, code)
        assert json.loads(http.value.read())["Message"]
    assert payload(client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["count"] == 1


def test_function_that_does_not_import_answers_with_its_init_error(serve: Callable[..., ServerProcess]) -> None:
    server = serve(MISBEHAVING)
    client = server.client()
    response = client.invoke(FunctionName="Broken", Payload=b"{}")
    assert response["FunctionError"] == "Unhandled"
    error = payload(response)
    assert error["errorType"] == "Runtime.UserCodeSyntaxError" and "broken_syntax.py:2" in error["errorMessage"]
    assert payload(client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["count"] == 1


def test_parallel_calls_run_on_warm_workers(serve: Callable[..., ServerProcess]) -> None:
    server = serve(MISBEHAVING, "--workers", "10", "--no-reload")
    client = server.client()
    body = b'{"do": "sleep", "seconds": 1, "when": true}'
    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(lambda _: payload(client.invoke(FunctionName="TypeFunction", Payload=body)), range(20)))
    assert [r["slept"] for r in results] == [1] * 20
    assert len({r["pid"] for r in results}) == 10, "the 20 calls did not spread over the ten warm workers"
    at_once = max(sum(1 for r in results if r["began"] <= moment < r["ended"]) for moment in (r["began"] for r in results))
    assert at_once > 1, "no two calls ever slept at the same time"
    assert len(server.worker_pids("misbehaving-function")) == 11  # ten workers and the function's zygote


def test_sigterm_finishes_in_flight_calls_and_leaves_no_workers(serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    server = serve(MISBEHAVING)
    client = server.client()
    marker = tmp_path / "started"
    result: Dict[str, Any] = {}
    call = threading.Thread(
        target=lambda: result.update(
            payload(client.invoke(FunctionName="TypeFunction", Payload=json.dumps({"do": "sleep", "seconds": 1, "started": str(marker)}).encode()))
        )
    )
    call.start()
    wait_until(marker.exists, what="the call to start")
    workers = server.worker_pids()
    assert workers
    server.stop_cleanly()
    call.join(timeout=10)
    assert result.get("slept") == 1
    assert not [pid for pid in workers if pid_alive(pid)]
    server.wait_for_line(r"finishing in-flight calls")
    server.wait_for_line(r"^stopped$")


def test_aws_cli_invokes_through_the_endpoint(serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    aws = shutil.which("aws", path=os.path.dirname(sys.executable)) or shutil.which("aws")
    if aws is None:
        pytest.skip("the aws CLI is not installed")
    server = serve(MISBEHAVING)
    out = tmp_path / "out.json"
    completed = subprocess.run(
        [aws, "lambda", "invoke", "--endpoint-url", server.url, "--no-sign-request", "--region", "us-east-1",
         "--function-name", "TypeFunction",
         "--payload", '{"do": "echo"}', str(out)],
        capture_output=True, text=True, timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["StatusCode"] == 200
    assert json.loads(out.read_text())["count"] == 1


def test_cfn_invoke_reaches_success_on_the_stabilizing_sample(sample: Callable[[str], Path], serve: Callable[..., ServerProcess]) -> None:
    pytest.importorskip("rpdk.core")
    project = sample("cluster")
    server = serve(project, "--sts-standin")
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "example", "AWS_SESSION_TOKEN": "example"}
    completed = subprocess.run(
        [sys.executable, "-m", "cfnrun.app.cfn_offline", "--sts-endpoint", server.url,
         "invoke", "--endpoint", server.url, "--region", "us-east-1", "resource", "CREATE", "requests/create.json"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    responses = completed.stdout.split("=== Handler response ===")[1:]
    statuses = [json.loads(r.split("=== Handler input ===")[0])["status"] for r in responses]
    assert statuses == ["IN_PROGRESS", "IN_PROGRESS", "SUCCESS"]


@pytest.mark.parametrize("name", ["note", "cluster"])
def test_contract_suite_passes_through_cfnrun_test(sample: Callable[[str], Path], name: str) -> None:
    pytest.importorskip("rpdk.core")
    project = sample(name)
    template = project / "template.yml"
    template.write_text(template.read_text().replace('CALLBACK_DELAY_SECONDS: "2"', 'CALLBACK_DELAY_SECONDS: "0"'))
    run = cfnrun("test", str(project), timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    summary = next(line for line in reversed(run.stdout.splitlines()) if line.startswith("="))  # pytest's, before cfnrun's summary
    assert " passed" in summary and "failed" not in summary and "error" not in summary
    assert "TypeFunction CREATE → SUCCESS" in (project / ".cfnrun" / "test.log").read_text()
