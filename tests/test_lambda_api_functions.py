"""The Lambda API's function management on a real serve: functions made with boto3 and the aws CLI run on its warm workers."""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, Callable, Dict

import pytest
from botocore.exceptions import ClientError

from conftest import LOCAL_STATE, SAMPLES, ServerProcess

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
ROLE = "arn:aws:iam::123456789012:role/lambda-role"

GREETER = """\
import os

def handler(event, context):
    return {"said": os.environ["GREETING"] + " " + event["name"], "version": 1, "remaining": context.get_remaining_time_in_millis() > 0}
"""


def zipped(files: Dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def invoked(client: Any, name: str, event: Dict[str, Any]) -> Any:
    answer = client.invoke(FunctionName=name, Payload=json.dumps(event).encode())
    assert "FunctionError" not in answer, answer["Payload"].read()
    return json.loads(answer["Payload"].read())


def error_of(call: Callable[..., Any], **kwargs: Any) -> Dict[str, str]:
    with pytest.raises(ClientError) as raised:
        call(**kwargs)
    return dict(raised.value.response["Error"])


def note_copy(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    return tmp_path / "note"


def test_a_python_zip_function_is_created_invoked_updated_and_deleted_with_boto3(serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    import boto3

    server = serve(note_copy(tmp_path), "--no-reload")
    client = boto3.client("lambda", endpoint_url=server.url, **CREDENTIALS)
    created = client.create_function(
        FunctionName="greeter", Runtime="python3.12", Role=ROLE, Handler="app.handler", Timeout=30,
        Code={"ZipFile": zipped({"app.py": GREETER})}, Environment={"Variables": {"GREETING": "hello"}}, Tags={"team": "a"},
    )
    assert created["ResponseMetadata"]["HTTPStatusCode"] == 201
    arn = "arn:aws:lambda:us-east-1:123456789012:function:greeter"
    assert created["FunctionArn"] == arn and created["State"] == "Active" and created["Timeout"] == 30
    assert created["Environment"] == {"Variables": {"GREETING": "hello"}} and created["Role"] == ROLE
    assert invoked(client, "greeter", {"name": "ann"}) == {"said": "hello ann", "version": 1, "remaining": True}
    assert invoked(client, arn, {"name": "bob"})["said"] == "hello bob"  # by its ARN too

    shown = client.get_function(FunctionName="greeter")
    assert shown["Configuration"]["CodeSha256"] == created["CodeSha256"] and shown["Tags"] == {"team": "a"}
    assert client.get_function_configuration(FunctionName=arn)["Handler"] == "app.handler"
    client.get_waiter("function_active_v2").wait(FunctionName="greeter", WaiterConfig={"Delay": 1, "MaxAttempts": 5})
    client.create_function(FunctionName="another", Runtime="python3.11", Role=ROLE, Handler="app.handler",
                           Code={"ZipFile": zipped({"app.py": "def handler(event, context):\n    return 'another'\n"})})
    assert [f["FunctionName"] for f in client.list_functions()["Functions"]] == ["another", "greeter"]
    first = client.list_functions(MaxItems=1)
    assert [f["FunctionName"] for f in first["Functions"]] == ["another"] and first["NextMarker"] == "another"
    assert [f["FunctionName"] for f in client.list_functions(Marker=first["NextMarker"])["Functions"]] == ["greeter"]

    updated = client.update_function_code(FunctionName="greeter", ZipFile=zipped({"app.py": GREETER.replace('"version": 1', '"version": 2')}))
    assert updated["CodeSha256"] != created["CodeSha256"] and updated["Environment"] == created["Environment"]
    assert invoked(client, "greeter", {"name": "cy"}) == {"said": "hello cy", "version": 2, "remaining": True}

    taken = error_of(client.create_function, FunctionName="greeter", Runtime="python3.12", Role=ROLE, Handler="app.handler",
                     Code={"ZipFile": zipped({"app.py": GREETER})})
    assert (taken["Code"], taken["Message"]) == ("ResourceConflictException", "Function already exist: greeter")
    served_already = error_of(client.create_function, FunctionName="TypeFunction", Runtime="python3.12", Role=ROLE,
                              Handler="app.handler", Code={"ZipFile": zipped({"app.py": GREETER})})
    assert served_already["Code"] == "ResourceConflictException"  # the provider's function has that name
    node = error_of(client.create_function, FunctionName="node", Runtime="nodejs20.x", Role=ROLE, Handler="index.handler",
                    Code={"ZipFile": zipped({"index.js": "exports.handler = async () => 1;"})})
    assert node["Code"] == "InvalidParameterValueException" and "nodejs20.x" in node["Message"] and "Python" in node["Message"]
    not_a_zip = error_of(client.create_function, FunctionName="broken", Runtime="python3.12", Role=ROLE, Handler="app.handler",
                         Code={"ZipFile": b"not a zip"})
    assert not_a_zip["Code"] == "InvalidParameterValueException" and not_a_zip["Message"].startswith("Could not unzip uploaded file.")
    escaping = error_of(client.create_function, FunctionName="escaping", Runtime="python3.12", Role=ROLE, Handler="app.handler",
                        Code={"ZipFile": zipped({"../outside.py": "x = 1\n"})})
    assert escaping["Code"] == "InvalidParameterValueException" and "outside" in escaping["Message"]
    assert not (tmp_path / "note" / ".cfnrun" / "outside.py").exists()
    no_s3 = error_of(client.create_function, FunctionName="from-s3", Runtime="python3.12", Role=ROLE, Handler="app.handler",
                     Code={"S3Bucket": "code", "S3Key": "app.zip"})
    assert no_s3["Code"] == "InvalidParameterValueException" and "--moto" in no_s3["Message"]

    client.delete_function(FunctionName="greeter")
    missing = f"Function not found: {arn}"
    gone = error_of(client.get_function, FunctionName="greeter")
    assert (gone["Code"], gone["Message"]) == ("ResourceNotFoundException", missing)
    assert error_of(client.invoke, FunctionName="greeter")["Code"] == "ResourceNotFoundException"
    assert error_of(client.delete_function, FunctionName="greeter")["Message"] == missing
    assert error_of(client.update_function_code, FunctionName="greeter", ZipFile=zipped({"app.py": GREETER}))["Message"] == missing
    assert [f["FunctionName"] for f in client.list_functions()["Functions"]] == ["another"]
    assert invoked(client, "another", {}) == "another"
    client.create_function(FunctionName="slow", Runtime="python3.12", Role=ROLE, Handler="app.handler", Timeout=1,
                           Code={"ZipFile": zipped({"app.py": "import time\n\ndef handler(event, context):\n    time.sleep(30)\n"})})
    cut = client.invoke(FunctionName="slow", Payload=b"{}")  # its Timeout applies
    assert cut["FunctionError"] == "Unhandled" and "Task timed out after 1.00 seconds" in cut["Payload"].read().decode()
    assert invoked(client, "TypeFunction", {}) is not None  # the provider's function is still served beside them


def test_a_function_from_the_endpoints_s3_is_kept_across_a_state_restart(
    serve: Callable[..., ServerProcess], tmp_path: Path, moto_url: str
) -> None:
    import boto3

    kept = str(tmp_path / "kept")
    server = serve(note_copy(tmp_path), "--no-reload", "--aws-endpoint", moto_url, "--state", kept)
    s3 = boto3.client("s3", endpoint_url=moto_url, **CREDENTIALS)
    s3.create_bucket(Bucket="code")
    s3.put_object(Bucket="code", Key="app.zip", Body=zipped({"app.py": GREETER}))
    client = boto3.client("lambda", endpoint_url=server.url, **CREDENTIALS)
    client.create_function(FunctionName="greeter", Runtime="python3.12", Role=ROLE, Handler="app.handler",
                           Code={"S3Bucket": "code", "S3Key": "app.zip"}, Environment={"Variables": {"GREETING": "hi"}})
    assert invoked(client, "greeter", {"name": "ann"})["said"] == "hi ann"
    missing = error_of(client.update_function_code, FunctionName="greeter", S3Bucket="code", S3Key="nothing.zip")
    assert missing["Code"] == "InvalidParameterValueException" and "NoSuchKey" in missing["Message"]
    server.stop()

    again = serve(tmp_path / "note", "--no-reload", "--aws-endpoint", moto_url, "--state", kept)
    again.has_printed(r"function greeter \(made by CreateFunction\) read back")
    client = boto3.client("lambda", endpoint_url=again.url, **CREDENTIALS)
    assert invoked(client, "greeter", {"name": "bob"})["said"] == "hi bob"
    client.delete_function(FunctionName="greeter")
    assert not list((tmp_path / "kept" / "lambda-functions").iterdir())


def test_the_aws_cli_creates_and_invokes_a_function(serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    aws = shutil.which("aws", path=os.path.dirname(sys.executable)) or shutil.which("aws")
    if aws is None:
        pytest.skip("the aws CLI is not installed")
    server = serve(note_copy(tmp_path), "--no-reload")
    (tmp_path / "function.zip").write_bytes(zipped({"app.py": GREETER}))
    environment = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}

    def cli(*args: str) -> str:
        run = subprocess.run([aws, "--endpoint-url", server.url, "lambda", *args], capture_output=True, text=True, env=environment, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr
        return run.stdout

    created = json.loads(cli("create-function", "--function-name", "cli-greeter", "--runtime", "python3.12", "--role", ROLE,
                             "--handler", "app.handler", "--zip-file", f"fileb://{tmp_path / 'function.zip'}",
                             "--environment", "Variables={GREETING=hey}"))
    assert created["FunctionName"] == "cli-greeter" and created["CodeSize"] == (tmp_path / "function.zip").stat().st_size
    (tmp_path / "event.json").write_text(json.dumps({"name": "cli"}))
    cli("invoke", "--function-name", "cli-greeter", "--payload", f"fileb://{tmp_path / 'event.json'}", str(tmp_path / "out.json"))
    assert json.loads((tmp_path / "out.json").read_text())["said"] == "hey cli"
    cli("delete-function", "--function-name", "cli-greeter")
    assert "cli-greeter" not in cli("list-functions")


def test_create_function_refuses_tags_and_architectures_of_the_wrong_shape_and_goes_on_serving(
    serve: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    """Bodies no SDK would send (found reading the code for what random inputs would hit): each was a 500 or a list of
    single letters."""
    import base64
    import urllib.error
    import urllib.request

    import boto3

    server = serve(note_copy(tmp_path), "--no-reload")
    code = base64.b64encode(zipped({"app.py": GREETER})).decode()
    made = {"FunctionName": "shaped", "Runtime": "python3.11", "Role": ROLE, "Handler": "app.handler", "Code": {"ZipFile": code}}

    def refused(**more: Any) -> Dict[str, Any]:
        request = urllib.request.Request(f"{server.url}/2015-03-31/functions", data=json.dumps({**made, **more}).encode(), method="POST")
        with pytest.raises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(request, timeout=60)
        assert raised.value.code == 400
        answer: Dict[str, Any] = json.loads(raised.value.read())
        return answer

    assert refused(Tags=["a", "b"])["message"] == "Tags must be a map of tag keys to values, not list"
    assert "not a list of one architecture" in refused(Architectures="arm64")["message"]
    client = boto3.client("lambda", endpoint_url=server.url, **CREDENTIALS)
    assert client.create_function(**{**made, "Code": {"ZipFile": zipped({"app.py": GREETER})}}, Architectures=["arm64"])["Architectures"] == ["arm64"]
