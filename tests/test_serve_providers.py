"""``cfnrun serve`` with several providers (``--provider``) and plain functions (``--functions``), driven by real clients."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError

from conftest import FIXTURES, LOCAL_STATE, MISBEHAVING, ServerProcess, cfnrun

NOTE = "Cfnrun::Sample::Note"
CLUSTER = "Cfnrun::Sample::Cluster"
FUNCTIONS = FIXTURES / "functions"
FAST = {"Delay": 0.05, "MaxAttempts": 400}
ARN = "arn:aws:lambda:us-east-1:123456789012:function:"


@pytest.fixture
def serve_in() -> Iterator[Callable[..., ServerProcess]]:
    """``cfnrun serve --port 0 ARGS`` started in folder ``cwd`` (with ``env`` added); each stopped after the test."""
    started: List[ServerProcess] = []

    def start(cwd: Path, *args: str, env: Optional[Dict[str, str]] = None) -> ServerProcess:
        process = subprocess.Popen(
            [sys.executable, "-m", "cfnrun", "serve", "--port", "0", *args],
            cwd=str(cwd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "NO_COLOR": "1", **(env or {})},
        )
        server = ServerProcess(cwd, process=process)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def handler_request(action: str, type_name: str, properties: Dict[str, Any]) -> bytes:
    return json.dumps({
        "action": action, "awsAccountId": "123456789012", "bearerToken": "token-1", "region": "us-east-1",
        "resourceType": type_name, "requestData": {"resourceProperties": properties, "logicalResourceId": "MyResource"},
    }).encode()


def answer(response: Dict[str, Any]) -> Any:
    assert "FunctionError" not in response, response
    return json.loads(response["Payload"].read())


def client(server: ServerProcess, service: str) -> Any:
    import boto3

    return boto3.client(
        service, endpoint_url=server.url, region_name="us-east-1", config=Config(signature_version=UNSIGNED, retries={"max_attempts": 0})
    )


def test_two_providers_answer_by_unambiguous_names_and_refuse_an_ambiguous_one(
    sample: Callable[[str], Path], serve_in: Callable[..., ServerProcess]
) -> None:
    note, cluster = sample("note"), sample("cluster")
    # In the note project's folder: it is served, and --provider adds the cluster beside it.
    server = serve_in(note, "--provider", str(cluster), "--no-reload", "--virtual-clock", env={"CFNRUN_HISTORY": "on"})
    assert server.has_printed(r"Cloud Control API for Cfnrun::Sample::Note, Cfnrun::Sample::Cluster at ")
    lambda_client = server.client()

    listed = answer(lambda_client.invoke(FunctionName="Cfnrun-Sample-Note-TypeFunction", Payload=handler_request("LIST", NOTE, {})))
    assert listed["status"] == "SUCCESS" and listed["resourceModels"] == []
    server.wait_for_line(r"Cfnrun-Sample-Note-TypeFunction LIST → SUCCESS")
    event = json.loads((cluster / "sam-tests" / "create.json").read_text())
    created = answer(lambda_client.invoke(FunctionName=ARN + "Cfnrun-Sample-Cluster-TestEntrypoint", Payload=json.dumps(event).encode()))
    assert created["status"] == "IN_PROGRESS" and created["resourceModel"]["Name"]

    with pytest.raises(ClientError) as ambiguous:
        lambda_client.invoke(FunctionName="TypeFunction", Payload=handler_request("LIST", NOTE, {}))
    error = ambiguous.value.response
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 404 and error["Error"]["Code"] == "ResourceNotFoundException"
    assert "Cfnrun-Sample-Note-TypeFunction, Cfnrun-Sample-Cluster-TypeFunction" in error["Error"]["Message"]

    cloudcontrol = client(server, "cloudcontrol")
    for type_name, desired in ((NOTE, {"Title": "groceries", "Folder": "home"}), (CLUSTER, {"Name": "demo", "NodeCount": 3})):
        token = cloudcontrol.create_resource(TypeName=type_name, DesiredState=json.dumps(desired))["ProgressEvent"]["RequestToken"]
        cloudcontrol.get_waiter("resource_request_success").wait(RequestToken=token, WaiterConfig=FAST)
        done = cloudcontrol.get_resource_request_status(RequestToken=token)["ProgressEvent"]
        assert done["TypeName"] == type_name and done["Identifier"]
    with pytest.raises(ClientError) as unknown:
        cloudcontrol.create_resource(TypeName="Org::Svc::Missing", DesiredState="{}")
    assert unknown.value.response["Error"]["Code"] == "TypeNotFoundException"
    assert f"serves {NOTE}, {CLUSTER}" in unknown.value.response["Error"]["Message"]

    # Each provider's operations are in its own history, where cfnrun history and replay in that project find them.
    server.stop()
    for project, type_name in ((note, NOTE), (cluster, CLUSTER)):
        shown = cfnrun("history", "--project", str(project), "--json")
        assert shown.returncode == 0, shown.stderr
        recorded = [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]
        assert {row["typeName"] for row in recorded} == {type_name}, recorded


def test_plain_functions_answer_by_logical_id_function_name_and_arn(
    serve_in: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    # Outside any project: only --provider and --functions are served.
    server = serve_in(tmp_path, "--provider", str(MISBEHAVING), "--functions", str(FUNCTIONS / "template.yaml"), "--no-reload")
    lambda_client = server.client()
    for name in ("EchoFunction", "cfnrun-echo", ARN + "cfnrun-echo", ARN + "EchoFunction:$LATEST"):
        echoed = answer(lambda_client.invoke(FunctionName=name, Payload=json.dumps({"RequestType": "Create"}).encode()))
        assert echoed == {
            "event": {"RequestType": "Create"},
            "greeting": "bonjour",  # the function's own Environment over the Globals'
            "functionName": "cfnrun-echo",
            "functionArn": ARN + "cfnrun-echo",
            "memoryLimitInMB": 256,
            "taskRoot": str(FUNCTIONS / "src"),
        }
    plain = answer(lambda_client.invoke(FunctionName="PlainFunction", Payload=b"[1, 2]"))
    assert plain["event"] == [1, 2] and plain["greeting"] is None and plain["memoryLimitInMB"] == 128  # no SAM Globals for AWS::Lambda::Function
    server.wait_for_line(r"PlainFunction → returned")
    # One provider beside plain functions: its functions keep their names.
    assert answer(lambda_client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["count"] == 1

    aws = shutil.which("aws", path=os.path.dirname(sys.executable)) or shutil.which("aws")
    if aws is None:
        pytest.skip("the aws CLI is not installed")
    out = tmp_path / "out.json"
    completed = subprocess.run(
        [aws, "lambda", "invoke", "--endpoint-url", server.url, "--no-sign-request", "--region", "us-east-1",
         "--function-name", ARN + "cfnrun-echo", "--payload", '{"k": "v"}', str(out)],
        capture_output=True, text=True, timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(out.read_text())["event"] == {"k": "v"}


def _template(folder: Path, properties: str) -> Path:
    (folder / "src").mkdir(exist_ok=True)
    path = folder / "template.yaml"
    path.write_text("Resources:\n  Greeter:\n    Type: AWS::Serverless::Function\n    Properties:\n" + properties)
    return path


@pytest.mark.parametrize(
    "args, expected",
    [
        (lambda tmp: ["--provider", str(tmp / "missing")], r"--provider \S+missing: not a folder"),
        (lambda tmp: ["--provider", str(tmp)], r"\.rpdk-config: not found"),
        (lambda tmp: ["--functions", str(_template(tmp, "      Handler: app.main\n      Runtime: nodejs18.x\n      CodeUri: src/\n"))],
         r"template\.yaml: Resources\.Greeter: Runtime nodejs18\.x is not Python"),
        (lambda tmp: ["--functions", str(_template(tmp, "      Handler: app.main\n      Runtime: python3.11\n"))],
         r"template\.yaml: Resources\.Greeter: CodeUri is missing"),
        (lambda tmp: ["--functions", str(tmp / "nope.yaml")], r"nope\.yaml: --functions template not found"),
    ],
)
def test_bad_sources_are_one_line_usage_errors(tmp_path: Path, args: Callable[[Path], List[str]], expected: str) -> None:
    run = cfnrun("serve", "--port", "0", *args(tmp_path), cwd=tmp_path, timeout=60)
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cfnrun: error: "), run.stderr
    assert re.search(expected, lines[0]), lines[0]


def test_two_providers_of_one_type_are_refused(sample: Callable[[str], Path], tmp_path: Path) -> None:
    first, second = sample("note"), tmp_path / "copy"
    shutil.copytree(first, second)
    run = cfnrun("serve", "--port", "0", "--provider", str(first), "--provider", str(second), cwd=tmp_path, timeout=60)
    assert run.returncode == 2
    assert run.stderr.strip() == f"cfnrun: error: two providers serve {NOTE}: {first} and {second}; serve one of them"


def test_a_plain_function_may_not_take_a_providers_function_name(tmp_path: Path) -> None:
    template = _template(tmp_path, "      FunctionName: TypeFunction\n      Handler: app.main\n      Runtime: python3.11\n      CodeUri: src/\n")
    run = cfnrun("serve", "--port", "0", "--provider", str(MISBEHAVING), "--functions", str(template), cwd=tmp_path, timeout=60)
    assert run.returncode == 2
    assert "function name TypeFunction is also served by provider Cfnrun::Test::Misbehaving" in run.stderr


def test_each_source_reloads_its_own_saves(serve_in: Callable[..., ServerProcess], tmp_path: Path) -> None:
    provider, functions = tmp_path / "misbehaving", tmp_path / "functions"
    shutil.copytree(MISBEHAVING, provider, ignore=LOCAL_STATE)
    shutil.copytree(FUNCTIONS, functions, ignore=LOCAL_STATE)
    server = serve_in(tmp_path, "--provider", str(provider), "--functions", str(functions / "template.yaml"))
    server.has_printed(rf"reload: watching {provider}, {functions} for changes")
    lambda_client = server.client()
    assert answer(lambda_client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["version"] == 1

    handlers = functions / "src" / "app.py"
    handlers.write_text(handlers.read_text().replace('"event": event,', '"event": event, "edited": True,'))
    server.wait_for_line(r"reload: src/app.py changed")
    server.wait_for_line(r"reload: new code live in \d+ ms: EchoFunction, PlainFunction")
    assert answer(lambda_client.invoke(FunctionName="cfnrun-echo", Payload=b"{}"))["edited"] is True

    behaviours = provider / "behaviours.py"
    behaviours.write_text(behaviours.read_text().replace("VERSION = 1", "VERSION = 2", 1))
    server.wait_for_line(r"reload: behaviours.py changed")
    server.wait_for_line(r"reload: new code live in \d+ ms: TypeFunction")
    assert answer(lambda_client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}'))["version"] == 2


def test_cfn_invoke_calls_a_providers_function_by_its_unambiguous_name(
    sample: Callable[[str], Path], serve_in: Callable[..., ServerProcess]
) -> None:
    pytest.importorskip("rpdk.core")
    note, cluster = sample("note"), sample("cluster")
    server = serve_in(note, "--provider", str(cluster), "--sts-standin", "--no-reload")
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "example", "AWS_SESSION_TOKEN": "example"}
    completed = subprocess.run(
        [sys.executable, "-m", "cfnrun.app.cfn_offline", "--sts-endpoint", server.url, "invoke", "--endpoint", server.url,
         "--region", "us-east-1", "--function-name", "Cfnrun-Sample-Note-TypeFunction", "resource", "CREATE", "requests/create.json"],
        cwd=note, env=env, capture_output=True, text=True, timeout=120,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    response = completed.stdout.split("=== Handler response ===")[-1]
    assert json.loads(response.split("=== Handler input ===")[0])["status"] == "SUCCESS"
    server.wait_for_line(r"Cfnrun-Sample-Note-TypeFunction CREATE → SUCCESS")
