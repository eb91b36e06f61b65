"""``cfnrun serve`` under hostile or unlucky conditions, driven by real clients and sockets."""
from __future__ import annotations

import json
import shutil
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest
from botocore.exceptions import ClientError

from conftest import FIXTURES, LOCAL_STATE, MISBEHAVING, ServerProcess, cfnrun, pid_alive, read_until, sandboxes_of, start_serve, violations_of, wait_until

RULEBREAKER = FIXTURES / "rulebreaker"
INVOKE = "/2015-03-31/functions/TypeFunction/invocations"


def payload(response: Dict[str, Any]) -> Any:
    return json.loads(response["Payload"].read())


def handler_request(action: str, properties: Dict[str, Any], previous: Any = None, **top: Any) -> bytes:
    data: Dict[str, Any] = {"resourceProperties": properties, "logicalResourceId": "MyResource"}
    if previous is not None:
        data["previousResourceProperties"] = previous
    return json.dumps(
        {
            "action": action,
            "awsAccountId": "123456789012",
            "bearerToken": "token-1",
            "region": "us-east-1",
            "resourceType": "Cfnrun::Test::RuleBreaker",
            "requestData": data,
            **top,
        }
    ).encode()


def post(url: str, body: bytes) -> "tuple[int, Dict[str, str], bytes]":
    request = urllib.request.Request(url + INVOKE, data=body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def address(server: ServerProcess) -> "tuple[str, int]":
    host, port = server.url.split("//")[1].rsplit(":", 1)
    return host, int(port)


def closed_by_server(sock: socket.socket, timeout: float) -> bool:
    """True when the server closes the connection within ``timeout`` (reads EOF or a reset)."""
    sock.settimeout(timeout)
    try:
        while True:
            if sock.recv(4096) == b"":
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


# -- shutdown --------------------------------------------------------------------


def test_sigterm_answers_a_call_still_running_after_the_grace_then_exits(serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    server = serve(MISBEHAVING, "--no-reload", "--shutdown-grace", "2")
    client, kept_alive = server.client(), server.client()
    assert payload(kept_alive.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["count"] == 1
    marker = tmp_path / "started"
    answer: Dict[str, Any] = {}
    body = json.dumps({"do": "sleep", "seconds": 25, "started": str(marker)}).encode()
    call = threading.Thread(target=lambda: answer.update(client.invoke(FunctionName="TypeFunction", Payload=body)))
    call.start()
    wait_until(marker.exists, what="the call to start")
    workers = server.worker_pids()
    signalled = time.monotonic()
    server.process.send_signal(15)
    server.wait_for_line(r"^stopping: finishing in-flight calls \(up to 2 s")
    with pytest.raises(ClientError) as refused:  # a new call during the grace, on a kept-alive connection
        kept_alive.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}')
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    assert "cfnrun serve is stopping" in refused.value.response["Error"]["Message"]
    server.stop_cleanly(timeout=15)
    took = time.monotonic() - signalled
    call.join(timeout=10)
    assert 2.0 <= took < 25, f"serve took {took:.1f} s to stop with a 2 s grace and a 25 s call in flight"
    assert answer["StatusCode"] == 200 and answer["FunctionError"] == "Unhandled"
    error = payload(answer)
    assert error["errorType"] == "Runtime.ExitError"
    assert "cfnrun serve is stopping" in error["errorMessage"] and "2 s shutdown grace" in error["errorMessage"]
    assert not [pid for pid in workers if pid_alive(pid)]


def test_sigterm_while_serve_starts_stops_it_gracefully(tmp_path: Path) -> None:
    """From serve's first line on, SIGTERM stops it the graceful way, even before it listens: no worker is left."""
    project = tmp_path / "misbehaving"
    shutil.copytree(MISBEHAVING, project, ignore=LOCAL_STATE)
    process = start_serve(project)
    before = read_until(process, r"^cfnrun serve:")  # notes may come before serve's first line (the Runtime one)
    process.send_signal(15)
    rest = process.communicate(timeout=30)[0]
    assert process.returncode == 0, "".join(before) + rest
    assert "stopped" in rest.splitlines()
    wait_until(lambda: not sandboxes_of(process.pid), timeout=30, what="no worker of this serve to be left")


# -- payloads --------------------------------------------------------------------


def test_a_result_over_6_mb_is_lambdas_response_size_error(serve: Callable[..., ServerProcess]) -> None:
    server = serve(MISBEHAVING, "--no-reload")
    client = server.client()
    answer = client.invoke(FunctionName="TypeFunction", Payload=json.dumps({"do": "big", "size": 7 * 1024 * 1024}).encode())
    assert answer["StatusCode"] == 200 and answer["FunctionError"] == "Unhandled"
    error = payload(answer)
    assert error["errorType"] == "Function.ResponseSizeTooLarge"
    assert "exceeded maximum allowed payload size (6291556 bytes)" in error["errorMessage"]
    # the console says what the caller got, not that the call returned
    line = server.has_printed(r"TypeFunction .*→")
    assert "Function.ResponseSizeTooLarge" in line and "returned" not in line, line
    assert payload(client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["count"] == 2


def test_deeply_nested_json_is_a_400_that_says_so(serve: Callable[..., ServerProcess]) -> None:
    server = serve(MISBEHAVING, "--no-reload")
    status, headers, body = post(server.url, b"[" * 100_000)
    assert status == 400 and headers["x-amzn-ErrorType"] == "InvalidRequestContentException"
    message = json.loads(body)["message"]
    assert message == "Could not parse request body into json: it is nested too deeply"
    assert "Recursion" not in body.decode()
    assert payload(server.client().invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["count"] == 1


def test_a_request_with_a_malformed_header_is_a_400_and_one_console_line(serve: Callable[..., ServerProcess]) -> None:
    """Found by tests/test_api_fuzz.py: a NUL in a header (boto3 sends ClientContext as given) printed aiohttp's traceback."""
    server = serve(MISBEHAVING, "--no-reload")
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(f"POST {INVOKE} HTTP/1.1\r\nHost: x\r\nX-Amz-Client-Context: \x00\r\nContent-Length: 2\r\n\r\n{{}}".encode())
        answer = b""
        while b"\r\n\r\n" not in answer and (chunk := sock.recv(4096)):
            answer += chunk
    assert answer.split(b" ", 2)[1] == b"400", answer
    line = server.wait_for_line(r"malformed HTTP request")
    assert "WARNING: answered 400 to a malformed HTTP request from 127.0.0.1: Invalid header value char" in line, line
    assert payload(server.client().invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["count"] == 1
    assert not [text for text in server.output if "Traceback" in text or "Error handling request" in text], server.output


def test_a_number_too_long_to_read_or_a_next_token_never_issued_is_a_400_on_every_api(serve: Callable[..., ServerProcess]) -> None:
    """Python reads no integer of over 4,300 digits (a guard against its quadratic conversion): each API says so, as
    its malformed input, instead of failing inside."""
    server = serve(MISBEHAVING, "--no-reload")
    long_number = "9" * 10_000
    status, headers, body = post(server.url, f'{{"n": {long_number}}}'.encode())
    assert status == 400 and headers["x-amzn-ErrorType"] == "InvalidRequestContentException"
    assert json.loads(body)["message"].endswith("a number has more than 4300 digits, more than can be read")

    import boto3

    keys = {"region_name": "us-east-1", "aws_access_key_id": "AKIDTEST", "aws_secret_access_key": "test"}
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **keys)
    for body_text in (f'{{"Resources": {{"A": {{"Type": "AWS::SNS::Topic", "Properties": {{"N": {long_number}}}}}}}}}',
                      f"Resources:\n  A:\n    Type: AWS::SNS::Topic\n    Properties:\n      N: {long_number}\n"):
        with pytest.raises(ClientError) as refused:
            cloudformation.validate_template(TemplateBody=body_text)
        assert refused.value.response["Error"]["Code"] == "ValidationError"
        assert "a number has more than 4300 digits" in refused.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as refused:
        cloudformation.describe_stacks(NextToken="abc")
    assert refused.value.response["Error"]["Code"] == "ValidationError"
    assert refused.value.response["Error"]["Message"].startswith("Invalid NextToken 'abc': not one this endpoint issued")

    cloudcontrol = boto3.client("cloudcontrol", endpoint_url=server.url, **keys)
    with pytest.raises(ClientError) as refused:
        cloudcontrol.create_resource(TypeName="AWS::SNS::Topic", DesiredState=f'{{"N": {long_number}}}')
    assert "a number has more than 4300 digits" in refused.value.response["Error"]["Message"]
    assert payload(server.client().invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["count"] == 1


@pytest.mark.parametrize(
    "name", ["123456789012:function:TypeFunction", "123456789012:function:misbehaving-function:$LATEST"]
)
def test_partial_arns_resolve_like_lambdas(serve: Callable[..., ServerProcess], name: str) -> None:
    client = serve(MISBEHAVING, "--no-reload").client()
    assert payload(client.invoke(FunctionName=name, Payload=b'{"do": "echo"}'))["count"] == 1


def test_escape_sequences_in_handler_output_reach_the_console_escaped(serve: Callable[..., ServerProcess]) -> None:
    server = serve(MISBEHAVING, "--no-reload")
    text = "\x1b[2J\x1b]0;owned\x07red\x1b[31m"
    assert payload(server.client().invoke(FunctionName="TypeFunction", Payload=json.dumps({"do": "print", "text": text}).encode()))
    line = server.wait_for_line(r"owned")
    assert line.endswith("│ \\x1b[2J\\x1b]0;owned\\x07red\\x1b[31m")
    assert "\x1b" not in "\n".join(server.output) and "\x07" not in "\n".join(server.output)


# -- connections ---------------------------------------------------------------------


def test_slow_headers_and_bodies_are_cut_and_connections_capped(serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    server = serve(
        MISBEHAVING, "--no-reload", "--header-timeout", "0.5", "--body-timeout", "0.5", "--max-connections", "3"
    )
    host, port = address(server)
    client = server.client()

    # A long call is not cut by the header deadline: its headers came in time.
    long_call: Dict[str, Any] = {}
    marker = tmp_path / "started"
    body = json.dumps({"do": "sleep", "seconds": 1.5, "started": str(marker)}).encode()
    runner = threading.Thread(target=lambda: long_call.update(payload(client.invoke(FunctionName="TypeFunction", Payload=body))))
    runner.start()
    wait_until(marker.exists, what="the long call to start")

    # Slow-loris: headers that never end are cut at the deadline.
    loris = socket.create_connection((host, port))
    loris.sendall(f"POST {INVOKE} HTTP/1.1\r\nHost: x\r\n".encode())
    assert closed_by_server(loris, timeout=20)  # by the 0.5 s deadline: the default one is 30 s

    # A body that stops short gets a 408 at the body deadline.
    slow_body = socket.create_connection((host, port))
    slow_body.sendall(f"POST {INVOKE} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{{".encode())
    slow_body.settimeout(20)
    assert slow_body.recv(4096).startswith(b"HTTP/1.1 408")
    slow_body.close()

    # A body its caller cuts off by closing: nobody to answer, and no failure of cfnrun's (no traceback on the console).
    cut = socket.create_connection((host, port))
    cut.sendall(f"POST {INVOKE} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{{".encode())
    cut.close()

    # The cap: with the long call's connection and two silent ones open, a fourth caller waits for a
    # place instead of being closed; the silent ones reach the header deadline and make room for it.
    idle: List[socket.socket] = [socket.create_connection((host, port)) for _ in range(2)]
    fresh = server.client()  # its own connection
    assert payload(fresh.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["count"] == 2
    assert closed_by_server(idle[0], timeout=20) and closed_by_server(idle[1], timeout=20)
    runner.join(timeout=10)
    assert long_call == {"slept": 1.5, "version": 1}
    server.wait_for_line(r"echo call 2")  # the call after the cut has printed: what the cut printed is in by now
    assert not [line for line in server.output if "failed serving" in line or "ConnectionResetError" in line], server.output


# -- paging loops ----------------------------------------------------------------------


@pytest.mark.parametrize("mode, answered_as_is", [("warn", 2), ("strict", 0)])
def test_a_list_that_hands_back_its_own_next_token_is_stopped(
    serve: Callable[..., ServerProcess], mode: str, answered_as_is: int
) -> None:
    server = serve(RULEBREAKER, "--no-reload", "--contract", mode)
    client = server.client()
    first = payload(client.invoke(FunctionName="TypeFunction", Payload=handler_request("LIST", {"Breaks": "list-pagination-progress"})))
    assert first["nextToken"] == "same-again"
    statuses = []
    for _ in range(3):
        page = payload(
            client.invoke(
                FunctionName="TypeFunction",
                Payload=handler_request("LIST", {"Breaks": "list-pagination-progress"}, nextToken="same-again"),
            )
        )
        statuses.append(page["status"])
        if page["status"] == "FAILED":
            assert page["errorCode"] == "InternalFailure"
            assert "returned the nextToken it was called with ('same-again')" in page["message"]
            assert "does not pass the request's nextToken to the handler" in page["message"]
            break
    assert statuses == ["SUCCESS"] * answered_as_is + ["FAILED"]
    assert "LIST paging makes no progress" in server.wait_for_line(r"LOOP")


# -- writeOnly values --------------------------------------------------------------------

MARKER = "WOm4rk"


def write_only_project(tmp_path: Path) -> Path:
    project = tmp_path / "rulebreaker"
    shutil.copytree(RULEBREAKER, project)
    schema_file = project / "cfnrun-test-rulebreaker.json"
    schema = json.loads(schema_file.read_text())
    schema["properties"]["Secret"]["minLength"] = 12
    schema["createOnlyProperties"].append("/properties/Secret")
    schema_file.write_text(json.dumps(schema))
    return project


def test_no_write_only_value_appears_in_any_output(serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    project = write_only_project(tmp_path)
    desired = {"Id": "rb-1", "Name": "a", "Secret": MARKER}  # too short, and changed: two violations
    previous = {"Id": "rb-1", "Name": "a", "Secret": f"old-{MARKER}-old"}
    request = tmp_path / "update.json"
    request.write_text(json.dumps({"desiredResourceState": desired, "previousResourceState": previous}))

    timeline = cfnrun("invoke", "UPDATE", str(request), "--project", str(project), "--no-credentials")
    ndjson = cfnrun("invoke", "UPDATE", str(request), "--project", str(project), "--no-credentials", "--json")
    strict_invoke = cfnrun("invoke", "UPDATE", str(request), "--project", str(project), "--no-credentials", "--contract", "strict")
    warn = serve(project, "--no-reload")
    warn_answer = warn.client().invoke(FunctionName="TypeFunction", Payload=handler_request("UPDATE", desired, previous))["Payload"].read()
    warn.wait_for_line(r"update-create-only-unchanged")
    strict = serve(project, "--no-reload", "--contract", "strict")
    strict_answer = strict.client().invoke(FunctionName="TypeFunction", Payload=handler_request("UPDATE", desired, previous))["Payload"].read()
    strict.wait_for_line(r"update-create-only-unchanged")
    for server in (warn, strict):
        server.stop()
        server.wait_for_line(r"^stopped$")

    channels = {
        "invoke timeline": timeline.stdout + timeline.stderr,
        "invoke --json": ndjson.stdout + ndjson.stderr,
        "invoke --contract strict": strict_invoke.stdout + strict_invoke.stderr,
        "serve console": "\n".join(warn.output),
        "serve answer": warn_answer.decode(),
        "serve --contract strict console": "\n".join(strict.output),
        "serve --contract strict answer": strict_answer.decode(),
    }
    for channel, text in channels.items():
        assert MARKER not in text, f"{channel} shows the writeOnly value:\n{text}"
    assert "[request-valid] writeOnly property /properties/Secret fails the schema's minLength" in channels["invoke timeline"]
    assert "[update-create-only-unchanged] writeOnly property /properties/Secret" in channels["serve console"]
    violations = violations_of(ndjson)
    assert {v["rule"] for v in violations} >= {"request-valid", "update-create-only-unchanged"}
    assert "[request-valid] writeOnly property /properties/Secret" in json.loads(strict_answer)["message"]


# -- secrets a handler prints -------------------------------------------------------------

LEAKED_PASSWORD = "pw-LEAKm4rk-horse"  # the note sample's writeOnly AccessPassword
ENV_SECRET_KEY = "ENVSECRETLEAKabcdefghijklmnop"  # the local credentials invoke and serve's stacks pass to the handler
CALLER_SECRET_KEY = "CALLERSECRETLEAKabcdefghijk"  # the callerCredentials a Lambda endpoint call carries
CALLER_SESSION_TOKEN = "CALLERTOKENLEAK0123456789"
LEAKY_CREATE = """    model = request.desiredResourceState
    LOG.info("pw=%s", model.AccessPassword)
    if session is not None:
        LOG.info("sk=%s", session.client("sts")._request_signer._credentials.secret_key)
    if model.Title == "raise":
        raise RuntimeError("failing with " + model.AccessPassword)
"""


def leaky_note(sample: Callable[[str], Path]) -> Path:
    """The note sample, its create handler logging its password and its session's secret key, and raising with the
    password for the title "raise"."""
    project = sample("note")
    handlers = project / "src" / "cfnrun_sample_note" / "handlers.py"
    text = handlers.read_text()
    start = text.index("def create_handler(")
    at = text.index("    model = request.desiredResourceState\n", start)
    handlers.write_text(text[:at] + LEAKY_CREATE + text[at + len("    model = request.desiredResourceState\n"):])
    return project


def test_secrets_a_handler_logs_or_raises_with_are_masked_in_invoke_and_serve_output(
    sample: Callable[[str], Path], serve: Callable[..., ServerProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLEEXAMPLE1")  # serve inherits them too
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", ENV_SECRET_KEY)
    project = leaky_note(sample)
    channels: Dict[str, str] = {}
    for title in ("logs", "raise"):
        request = project / f"{title}.json"
        request.write_text(json.dumps({"desiredResourceState": {"Title": title, "AccessPassword": LEAKED_PASSWORD}}))
        for flags in ([], ["--json"]):
            run = cfnrun("invoke", "CREATE", str(request), *flags, cwd=project)
            assert run.returncode == (0 if title == "logs" else 1), run.stdout + run.stderr
            channels[f"invoke {title} {flags}"] = run.stdout + run.stderr

    server = serve(project, "--no-reload")
    credentials = {"accessKeyId": "AKIDCALLER0001", "secretAccessKey": CALLER_SECRET_KEY, "sessionToken": CALLER_SESSION_TOKEN}
    for title in ("logs", "raise"):
        body = json.loads(handler_request("CREATE", {"Title": title, "AccessPassword": LEAKED_PASSWORD}))
        body["resourceType"] = "Cfnrun::Sample::Note"
        body["requestData"]["callerCredentials"] = credentials
        body["bearerToken"] = f"token-{title}"
        server.client().invoke(FunctionName="TypeFunction", Payload=json.dumps(body).encode())["Payload"].read()
    server.wait_for_line(r"RuntimeError: failing with")
    cloud_control = boto3.client(
        "cloudcontrol", endpoint_url=server.url, region_name="us-east-1", config=Config(signature_version=UNSIGNED, retries={"max_attempts": 0})
    )  # a stack resource's calls take this path too (type_operations)
    cloud_control.create_resource(TypeName="Cfnrun::Sample::Note", DesiredState=json.dumps({"Title": "raise", "AccessPassword": LEAKED_PASSWORD}))
    server.wait_for_line(r"\(Cloud Control \w+\) → FAILED")
    server.wait_for_line(r"Cloud Control \w+: contract ✗ \[failed-message\]")
    server.stop()
    server.wait_for_line(r"^stopped$")
    channels["serve console"] = "\n".join(server.output)

    for channel, text in channels.items():
        for secret in (LEAKED_PASSWORD, ENV_SECRET_KEY, CALLER_SECRET_KEY, CALLER_SESSION_TOKEN):
            assert secret not in text, f"{channel} shows {secret}:\n{text}"
    assert "pw=*** masked ***" in channels["invoke logs []"] and "sk=*** masked ***" in channels["invoke logs []"]
    raised = channels["invoke raise []"]
    assert "RuntimeError: failing with *** masked ***" in raised and "cause: RuntimeError: failing with *** masked ***" in raised
    assert "the handler raised RuntimeError: failing with *** masked ***" in raised  # the contract's message
    assert "failing with *** masked ***" in channels["invoke raise ['--json']"]
    console = channels["serve console"]
    assert "pw=*** masked ***" in console and "sk=*** masked ***" in console
    assert "cause: RuntimeError: failing with *** masked ***" in console
    assert "Cloud Control" in console and console.count("RuntimeError: failing with *** masked ***") >= 2


# -- cfn test, for real ------------------------------------------------------------------


def test_cfnrun_test_virtual_clock_skips_callback_waits_but_counts_them(sample: Callable[[str], Path]) -> None:
    pytest.importorskip("rpdk.core")
    project = sample("cluster")
    template = project / "template.yml"
    template.write_text(template.read_text().replace('CALLBACK_DELAY_SECONDS: "2"', 'CALLBACK_DELAY_SECONDS: "30"'))
    started = time.monotonic()
    run = cfnrun("test", str(project), "--virtual-clock", timeout=600)
    took = time.monotonic() - started
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    summary = [line for line in run.stdout.splitlines() if line.startswith("cfnrun test --virtual-clock:")]
    assert summary, run.stdout[-2000:]
    waits, skipped = summary[0].split(": ")[1].split(" callback wait(s) skipped, ")
    assert int(waits) >= 2 and float(skipped.split()[0]) == 30 * int(waits)
    assert took < 30 * int(waits), f"the run took {took:.0f} s: the waits were not skipped"
    assert " passed" in run.stdout and " failed" not in run.stdout


def test_cfnrun_test_ends_a_paging_loop_in_seconds(sample: Callable[[str], Path]) -> None:
    pytest.importorskip("rpdk.core")
    project = sample("note")
    handlers = project / "src" / "cfnrun_sample_note" / "handlers.py"
    source = handlers.read_text()
    paging = source.replace(
        "        resourceModels=[_public(record) for record in sorted(notes, key=lambda r: r[\"NoteId\"])],\n    )",
        "        resourceModels=[_public(record) for record in sorted(notes, key=lambda r: r[\"NoteId\"])],\n"
        "        nextToken=None if request.nextToken == \"page-2\" else \"page-2\",  # never sees the token: loops\n    )",
    )
    assert paging != source
    handlers.write_text(paging)
    run = cfnrun("test", str(project), "--", "-k", "contract_create_list", timeout=300)
    assert run.returncode != 0, run.stdout[-3000:]
    assert "1 failed" in run.stdout and "status should be SUCCESS" in run.stdout
    log = (project / ".cfnrun" / "test.log").read_text()
    assert "LOOP stopped: answered FAILED" in log and "returned the nextToken it was called with ('page-2') 3 time(s)" in log
    assert "cfnrun test: serve stopped a LIST paging loop 1 time(s)" in run.stdout  # named on the console, not only in the log
    assert not (project / "cfnrun-test.log").exists()  # the log is local state, under .cfnrun/


# -- in-process pieces ---------------------------------------------------------------------


def test_serve_restores_the_signal_handlers_it_replaced() -> None:
    import asyncio
    import io
    import signal

    from cfnrun.app.serve import ServeSettings, Sources, serve_forever
    from cfnrun.model.project import load_project
    from cfnrun.ui.console import Console

    def mine(signum: int, frame: Any) -> None:
        raise AssertionError("not expected to run")

    before = {signum: signal.signal(signum, mine) for signum in (signal.SIGINT, signal.SIGTERM)}
    seen: Dict[str, Any] = {}

    async def started(server: Any) -> None:
        seen["url"] = server.url
        seen["during"] = signal.getsignal(signal.SIGTERM)

    try:
        console = io.StringIO()
        asyncio.run(serve_forever(Sources.of(load_project(MISBEHAVING)), ServeSettings(port=0), Console(console), on_started=started))
        assert seen["url"].startswith("http://127.0.0.1:") and not seen["url"].endswith(":0")
        assert seen["during"] is not mine
        assert signal.getsignal(signal.SIGINT) is mine and signal.getsignal(signal.SIGTERM) is mine
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def test_budgets_say_where_a_call_limit_comes_from() -> None:
    from cfnrun.model.budgets import BudgetKind, Budgets
    from cfnrun.model.protocol import Action

    assert Budgets().call(Action.CREATE, 100).kind is BudgetKind.CONTRACT
    assert Budgets().call(Action.LIST, 5).kind is BudgetKind.FUNCTION_TIMEOUT
    assert Budgets().call(None, None).seconds == 900 and Budgets().call(None, None).kind is BudgetKind.FUNCTION_TIMEOUT
    assert Budgets(invocation_timeout_s=2).call(Action.CREATE, 100).kind is BudgetKind.OVERRIDE
    assert Budgets(time_scale=0.5).call(None, 10).seconds == 5


def test_invoke_timeline_shows_escape_sequences_escaped(tmp_path: Path) -> None:
    request = tmp_path / "create.json"
    request.write_text(json.dumps({"desiredResourceState": {"do": "print", "text": "\x1b]0;owned\x07\x1b[31mred"}}))
    run = cfnrun("invoke", "CREATE", str(request), "--project", str(MISBEHAVING), "--no-credentials")
    assert "│ \\x1b]0;owned\\x07\\x1b[31mred" in run.stdout, run.stdout
    assert "\x1b" not in run.stdout and "\x07" not in run.stdout
