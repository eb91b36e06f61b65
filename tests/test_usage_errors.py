"""User mistakes get one clear line and exit status 2, never a traceback (issue #10, items 2, 4, 6, 7, naming).

Runs against a real ``cfn init`` project (the ``fresh`` fixture in conftest) and the real CLI.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, List

import pytest

import cfnrun as cfnrun_package

from conftest import FRESH_SCHEMA as SCHEMA, MISBEHAVING, cfnrun, edit_schema, events

NO_DEBUGPY_PYTHON = "/usr/bin/python3"


def assert_usage_error(run: subprocess.CompletedProcess, *expected: str) -> None:
    output = run.stdout + run.stderr
    assert run.returncode == 2, output
    assert "Traceback" not in output, output
    for text in expected:
        assert text in run.stderr, output


def bad_type(document: dict) -> None:
    document["properties"]["Title"]["type"] = "strng"


# -- 2. a broken schema, a missing interpreter --------------------------------------------------


def test_misspelled_type_in_the_schema_names_the_file_and_pointer(fresh: Path) -> None:
    edit_schema(fresh, bad_type)
    run = cfnrun("invoke", "CREATE", cwd=fresh)
    assert_usage_error(run, SCHEMA, "/properties/Title/type", "'strng' is not a JSON Schema type")
    serve = cfnrun("serve", "--port", "0", cwd=fresh, timeout=60)
    assert_usage_error(serve, SCHEMA, "/properties/Title/type")
    assert "listening" not in serve.stdout + serve.stderr and "Cloud Control API at" not in serve.stdout + serve.stderr


def test_json_mode_reports_the_usage_error_as_an_event(fresh: Path) -> None:
    edit_schema(fresh, bad_type)
    run = cfnrun("invoke", "CREATE", "--json", cwd=fresh)
    assert_usage_error(run)
    [error] = events(run)
    assert error["event"] == "error" and "/properties/Title/type" in error["message"] and error["exitCode"] == 2


def test_validate_still_lists_every_problem_of_such_a_schema(fresh: Path) -> None:
    edit_schema(fresh, bad_type)
    run = cfnrun("validate", "--json", cwd=fresh)
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["errors"] >= 1
    assert "/properties/Title/type" in [p["pointer"] for p in report["problems"]]


def test_missing_interpreter_is_a_usage_error_for_invoke_and_serve(fresh: Path) -> None:
    for command in (["invoke", "CREATE"], ["serve", "--port", "0"]):
        run = cfnrun(*command, "--python", "/nonexistent/python3", cwd=fresh, timeout=60)
        assert_usage_error(run, "--python /nonexistent/python3: no such interpreter")


def test_a_schema_broken_by_a_save_keeps_serve_serving(fresh: Path, serve: Callable) -> None:
    server = serve(fresh)
    edit_schema(fresh, bad_type)
    server.wait_for_line(r"/properties/Title/type.*still serving the previous configuration")
    answer = server.client().invoke(FunctionName="TypeFunction", Payload=json.dumps({"action": "READ", "requestData": {}}))
    assert answer["StatusCode"] == 200 and "FunctionError" not in answer


def _break(project: Path, name: str, text: str) -> None:
    (project / name).write_text(text)


BROKEN_INPUTS: List[tuple] = [
    # (what, how to break the project, extra CLI args, expected text in stderr)
    ("schema not JSON", lambda p: _break(p, SCHEMA, "{"), [], "not valid JSON"),
    ("schema a list", lambda p: _break(p, SCHEMA, "[]"), [], "must be a JSON object"),
    ("properties a list", lambda p: edit_schema(p, lambda d: d.update(properties=[])), [], "/properties"),
    ("required a string", lambda p: edit_schema(p, lambda d: d.update(required="Title")), [], "/required"),
    ("$ref to nothing", lambda p: edit_schema(p, lambda d: d["properties"]["Title"].update({"$ref": "#/definitions/Nope"})), [],
     "'#/definitions/Nope' points to nothing"),
    ("template not YAML", lambda p: _break(p, "template.yml", "Resources: [\n"), [], "not valid YAML"),
    ("template without Handler", lambda p: _break(p, "template.yml", "Resources:\n  TypeFunction:\n    Type: AWS::Serverless::Function\n"),
     [], "Handler is missing"),
    (".rpdk-config not JSON", lambda p: _break(p, ".rpdk-config", "nope"), [], "not valid JSON"),
    ("java project", lambda p: _break(p, ".rpdk-config", json.dumps({"typeName": "Org::Svc::Thing", "language": "java", "entrypoint": "x"})),
     [], "cfnrun runs Python providers"),
    ("request file YAML", lambda p: _break(p, "req.json", "desiredResourceState:\n  Title: x\n"), ["req.json"], "YAML"),
    ("request file a list", lambda p: _break(p, "req.json", "[]"), ["req.json"], "expected a JSON object"),
    ("desired state a string", lambda p: _break(p, "req.json", '{"desiredResourceState": "x"}'), ["req.json"], "must be a JSON object"),
    ("request file missing", lambda p: None, ["nope.json"], "request file not found"),
    ("request file a folder", lambda p: None, ["src"], "is a folder"),
    ("unknown function", lambda p: None, ["--function", "Nope"], "unknown function 'Nope'"),
    ("handler without schema", lambda p: None, ["--handler", "x.y"], "--handler and --schema go together"),
    ("interpreter that is not Python", lambda p: None, ["--python", "/bin/true"], "does not look like a Python interpreter"),
    ("unknown profile", lambda p: None, ["--profile", "no-such-profile-here"], "--profile no-such-profile-here: no such profile"),
    ("unknown log level", lambda p: None, ["--log-level", "LOUD"], "is not a logging level"),
]


@pytest.mark.parametrize("what,breaks,args,expected", BROKEN_INPUTS, ids=[case[0] for case in BROKEN_INPUTS])
def test_broken_inputs_are_usage_errors(fresh: Path, what: str, breaks: Callable, args: List[str], expected: str) -> None:
    breaks(fresh)
    run = cfnrun("invoke", "CREATE", *args, cwd=fresh)
    assert_usage_error(run, expected)


# -- 4. cfnrun test -- -k NAME -------------------------------------------------------------------


def test_pytest_arguments_after_double_dash_are_not_taken_for_the_project(fresh: Path) -> None:
    run = cfnrun("test", "--", "-k", "no_test_has_this_name", cwd=fresh, timeout=300)
    assert "project folder not found" not in run.stderr, run.stdout + run.stderr
    assert "deselected" in run.stdout, run.stdout + run.stderr


# -- 7. one region rule ------------------------------------------------------------------------


def test_serve_honours_aws_region_like_invoke(serve: Callable, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    server = serve(MISBEHAVING)
    answer = server.client().invoke(FunctionName="TypeFunction", Payload=json.dumps({"do": "context"}))
    env = json.loads(answer["Payload"].read())["env"]
    assert env["AWS_REGION"] == "eu-west-3"


# -- 6. --debug-port without debugpy -------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists(NO_DEBUGPY_PYTHON), reason="needs a system Python")
def test_debug_port_without_debugpy_fails_up_front(fresh: Path) -> None:
    probe = subprocess.run([NO_DEBUGPY_PYTHON, "-c", "import debugpy"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip(f"{NO_DEBUGPY_PYTHON} has debugpy")
    run = cfnrun("serve", "--port", "0", "--debug-port", "5999", "--python", NO_DEBUGPY_PYTHON, cwd=fresh, timeout=60)
    assert_usage_error(run, "--debug-port needs debugpy", "pip install debugpy")


# -- naming the project --------------------------------------------------------------------------


def test_every_command_takes_project_and_finds_it_from_a_subfolder(fresh: Path, serve: Callable, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    read = cfnrun("invoke", "READ", "--project", str(fresh), "--json", cwd=elsewhere)
    assert read.returncode in (0, 1) and events(read)[-1]["event"] == "result", read.stdout + read.stderr
    deep = fresh / "src" / "org_svc_thing"
    found = cfnrun("invoke", "READ", "--json", cwd=deep)
    assert events(found)[-1]["event"] == "result", found.stdout + found.stderr
    assert cfnrun("validate", "-p", str(fresh), cwd=elsewhere).returncode in (0, 1)
    assert cfnrun("validate", cwd=deep).returncode in (0, 1)
    server = serve(fresh, "--project", str(fresh))  # `serve DIR --project DIR`: the same folder twice is fine
    assert server.process.poll() is None
    both = cfnrun("serve", str(fresh), "--project", str(elsewhere), cwd=elsewhere)
    assert_usage_error(both, "two projects named")
    none = cfnrun("invoke", "READ", cwd=elsewhere)
    assert_usage_error(none, ".rpdk-config: not found", "--project DIR")


def test_print_request_gives_the_handler_request_without_credentials(fresh: Path) -> None:
    env = {"AWS_ACCESS_KEY_ID": "AKIASECRETSHOULDNOTPRINT", "AWS_SECRET_ACCESS_KEY": "s3cr3t-value"}
    (fresh / "req.json").write_text(json.dumps({"desiredResourceState": {"Title": "a title that is long enough"}}))
    run = cfnrun("invoke", "UPDATE", "req.json", "--print-request", cwd=fresh, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    request = json.loads(run.stdout)
    assert request["action"] == "UPDATE" and request["requestData"]["resourceProperties"]["Title"].startswith("a title")
    assert "AKIASECRETSHOULDNOTPRINT" not in run.stdout and "s3cr3t-value" not in run.stdout


def test_copied_interpreter_path_on_path_is_accepted(fresh: Path) -> None:
    """``--python python3`` (a name on PATH, not a file path) is an interpreter too."""
    name = Path(sys.executable).name
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = cfnrun("invoke", "READ", "--python", name, "--json", cwd=fresh, env=env)
    assert events(run)[-1]["event"] == "result", run.stdout + run.stderr
    assert shutil.which(name, path=env["PATH"])


# -- request files and generated-project pitfalls ----------------------------------------------------


def test_bare_example_input_is_sent_as_the_desired_state(fresh: Path) -> None:
    model = {"TPSCode": "ABC123456", "Title": "a title that is long enough", "TestCode": "NOT_STARTED"}
    (fresh / "example_inputs" / "inputs_1_create.json").write_text(json.dumps(model))
    run = cfnrun("invoke", "CREATE", "example_inputs/inputs_1_create.json", "--json", cwd=fresh)
    assert "is a bare resource model" in run.stderr, run.stdout + run.stderr
    assert events(run)[-1]["resourceModel"] == model


def test_misspelled_request_key_is_named_with_a_suggestion(fresh: Path) -> None:
    (fresh / "req.json").write_text(json.dumps({"desiredResourceState": {}, "typeConfiguraton": {}}))
    run = cfnrun("invoke", "READ", "req.json", cwd=fresh)
    assert "unknown key 'typeConfiguraton' is ignored (did you mean 'typeConfiguration'?)" in run.stderr


def test_update_without_previous_state_gets_a_note(fresh: Path) -> None:
    (fresh / "req.json").write_text(json.dumps({"desiredResourceState": {"TPSCode": "ABC123456"}}))
    run = cfnrun("invoke", "UPDATE", "req.json", cwd=fresh)
    assert "UPDATE without previousResourceState" in run.stderr


def test_missing_models_py_says_run_cfn_generate(fresh: Path) -> None:
    (fresh / "src" / "org_svc_thing" / "models.py").unlink()
    run = cfnrun("invoke", "READ", cwd=fresh)
    assert_usage_error(run, "ImportModuleError", "run 'cfn generate'")


# -- 5. the recipes of README.md and docs/, as written -------------------------------------------------


def _readme_line(prefix: str) -> str:
    """The first line of README.md, then of the docs pages, that starts with prefix (a trailing comment cut)."""
    root = Path(__file__).resolve().parents[1]
    for page in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        for line in page.read_text().splitlines():
            if line.startswith(prefix):
                return line.split("  #")[0].strip()
    raise AssertionError(f"no line of README.md or docs/ starts with {prefix!r}")


def _no_aws_configuration(tmp_path: Path) -> dict:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return {**env, "HOME": str(home), "NO_COLOR": "1"}


def test_readme_aws_cli_recipe_works_as_written(fresh: Path, serve: Callable, tmp_path: Path) -> None:
    aws = shutil.which("aws", path=os.path.dirname(sys.executable)) or shutil.which("aws")
    if aws is None:
        pytest.skip("the aws CLI is not installed")
    (fresh / "req.json").write_text(json.dumps({"desiredResourceState": {"TPSCode": "ABC123456"}}))
    env = _no_aws_configuration(tmp_path)
    printed = subprocess.run([sys.executable, "-m", "cfnrun", "invoke", "READ", "req.json", "--print-request"],
                             cwd=fresh, env=env, capture_output=True, text=True, timeout=60)
    assert printed.returncode == 0, printed.stderr
    (fresh / "event.json").write_text(printed.stdout)
    server = serve(fresh)
    recipe = _readme_line("aws lambda invoke").replace("http://127.0.0.1:3001", server.url).split()
    completed = subprocess.run([aws, *recipe[1:]], cwd=fresh, env=env, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    answer = json.loads((fresh / "out.json").read_text())
    assert answer["status"] == "SUCCESS" and answer["resourceModel"] == {"TPSCode": "ABC123456"}


def test_offline_cfn_invoke_needs_no_exported_credentials(fresh: Path, serve: Callable, tmp_path: Path) -> None:
    pytest.importorskip("rpdk.core")
    # cfn invoke insists on both keys
    (fresh / "req.json").write_text(json.dumps({"desiredResourceState": {"TPSCode": "ABC123456"}, "previousResourceState": None}))
    server = serve(fresh, "--sts-standin")
    recipe = _readme_line("python -m cfnrun.app.cfn_offline")
    args = recipe.replace("URL", server.url).replace("CREATE requests/create.json", "READ req.json").split()
    completed = subprocess.run([sys.executable, *args[1:]], cwd=fresh, env=_no_aws_configuration(tmp_path),
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert '"status": "SUCCESS"' in completed.stdout


def test_posting_a_request_file_to_serve_gets_a_hint(fresh: Path, serve: Callable) -> None:
    server = serve(fresh)
    server.client().invoke(FunctionName="TypeFunction", Payload=json.dumps({"desiredResourceState": {"TPSCode": "ABC123456"}}))
    server.wait_for_line(r"'cfn invoke' request file, not a HandlerRequest.*--print-request")


def test_tracebacks_shown_to_users_have_no_cfnrun_frames(fresh: Path) -> None:
    handlers = fresh / "src" / "org_svc_thing" / "handlers.py"
    handlers.write_text(handlers.read_text().replace(
        "    # TODO: put code here\n    return ProgressEvent(\n        status=OperationStatus.SUCCESS,\n        resourceModel=model,",
        "    raise RuntimeError('read broke')\n    return ProgressEvent(\n        status=OperationStatus.SUCCESS,\n        resourceModel=model,",
    ))
    run = cfnrun("invoke", "READ", cwd=fresh)
    assert "read broke" in run.stdout and "handlers.py" in run.stdout, run.stdout
    package = str(Path(cfnrun_package.__file__).resolve().parent)  # not "cfnrun/": a clone folder may be named so
    assert package not in run.stdout and 'cfnrun/runtime' not in run.stdout.replace(str(fresh), ""), run.stdout


def test_json_mode_reports_a_provider_that_does_not_load_as_an_event(fresh: Path) -> None:
    (fresh / "src" / "org_svc_thing" / "models.py").unlink()
    run = cfnrun("invoke", "READ", "--json", cwd=fresh)
    assert_usage_error(run)
    [error] = events(run)
    assert error["event"] == "error" and "cfn generate" in error["message"] and error["details"]


def test_naming_the_test_entrypoint_sends_it_a_sam_tests_event(fresh: Path) -> None:
    (fresh / "req.json").write_text(json.dumps({"desiredResourceState": {"TPSCode": "ABC123456"}}))
    run = cfnrun("invoke", "READ", "req.json", "--function", "TestEntrypoint", "--json", cwd=fresh)
    assert "TestEntrypoint is the test entrypoint: it gets a sam-tests event" in run.stderr
    result = events(run)[-1]
    assert result["status"] == "SUCCESS" and result["resourceModel"] == {"TPSCode": "ABC123456"}, run.stdout + run.stderr


def test_serve_with_an_unknown_profile_is_a_usage_error(fresh: Path, tmp_path: Path) -> None:
    run = cfnrun("serve", "--port", "0", "--profile", "no-such-profile-here", cwd=fresh, env={"HOME": str(tmp_path)}, timeout=60)
    assert_usage_error(run, "--profile no-such-profile-here: no such profile")
