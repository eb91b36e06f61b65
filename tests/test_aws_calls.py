"""Providers that call AWS, offline: the handler's AWS calls go to a moto server (issue #11)."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Dict, Optional

import boto3
import pytest

from conftest import ServerProcess, cfnrun, events, result_of, violations_of

moto_server = pytest.importorskip("moto.server")

NO_LOCAL_CREDENTIALS: Dict[str, Optional[str]] = {
    "AWS_ACCESS_KEY_ID": None,
    "AWS_SECRET_ACCESS_KEY": None,
    "AWS_SESSION_TOKEN": None,
    "AWS_PROFILE": None,
    "AWS_DEFAULT_PROFILE": None,
    "AWS_ENDPOINT_URL": None,
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/cfnrun-credentials",
    "AWS_CONFIG_FILE": "/nonexistent/cfnrun-config",
    "AWS_REGION": "us-east-1",
}
GREETING = "/cfnrun/sample/greeting"


def aws(service: str, url: str) -> Any:
    return boto3.client(
        service, endpoint_url=url, region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    )


def parameter_names(url: str) -> "list[str]":
    return [p["Name"] for p in aws("ssm", url).describe_parameters()["Parameters"]]


def test_create_then_delete_against_a_separate_moto_server_without_local_credentials(
    sample: Callable[[str], Path], moto_url: str
) -> None:
    project = sample("parameter")
    flags = ["--aws-endpoint", moto_url, "--json"]
    created = cfnrun("invoke", "CREATE", "requests/create.json", *flags, cwd=project, env=NO_LOCAL_CREDENTIALS)
    assert result_of(created)["status"] == "SUCCESS", created.stdout + created.stderr
    assert result_of(created)["resourceModel"] == {"Name": GREETING, "Value": "hello from cfnrun"}
    assert aws("ssm", moto_url).get_parameter(Name=GREETING)["Parameter"]["Value"] == "hello from cfnrun"
    assert "no AWS credentials found locally" not in created.stderr  # placeholders are the plan, not a problem

    again = cfnrun("invoke", "CREATE", "requests/create.json", *flags, cwd=project, env=NO_LOCAL_CREDENTIALS)
    assert (result_of(again)["status"], result_of(again)["errorCode"]) == ("FAILED", "AlreadyExists")

    deleted = cfnrun("invoke", "DELETE", "requests/delete.json", *flags, cwd=project, env=NO_LOCAL_CREDENTIALS)
    assert result_of(deleted)["status"] == "SUCCESS", deleted.stdout + deleted.stderr
    assert GREETING not in parameter_names(moto_url)


def test_without_credentials_or_endpoint_the_handler_still_gets_a_session(sample: Callable[[str], Path]) -> None:
    """CloudFormation always sends callerCredentials: placeholders, never a None session."""
    project = sample("parameter")
    env = {**NO_LOCAL_CREDENTIALS, "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}  # nothing listens: the call fails fast
    run = cfnrun("invoke", "READ", "requests/delete.json", "--json", "--contract", "off", cwd=project, env=env)
    assert "no AWS credentials found locally: the handler gets placeholder caller credentials" in run.stderr
    result = result_of(run)
    assert "NoneType" not in result["message"] and "no caller session" not in result["message"]
    assert "127.0.0.1:9" in json.dumps(events(run))  # the call really went out, signed with the placeholders


def test_moto_flag_runs_create_read_delete_with_an_embedded_server(sample: Callable[[str], Path]) -> None:
    project = sample("parameter")
    run = cfnrun("invoke", "CREATE", "requests/create.json", "--moto", cwd=project, env=NO_LOCAL_CREDENTIALS)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"moto server \(AWS stand-in\) at http://127\.0\.0\.1:\d+", run.stderr)
    assert "SUCCESS CREATE" in run.stdout
    # a fresh server per command: DELETE finds nothing, as the contract expects (NotFound)
    gone = cfnrun("invoke", "DELETE", "requests/delete.json", "--moto", "--json", cwd=project, env=NO_LOCAL_CREDENTIALS)
    assert (result_of(gone)["status"], result_of(gone)["errorCode"]) == ("FAILED", "NotFound")


def test_moto_and_aws_endpoint_together_are_refused(sample: Callable[[str], Path]) -> None:
    project = sample("parameter")
    run = cfnrun("invoke", "CREATE", "requests/create.json", "--moto", "--aws-endpoint", "http://127.0.0.1:5000", cwd=project)
    assert run.returncode == 2 and "--aws-endpoint and --moto both say where AWS calls go" in run.stderr
    bad = cfnrun("invoke", "CREATE", "requests/create.json", "--aws-endpoint", "127.0.0.1:5000", cwd=project)
    assert bad.returncode == 2 and "expected a URL such as http://" in bad.stderr


def _serve_request(action: str, properties: Dict[str, Any]) -> bytes:
    return json.dumps(
        {
            "action": action,
            "awsAccountId": "123456789012",
            "bearerToken": "token-1",
            "region": "us-east-1",
            "resourceType": "Cfnrun::Sample::Parameter",
            "requestData": {
                "resourceProperties": properties,
                "logicalResourceId": "MyResource",
                "callerCredentials": {"accessKeyId": "testing", "secretAccessKey": "testing", "sessionToken": "t"},
            },
        }
    ).encode()


def test_serve_with_moto_keeps_the_server_for_its_lifetime(
    sample: Callable[[str], Path], serve: Callable[..., ServerProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in NO_LOCAL_CREDENTIALS.items():
        monkeypatch.delenv(key, raising=False) if value is None else monkeypatch.setenv(key, value)
    server = serve(sample("parameter"), "--moto", "--no-reload")
    announced = re.search(r"moto server \(AWS stand-in\) at (http://127\.0\.0\.1:\d+)", "\n".join(server.output))
    assert announced, server.output
    moto_url = announced.group(1)
    client = server.client()

    def call(action: str, value: str) -> Dict[str, Any]:
        payload = _serve_request(action, {"Name": "/p", "Value": value})
        return json.loads(client.invoke(FunctionName="TypeFunction", Payload=payload)["Payload"].read())

    assert call("CREATE", "first")["status"] == "SUCCESS"
    assert call("UPDATE", "second")["status"] == "SUCCESS"  # one server for all calls: state persists between them
    assert aws("ssm", moto_url).get_parameter(Name="/p")["Parameter"]["Value"] == "second"
    assert call("DELETE", "second")["status"] == "SUCCESS"
    assert "/p" not in parameter_names(moto_url)


def test_cfnrun_test_resolves_exports_and_runs_the_suite_against_moto(
    sample: Callable[[str], Path], moto_url: str
) -> None:
    pytest.importorskip("rpdk.core")
    project = sample("parameter")
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {"Value": {"Value": "from-an-export", "Export": {"Name": "CfnrunSampleValue"}}},
    }
    aws("cloudformation", moto_url).create_stack(StackName="exports", TemplateBody=json.dumps(template))
    run = cfnrun(
        "test", str(project), "--aws-endpoint", moto_url, "--virtual-clock", "--", "-k", "contract_create_read or contract_delete_read",
        env=NO_LOCAL_CREDENTIALS, timeout=300,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert f"export lookups go to {moto_url}" in run.stdout
    log = (project / ".cfnrun" / "test.log").read_text()
    assert "created /cfnrun/contract/parameter = 'from-an-export'" in log
    assert "cfnrun test: no contract violations in the handlers' answers" in run.stdout


def test_the_violation_summary_counts_each_rule(tmp_path: Path) -> None:
    from collections import Counter

    from cfnrun.app.contract_suite import violation_summary

    seen = Counter({"contract ✗ [failed-error-code]": 3, "contract ! [checker-failed]": 1})
    summary = violation_summary(seen, tmp_path / "cfnrun-test.log").splitlines()
    assert summary[0].startswith("cfnrun test: 4 contract violation(s) in the handlers' answers (details in ")
    assert summary[1:] == ["  contract ✗ [failed-error-code]  ×3", "  contract ! [checker-failed]  ×1"]


FLAKY_HANDLER = '''
CALLS = {"count": 0}


def handler(event, context):
    CALLS["count"] += 1
    if CALLS["count"] <= 2:
        return {"status": "FAILED", "errorCode": "Throttling", "message": f"Rate exceeded (call {CALLS['count']})"}
    return {"status": "SUCCESS", "resourceModel": {"Id": "flaky-1"}}
'''


def test_invoke_retries_a_throttled_answer_and_no_retry_turns_it_off(tmp_path: Path) -> None:
    from conftest import MISBEHAVING

    (tmp_path / "flaky.py").write_text(FLAKY_HANDLER)
    flags = ["--handler", "flaky.handler", "--schema", str(MISBEHAVING / "cfnrun-test-misbehaving.json"),
             "--code-dir", str(tmp_path), "--contract", "off", "--virtual-clock"]
    retried = cfnrun("invoke", "CREATE", *flags, "--json")
    result = result_of(retried)
    assert (result["status"], result["invocations"]) == ("SUCCESS", 3), retried.stdout + retried.stderr
    assert [(e["retry"], e["delaySeconds"]) for e in events(retried) if e["event"] == "retry"] == [(1, 1.0), (2, 2.0)]

    timeline = cfnrun("invoke", "CREATE", *flags)
    assert "↻ Throttling is retriable: retry 2/3 as #3, the same request after 2 s (virtual, not waited)" in timeline.stdout

    once = cfnrun("invoke", "CREATE", *flags, "--no-retry", "--json")
    assert (result_of(once)["status"], result_of(once)["errorCode"], result_of(once)["invocations"]) == ("FAILED", "Throttling", 1)


# -- what broke on third-party providers ------------------------------------------------------------

AWS_STYLE_SCHEMA = {
    "typeName": "Cfnrun::Test::Patterns",
    "description": "patterns written for ECMAScript, as AWS schemas have them",
    "properties": {
        "Id": {"type": "string"},
        "Text": {"type": "string", "pattern": "^[\\u0020-\\uD7FF\\uD800\\uDC00-\\uDBFF\\uDFFF]+$"},
        "Odd": {"type": "string", "pattern": "(?P<name>a)b"},  # Python's named group: no ECMAScript regex
    },
    "additionalProperties": False,
    "primaryIdentifier": ["/properties/Id"],
    "readOnlyProperties": ["/properties/Id"],
    "handlers": {"create": {"permissions": []}},
}
PATTERN_HANDLER = '''
def handler(event, context):
    model = dict(event["requestData"]["resourceProperties"], Id="p-1")
    return {"status": "SUCCESS", "resourceModel": model}
'''


def test_patterns_are_read_as_ecmascript_and_one_that_is_none_is_skipped_never_costing_the_answer(tmp_path: Path) -> None:
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(AWS_STYLE_SCHEMA))  # "\\uD800\\uDC00": the regex escapes, as AWS schemas have them
    (tmp_path / "patterned.py").write_text(PATTERN_HANDLER)
    request = tmp_path / "create.json"
    request.write_text(json.dumps({"desiredResourceState": {"Text": "ok \U0001F600", "Odd": "ab"}}))
    flags = ["--handler", "patterned.handler", "--schema", str(schema_file), "--code-dir", str(tmp_path), "--no-credentials"]
    run = cfnrun("invoke", "CREATE", str(request), *flags, "--json", "--contract", "strict")
    result = result_of(run)
    assert (result["status"], result["resourceModel"]["Id"]) == ("SUCCESS", "p-1"), run.stdout + run.stderr
    assert run.stderr.count("schema pattern at /properties/Odd/pattern") == 1 and "Traceback" not in run.stderr
    assert "/properties/Text" not in run.stderr  # an ECMAScript pattern (surrogate pairs and all): checked, and it matches

    checked = tmp_path / "bad.json"
    checked.write_text(json.dumps({"desiredResourceState": {"Text": "tab\tis below U+0020"}}))
    out_of_shape = cfnrun("invoke", "CREATE", str(checked), *flags, "--json")
    assert any(v.get("pointer", "").endswith("/Text") for v in violations_of(out_of_shape))

    validated = cfnrun("validate", str(schema_file), "--json")
    problems = json.loads(validated.stdout)["problems"]
    assert [p["pointer"] for p in problems if "not an ECMAScript regular expression" in p["message"]] == ["/properties/Odd/pattern"]


def test_an_undeclared_handler_is_called_with_a_note_and_default_timeouts_say_so(tmp_path: Path) -> None:
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(AWS_STYLE_SCHEMA))  # handlers: create only, no timeoutInMinutes
    (tmp_path / "patterned.py").write_text(PATTERN_HANDLER)
    flags = ["--handler", "patterned.handler", "--schema", str(schema_file), "--code-dir", str(tmp_path), "--no-credentials"]
    update = cfnrun("invoke", "UPDATE", *flags, "--contract", "off")
    assert "the schema declares no update handler, so CloudFormation would never call it (it would replace the resource" in update.stderr
    create = cfnrun("invoke", "CREATE", *flags, "--contract", "off")
    assert "declares no" not in create.stderr
    assert "whole operation: handlers.create.timeoutInMinutes = 120 (default, 120 min)" in create.stdout


ECHO_HANDLER = '''
import json


def handler(event, context):
    data = event["requestData"]
    seen = {key: event.get(key) for key in ("responseEndpoint", "resourceTypeVersion")}
    seen.update({key: data.get(key) for key in ("stackTags", "previousStackTags", "systemTags", "previousSystemTags")})
    print("SEEN " + json.dumps(seen, sort_keys=True))
    return {"status": "SUCCESS", "resourceModel": {"Id": "e-1"}}
'''


def test_the_request_carries_what_the_service_sends_and_tags_from_the_request_file(tmp_path: Path) -> None:
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(AWS_STYLE_SCHEMA))
    (tmp_path / "echo.py").write_text(ECHO_HANDLER)
    request = tmp_path / "update.json"
    request.write_text(json.dumps({
        "desiredResourceState": {"Text": "x"},
        "previousResourceState": {"Text": "y"},
        "stackTags": {"team": "blue"},
        "previousStackTags": {"team": "red"},
        "systemTags": {"aws:cloudformation:stack-name": "demo"},
    }))
    flags = ["--handler", "echo.handler", "--schema", str(schema_file), "--code-dir", str(tmp_path), "--contract", "off", "--region", "eu-west-1"]
    run = cfnrun("invoke", "UPDATE", str(request), *flags, "--json")
    logs = "".join(e.get("logs", "") for e in events(run) if e["event"] == "invocation")
    seen = json.loads(logs.split("SEEN ", 1)[1].splitlines()[0])
    assert seen == {
        "responseEndpoint": "https://cloudformation.eu-west-1.amazonaws.com",
        "resourceTypeVersion": "00000001",
        "stackTags": {"team": "blue"},
        "previousStackTags": {"team": "red"},
        "systemTags": {"aws:cloudformation:stack-name": "demo"},
        "previousSystemTags": None,
    }
    request.write_text(json.dumps({"desiredResourceState": {}, "stackTags": {"team": 7}}))
    bad = cfnrun("invoke", "UPDATE", str(request), *flags)
    assert bad.returncode == 2 and "'stackTags' maps tag keys to tag values, all strings" in bad.stderr


def test_cfnrun_test_explains_a_language_cfn_no_longer_knows_and_checks_python(sample: Callable[[str], Path]) -> None:
    pytest.importorskip("rpdk.core")
    project = sample("parameter")
    config = project / ".rpdk-config"
    config.write_text(config.read_text().replace('"python311"', '"python37"'))
    run = cfnrun("test", str(project))
    assert run.returncode == 2 and ".rpdk-config says language 'python37'" in run.stderr and "python311" in run.stderr
    assert "Traceback" not in run.stderr
    missing = cfnrun("test", str(project), "--python", "/nonexistent/python3")
    assert missing.returncode == 2 and "/nonexistent/python3" in missing.stderr


def test_serve_keeps_the_handlers_answer_when_a_schema_pattern_does_not_compile(
    tmp_path: Path, serve: Callable[..., ServerProcess]
) -> None:
    """Under serve the answer once became ServiceException after the handler ran, losing what it created."""
    project = tmp_path / "patterns"
    project.mkdir()
    (project / "patterned.py").write_text(PATTERN_HANDLER)
    (project / "cfnrun-test-patterns.json").write_text(json.dumps(AWS_STYLE_SCHEMA))
    (project / "template.yml").write_text(
        "Resources:\n  TypeFunction:\n    Type: AWS::Serverless::Function\n    Properties:\n"
        "      Handler: patterned.handler\n      Runtime: python3.9\n"
    )
    config = {"typeName": "Cfnrun::Test::Patterns", "language": "python39", "runtime": "python3.9", "entrypoint": "patterned.handler"}
    (project / ".rpdk-config").write_text(json.dumps(config))
    server = serve(project, "--no-reload", "--workers", "1", "--contract", "strict")
    assert sum("schema pattern at /properties/Odd/pattern" in line for line in server.output) == 1  # said once, at start
    payload = json.loads(_serve_request("CREATE", {"Text": "ok \U0001F600", "Odd": "ab"}))
    payload["resourceType"] = "Cfnrun::Test::Patterns"
    answer = server.client().invoke(FunctionName="TypeFunction", Payload=json.dumps(payload).encode())
    assert "FunctionError" not in answer
    body = json.loads(answer["Payload"].read())
    assert (body["status"], body["resourceModel"]["Id"]) == ("SUCCESS", "p-1"), body
    assert not any("Traceback" in line or "ServiceException" in line for line in server.output)


def test_invoke_moto_watch_keeps_one_server_across_runs(sample: Callable[[str], Path]) -> None:
    import subprocess
    import sys

    project = sample("parameter")
    env = {key: value for key, value in {**__import__("os").environ, **NO_LOCAL_CREDENTIALS}.items() if value is not None}
    process = subprocess.Popen(
        [sys.executable, "-m", "cfnrun", "invoke", "CREATE", "requests/create.json", "--moto", "--watch", "--json"],
        cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        assert process.stdout is not None

        def next_result() -> Dict[str, Any]:
            for line in process.stdout:  # type: ignore[union-attr]
                record: Dict[str, Any] = json.loads(line)
                if record["event"] == "result":
                    return record
            raise AssertionError("cfnrun exited before another result")

        assert next_result()["status"] == "SUCCESS"
        request = project / "requests" / "create.json"
        request.write_text(request.read_text() + "\n")  # a save: the same CREATE again
        again = next_result()
        assert (again["status"], again["errorCode"]) == ("FAILED", "AlreadyExists")  # the parameter is still there
    finally:
        process.kill()
        process.wait(timeout=20)


def test_serve_shows_the_handlers_traceback_without_cfnrun_frames(tmp_path: Path, serve: Callable[..., ServerProcess]) -> None:
    import shutil

    from conftest import LIB_PROVIDER

    project = tmp_path / "thing"
    shutil.copytree(LIB_PROVIDER, project)
    (project / "thing.json").rename(project / "cfnrun-test-thing.json")
    (project / "template.yml").write_text(
        "Resources:\n  TypeFunction:\n    Type: AWS::Serverless::Function\n    Properties:\n"
        "      Handler: lib_behaviours.raiser\n      Runtime: python3.9\n"
    )
    config = {"typeName": "Cfnrun::Test::Thing", "language": "python39", "runtime": "python3.9", "entrypoint": "lib_behaviours.raiser"}
    (project / ".rpdk-config").write_text(json.dumps(config))
    server = serve(project, "--no-reload", "--workers", "1", "--contract", "off")
    payload = json.loads(_serve_request("CREATE", {"Name": "widget"}))
    payload["resourceType"] = "Cfnrun::Test::Thing"
    server.client().invoke(FunctionName="TypeFunction", Payload=json.dumps(payload).encode())
    server.wait_for_line(r"KeyError: 'missing-configuration'")
    traceback = "\n".join(server.output)
    assert "lib_behaviours.py" in traceback and "resource.py" in traceback
    assert "runtime/worker/" not in traceback and "in checked" not in traceback


def test_cfnrun_test_takes_export_values_from_the_command_line_and_looks_nothing_up(sample: Callable[[str], Path]) -> None:
    pytest.importorskip("rpdk.core")
    project = sample("parameter")
    run = cfnrun(
        "test", str(project), "--moto", "--export", "CfnrunSampleValue=given-here", "--virtual-clock",
        "--", "-k", "contract_create_read", env=NO_LOCAL_CREDENTIALS, timeout=300,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "not valid cloudformation exports" not in run.stdout + run.stderr  # moto holds no export: none was looked up
    assert "created /cfnrun/contract/parameter = 'given-here'" in (project / ".cfnrun" / "test.log").read_text()
    bad = cfnrun("test", str(project), "--export", "NoEqualsSign")
    assert bad.returncode == 2 and "--export 'NoEqualsSign': expected NAME=VALUE" in bad.stderr


def test_cfnrun_test_creates_dependency_stacks_so_exports_resolve_offline(sample: Callable[[str], Path]) -> None:
    """--stack TEMPLATE: a local stack on the suite's own serve exports what the inputs read; deleted afterwards."""
    pytest.importorskip("rpdk.core")
    project = sample("parameter")
    run = cfnrun(
        "test", str(project), "--moto", "--stack", str(project / "dependencies.yaml"), "--virtual-clock",
        "--", "-k", "contract_create_read", env=NO_LOCAL_CREDENTIALS, timeout=300,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "stack cfnrun-test-dependencies from" in run.stdout
    assert "created /cfnrun/contract/parameter = 'from cfnrun-test-dependencies'" in (project / ".cfnrun" / "test.log").read_text()
    broken = project / "broken.yaml"
    broken.write_text("Resources:\n  X:\n    Type: [unclosed\n", encoding="utf-8")
    refused = cfnrun("test", str(project), "--moto", "--stack", str(broken), env=NO_LOCAL_CREDENTIALS, timeout=300)
    assert refused.returncode == 1 and f"--stack {broken}: Template format error" in refused.stdout, refused.stdout + refused.stderr


def test_cfnrun_test_looks_exports_up_where_cloudformation_endpoint_url_says(
    sample: Callable[[str], Path], moto_url: str
) -> None:
    """--moto takes the handlers' calls; --cloudformation-endpoint-url, not the embedded server, answers ListExports."""
    pytest.importorskip("rpdk.core")
    project = sample("parameter")
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {"Value": {"Value": "from-elsewhere", "Export": {"Name": "CfnrunSampleValue"}}},
    }
    aws("cloudformation", moto_url).create_stack(StackName="exports-elsewhere", TemplateBody=json.dumps(template))
    run = cfnrun(
        "test", str(project), "--moto", "--cloudformation-endpoint-url", moto_url, "--virtual-clock", "--contract", "off",
        "--inject", "ssm:GetParameter=+10ms", "--", "-k", "contract_create_delete", env=NO_LOCAL_CREDENTIALS, timeout=300,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    log = (project / ".cfnrun" / "test.log").read_text()
    assert "created /cfnrun/contract/parameter = 'from-elsewhere'" in log
    assert "⚡ injected --inject ssm:GetParameter=+10ms into ssm:GetParameter (matching call 1)" in log  # --inject on cfnrun test
    assert "contract violation" not in run.stdout  # --contract off: no checks, so no summary either
    assert "no contract violations" not in run.stdout

