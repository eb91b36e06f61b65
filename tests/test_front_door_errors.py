"""Bad values at the front door: one line, exit 2, before anything starts, for every command that takes them."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from conftest import cfnrun

BAD_VALUES = [
    ("--aws-endpoint", "http://", "no host"),
    ("--aws-endpoint", "http://[::1", "Invalid IPv6 URL"),
    ("--aws-endpoint", "http://127.0.0.1:99999", "Port out of range"),
    ("--inject", "ssm:PutParameter=+99999999999999s", "a delay is at most 900 s"),
    ("--inject", "nosuchservice:Op=X", "botocore knows no service 'nosuchservice'"),
]


@pytest.mark.parametrize("command", ["invoke", "serve"])
@pytest.mark.parametrize("flag, value, problem", BAD_VALUES)
def test_a_bad_value_is_refused_before_anything_starts(
    sample: Callable[[str], Path], command: str, flag: str, value: str, problem: str
) -> None:
    args = ["invoke", "LIST"] if command == "invoke" else ["serve", "--port", "0", "--no-reload"]
    run = cfnrun(*args, flag, value, cwd=sample("note"), timeout=60)
    assert run.returncode == 2, run.stdout + run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("cfnrun: error:")]
    assert len(errors) == 1 and problem in errors[0] and flag in errors[0], run.stderr
    assert "Traceback" not in run.stderr and "listening" not in run.stdout + run.stderr


@pytest.mark.parametrize("depth", [150, 100_000])
def test_a_deeply_nested_request_file_is_a_usage_error(sample: Callable[[str], Path], tmp_path: Path, depth: int) -> None:
    request = tmp_path / "deep.json"
    request.write_text('{"desiredResourceState": {"Title": "t", "Body": ' + "[" * depth + "]" * depth + "}}")
    run = cfnrun("invoke", "CREATE", str(request), cwd=sample("note"))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "nests more than 100 levels deep" in run.stderr and "Traceback" not in run.stderr


HUGE_ID = str(2**64)


@pytest.mark.parametrize("args", [("history", "show", HUGE_ID), ("replay", HUGE_ID), ("history", "--limit", HUGE_ID)])
def test_an_id_or_limit_past_sqlites_integers_is_answered_cleanly(sample: Callable[[str], Path], args: "tuple[str, ...]") -> None:
    project = sample("note")
    assert cfnrun("invoke", "LIST", cwd=project, env={"CFNRUN_HISTORY": "on"}).returncode == 0
    run = cfnrun(*args, cwd=project)
    assert "Traceback" not in run.stderr and "OverflowError" not in run.stderr, run.stderr
    if args[1] == "--limit":  # more than there are: all of them
        assert run.returncode == 0 and "LIST" in run.stdout
    else:
        assert run.returncode == 2 and f"no operation {HUGE_ID}" in run.stderr


def test_a_damaged_history_is_named_and_left_as_it_was(sample: Callable[[str], Path]) -> None:
    project = sample("note")
    history = project / ".cfnrun" / "history.sqlite3"
    history.parent.mkdir()
    history.write_bytes(b"not a database at all" * 100)
    for args in (("history",), ("history", "show", "1"), ("replay", "1")):
        run = cfnrun(*args, cwd=project)
        assert run.returncode == 2, run.stdout + run.stderr
        assert run.stderr.strip().endswith("file is not a database; move it aside (or delete it) and cfnrun starts a new history")
        assert "Traceback" not in run.stderr
    assert history.read_bytes() == b"not a database at all" * 100  # only read: nothing written into it
    recorded = cfnrun("invoke", "LIST", cwd=project, env={"CFNRUN_HISTORY": "on"})
    assert recorded.returncode == 0 and "this operation is not recorded in the history" in recorded.stderr  # the run still runs


def test_reading_history_writes_nothing(sample: Callable[[str], Path]) -> None:
    project = sample("note")
    assert cfnrun("invoke", "LIST", cwd=project, env={"CFNRUN_HISTORY": "on"}).returncode == 0
    folder = project / ".cfnrun"
    before = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}
    assert cfnrun("history", cwd=project).returncode == 0
    assert cfnrun("history", "show", "1", cwd=project).returncode == 0
    assert {path.name: path.stat().st_mtime_ns for path in folder.iterdir()} == before


BROKEN_MOTO = {
    "raises": "class ThreadedMotoServer:\n"
              "    def __init__(self, **kwargs): pass\n"
              "    def start(self): raise OSError(98, 'Address already in use')\n",
    # as moto does it: the server is built on a thread of its own, and start() waits for it without a limit
    "thread fails": "import threading\n"
                    "class ThreadedMotoServer:\n"
                    "    def __init__(self, **kwargs): self.ready = threading.Event()\n"
                    "    def _build(self): raise ImportError('No module named flask_cors')\n"
                    "    def start(self):\n"
                    "        threading.Thread(target=self._build, daemon=True).start()\n"
                    "        self.ready.wait()\n",
}


@pytest.mark.parametrize("command", ["invoke", "serve"])
@pytest.mark.parametrize("how", sorted(BROKEN_MOTO))
def test_a_moto_server_that_does_not_start_is_one_line(sample: Callable[[str], Path], tmp_path: Path, command: str, how: str) -> None:
    """moto stands in for AWS here, so its failure is staged with a broken moto package: no AWS is mocked."""
    package = tmp_path / "site" / "moto"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "server.py").write_text(BROKEN_MOTO[how])
    args = ["invoke", "LIST"] if command == "invoke" else ["serve", "--port", "0", "--no-reload"]
    run = cfnrun(*args, "--moto", cwd=sample("note"), env={"PYTHONPATH": str(tmp_path / "site")}, timeout=60)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "--moto: moto's server did not start: " in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert ("Address already in use" if how == "raises" else "No module named flask_cors") in run.stderr


@pytest.mark.parametrize("command", ["invoke", "serve", "test", "validate", "history", "replay"])
def test_help_reads_whole_at_80_columns(command: str) -> None:
    run = cfnrun(command, "--help", env={"COLUMNS": "80", "TERM": "xterm"})
    assert run.returncode == 0, run.stderr
    assert max(len(line) for line in run.stdout.splitlines()) <= 80
    assert "…" not in run.stdout.replace("UPDATE_… or DELETE_…", "")  # nothing cut short (that one is the help's own text)
    if command == "invoke":
        assert "--lambda-endpoint" in run.stdout and "timeoutInMinutes" in run.stdout


@pytest.mark.parametrize(
    "args, problem",
    [
        (("invoke", "LIST", "--time-scale", "abc"), "'abc' is not a number"),
        (("serve", "--port", "99999"), "99999 is out of range: it must be at least 0 and at most 65535"),
        (("serve", "--workers", "two"), "'two' is not a whole number"),
    ],
)
def test_a_bad_number_is_named_plainly(sample: Callable[[str], Path], args: "tuple[str, ...]", problem: str) -> None:
    run = cfnrun(*args, cwd=sample("note"))
    assert run.returncode == 2 and problem in run.stderr and "Traceback" not in run.stderr, run.stderr


@pytest.mark.parametrize("target, said", [("nothere.json", "nothere.json: no such schema file"), ("nothere", "nothere: no such schema file or project folder")])
def test_validate_names_a_missing_file_as_such(tmp_path: Path, target: str, said: str) -> None:
    run = cfnrun("validate", target, cwd=tmp_path)
    assert run.returncode == 2 and said in run.stderr and "project folder not found" not in run.stderr, run.stderr


def test_a_request_path_resolves_in_the_project_too_and_says_so(sample: Callable[[str], Path]) -> None:
    hook = sample("hook")
    run = cfnrun("invoke", "preCreate", "requests/create.json", "--project", str(hook), "--virtual-clock", cwd=hook.parent)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"request file requests/create.json: not in the current folder; using {hook / 'requests' / 'create.json'}" in run.stderr
    missing = cfnrun("invoke", "preCreate", "requests/nothere.json", "--project", str(hook), cwd=hook.parent)
    assert missing.returncode == 2 and "looked in the current folder and in the project" in missing.stderr


def test_a_pre_update_without_previous_properties_gets_a_note(sample: Callable[[str], Path]) -> None:
    hook = sample("hook")
    (hook / "bare-update.json").write_text('{"targetName": "AWS::S3::Bucket", "targetModel": {"resourceProperties": {"BucketName": "b"}}}')
    run = cfnrun("invoke", "preUpdate", "bare-update.json", "--virtual-clock", cwd=hook)
    assert "preUpdate without previousResourceProperties" in run.stderr, run.stderr


def test_cloud_control_validation_names_a_write_only_property_and_quotes_little(sample: Callable[[str], Path], serve: Callable) -> None:
    from botocore.exceptions import ClientError

    from test_cloudcontrol import NOTE, cloudcontrol

    client = cloudcontrol(serve(sample("note"), "--no-reload"))

    def refused(desired: dict) -> str:
        with pytest.raises(ClientError) as raised:
            client.create_resource(TypeName=NOTE, DesiredState=json.dumps(desired))
        assert raised.value.response["Error"]["Code"] == "ValidationException"
        return str(raised.value.response["Error"]["Message"])

    secret = refused({"Title": "t", "AccessPassword": "s3cr"})
    assert "s3cr" not in secret and "#/AccessPassword: expected minLength: 8, actual: 4" in secret  # the service's words: no value
    huge = refused({"Title": "t", "Content": "x" * 5_000_000})
    assert "#/Content: expected maxLength: 4096, actual: 5000000" in huge and len(huge) < 1000
    deep = "[" * 5000 + "]" * 5000
    with pytest.raises(ClientError) as raised:
        client.create_resource(TypeName=NOTE, DesiredState='{"Title": "t", "Tags": ' + deep + "}")
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert "nests more than 100 levels deep" in raised.value.response["Error"]["Message"]
