"""Fast start (#16): each command loads only what it runs, and serve answers before every worker is warm."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

from cfnrun import __version__
from conftest import LOCAL_STATE, MISBEHAVING, PATIENCE_S, ROOT, ServerProcess, cfnrun, pid_alive, read_until, result_of, sandboxes_of, start_serve, wait_until

# What only `cfnrun serve` and `cfnrun test` need.
SERVER_AND_SUITE = ["aiohttp", "rpdk", "cfnrun.app.serve", "cfnrun.app.contract_suite", "cfnrun.api.lambda_api"]
# What the command line needs before it knows the command.
PROJECT_MODELS = ["pydantic", "jsonschema", "yaml", "asyncio", "watchfiles", "botocore", "sqlite3", "moto"]


def no_aws_configuration(home: Path) -> Dict[str, str]:
    """An environment with no AWS variables and no ~/.aws: nothing botocore could read a region from."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    return {**env, "HOME": str(home), "AWS_CONFIG_FILE": str(home / "no-such-config")}


def loaded_after(args: List[str], cwd: Path = ROOT, env: Optional[Dict[str, str]] = None) -> List[str]:
    """Run the command line in a fresh interpreter; the heavy modules it loaded."""
    watched = SERVER_AND_SUITE + PROJECT_MODELS
    script = (
        "import json, sys\n"
        "from cfnrun.cli import app\n"
        "try:\n"
        f"    app({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('LOADED', json.dumps([m for m in {watched!r} if m in sys.modules]))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=str(cwd), capture_output=True, text=True, timeout=90, env=env)
    marker = [line for line in run.stdout.splitlines() if line.startswith("LOADED ")]
    assert marker, run.stdout + run.stderr
    return list(json.loads(marker[-1][len("LOADED "):]))


def test_importing_the_command_line_loads_no_server_suite_or_models() -> None:
    assert loaded_after([]) == []


def test_version_and_help_load_nothing_heavy() -> None:
    assert loaded_after(["--version"]) == []
    assert loaded_after(["--help"]) == []
    # typer's own command help brings its pydantic adapter; nothing of cfnrun's heavy parts.
    assert not set(loaded_after(["invoke", "--help"])) & set(SERVER_AND_SUITE + ["jsonschema", "asyncio"])
    version = cfnrun("--version")
    assert version.returncode == 0 and version.stdout.startswith("cfnrun ")


def test_version_answers_before_the_command_line_library_loads() -> None:
    # The command ends the process itself (exit handlers run, output flushed, no module teardown).
    script = "import atexit, runpy, sys\nsys.argv = ['cfnrun', '--version']\natexit.register(lambda: print('typer' in sys.modules))\nrunpy.run_module('cfnrun', run_name='__main__')\n"
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert run.stdout.splitlines() == [f"cfnrun {__version__}", "False"], run.stderr
    script = shutil.which("cfnrun", path=os.path.dirname(sys.executable))
    assert script is not None and "cfnrun.__main__" in Path(script).read_text()  # the console script goes the same way


def test_validate_loads_neither_server_nor_suite(sample: Callable[[str], Path]) -> None:
    loaded = loaded_after(["validate", str(sample("note"))])
    assert "jsonschema" in loaded  # it did validate
    assert not set(loaded) & set(SERVER_AND_SUITE + ["asyncio", "watchfiles"])


def test_invoke_loads_neither_server_nor_suite_nor_watcher(sample: Callable[[str], Path], tmp_path: Path) -> None:
    note = sample("note")
    loaded = loaded_after(["invoke", "LIST", "--project", str(note), "--no-credentials"], env=no_aws_configuration(tmp_path))
    assert "asyncio" in loaded and "sqlite3" in loaded  # it did run a worker, and recorded the operation
    # The file watcher only for --watch, moto only for --moto, botocore only when there is an AWS
    # configuration to read a region or credentials from.
    assert not set(loaded) & set(SERVER_AND_SUITE + ["watchfiles", "botocore", "moto"])


def test_invoke_reads_keys_in_the_environment_without_botocore(sample: Callable[[str], Path], tmp_path: Path) -> None:
    # The default path (credentials resolved) of a shell or CI job that exports its keys: botocore's
    # import would stand on a one-shot invoke's critical path, for what its chain reads first anyway.
    env = {**no_aws_configuration(tmp_path), "AWS_ACCESS_KEY_ID": "AKIDFASTSTART", "AWS_SECRET_ACCESS_KEY": "fast-start", "AWS_REGION": "eu-west-1"}
    loaded = loaded_after(["invoke", "LIST", "--project", str(sample("note"))], env=env)
    assert "asyncio" in loaded and "sqlite3" in loaded  # it did run the operation
    assert "botocore" not in loaded


def test_invoke_on_a_machine_with_no_aws_configuration_finds_no_credentials_without_botocore(sample: Callable[[str], Path], tmp_path: Path) -> None:
    # A new user's first run (README's first command): default flags, no keys, no ~/.aws. botocore's chain could only
    # find nothing; its import would stand on the critical path to say so.
    loaded = loaded_after(["invoke", "LIST", "--project", str(sample("note"))], env=no_aws_configuration(tmp_path))
    assert "asyncio" in loaded and "sqlite3" in loaded  # it did run the operation
    assert "botocore" not in loaded


def test_jsonschema_loads_for_a_schema_not_yet_found_usable_and_for_the_models_it_checks(sample: Callable[[str], Path], tmp_path: Path) -> None:
    # The schema's usability is checked once while it is unchanged (model/usable_schemas.py); the
    # contract's shape validator compiles with the first model it checks (contract/shape.py).
    note, env = sample("note"), {**no_aws_configuration(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    listed = ["invoke", "LIST", "--project", str(note), "--no-credentials"]
    assert "jsonschema" in loaded_after(listed, env=env)  # checked: the first time this schema is seen
    assert "jsonschema" not in loaded_after(listed, env=env)  # an empty store: no model to check
    created = cfnrun("invoke", "CREATE", str(note / "requests" / "create.json"), "--project", str(note), "--no-credentials", env=env)
    assert created.returncode == 0, created.stdout + created.stderr
    assert "jsonschema" in loaded_after(listed, env=env)  # the note LIST returns is checked against the schema


def test_a_one_shot_invoke_read_exactly_runs_without_the_command_line_library(sample: Callable[[str], Path], tmp_path: Path) -> None:
    # Through cfnrun/__main__.py, as the console script runs it; whether typer was ever imported, said at exit.
    script = (
        "import atexit, runpy, sys\nsys.argv = ['cfnrun'] + sys.argv[1:]\n"
        "atexit.register(lambda: print('TYPER', 'typer' in sys.modules))\nrunpy.run_module('cfnrun', run_name='__main__')\n"
    )
    env = {**no_aws_configuration(tmp_path), "NO_COLOR": "1"}
    note = sample("note")
    run = subprocess.run([sys.executable, "-c", script, "invoke", "LIST", "--no-credentials"], cwd=str(note), capture_output=True, text=True, timeout=90, env=env)
    assert run.returncode == 0 and "SUCCESS LIST" in run.stdout and "TYPER False" in run.stdout, run.stdout + run.stderr
    # A value the library refuses: it reads the line, and says so in its own words.
    refused = ["invoke", "LIST", "--no-credentials", "--max-reinvoke", "-1"]
    run = subprocess.run([sys.executable, "-c", script, *refused], cwd=str(note), capture_output=True, text=True, timeout=90, env=env)
    assert run.returncode == 2 and "Invalid value for '--max-reinvoke'" in run.stderr and "TYPER True" in run.stdout, run.stdout + run.stderr


def test_serve_read_exactly_runs_without_the_command_line_library(sample: Callable[[str], Path], tmp_path: Path) -> None:
    # Through cfnrun/__main__.py, as the console script runs it; whether typer was ever imported, said at exit.
    script = (
        "import atexit, runpy, sys\nsys.argv = ['cfnrun'] + sys.argv[1:]\n"
        "atexit.register(lambda: print('TYPER', 'typer' in sys.modules, flush=True))\nrunpy.run_module('cfnrun', run_name='__main__')\n"
    )
    env = {**os.environ, "NO_COLOR": "1"}
    note = sample("note")
    process = subprocess.Popen(
        [sys.executable, "-c", script, "serve", "--port", "0", "--no-reload"], cwd=str(note), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, env=env,
    )
    try:
        started = read_until(process, r"listening on http://127\.0\.0\.1:\d+")
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    output = "".join(started) + rest
    assert process.returncode == 0 and "stopped" in rest and "TYPER False" in rest, output  # Ctrl-C: a clean stop, as through typer
    # A value the library refuses: it reads the line, and says so in its own words.
    refused = ["serve", "--port", "0", "--workers", "0", "--no-reload"]
    run = subprocess.run([sys.executable, "-c", script, *refused], cwd=str(note), capture_output=True, text=True, timeout=90, env=env)
    assert run.returncode == 2 and "Invalid value for '--workers'" in run.stderr and "TYPER True" in run.stdout, run.stdout + run.stderr


def test_serve_checks_a_schema_found_usable_before_without_jsonschema(sample: Callable[[str], Path], tmp_path: Path) -> None:
    # Whether jsonschema was imported once serve's late parts loaded (a ListStacks call waits for them), said at exit.
    import boto3

    script = (
        "import atexit, runpy, sys\nsys.argv = ['cfnrun'] + sys.argv[1:]\n"
        "atexit.register(lambda: print('JSONSCHEMA', 'jsonschema' in sys.modules, flush=True))\n"
        "runpy.run_module('cfnrun', run_name='__main__')\n"
    )
    env = {**os.environ, "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    note = sample("note")

    def loaded_jsonschema() -> bool:
        process = subprocess.Popen(
            [sys.executable, "-c", script, "serve", "--port", "0", "--no-reload"], cwd=str(note), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, env=env,
        )
        try:
            url = read_until(process, r"listening on http://127\.0\.0\.1:\d+")[-1].split("listening on ")[1].split()[0]
            client = boto3.client(
                "cloudformation", endpoint_url=url, region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
            )
            assert client.list_stacks()["StackSummaries"] == []
            process.send_signal(signal.SIGINT)
            rest, _ = process.communicate(timeout=90)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        assert process.returncode == 0 and "JSONSCHEMA" in rest, rest
        return "JSONSCHEMA True" in rest

    assert loaded_jsonschema()  # checked: the first time this schema is seen
    assert not loaded_jsonschema()  # found usable before: no call checked a model, so jsonschema never loaded


def test_history_loads_neither_server_nor_suite_nor_worker(sample: Callable[[str], Path]) -> None:
    loaded = loaded_after(["history", "--project", str(sample("note"))])
    assert "sqlite3" in loaded
    assert not set(loaded) & set(SERVER_AND_SUITE + ["asyncio", "watchfiles", "botocore", "jsonschema"])


GATED_MODULE = '''"""Imports only once the test opens the gate (a FIFO): a provider that is slow to import."""
import os

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gate")) as gate:
    gate.read()


def handler(event, context):
    return {"status": "SUCCESS", "gated": True, "pid": os.getpid()}
'''


def with_gate(project: Path) -> Path:
    """A copy of the misbehaving fixture with gated.py, whose import waits until ``open_gate``."""
    shutil.copytree(MISBEHAVING, project, ignore=LOCAL_STATE)
    (project / "gated.py").write_text(GATED_MODULE)
    os.mkfifo(project / "gate")
    return project


@pytest.fixture
def gated_project(tmp_path: Path) -> Path:
    """The misbehaving fixture, whose TestEntrypoint function cannot finish importing until the gate opens."""
    project = with_gate(tmp_path / "gated")
    template = project / "template.yml"
    template.write_text(
        template.read_text()
        + "\n  TestEntrypoint:\n    Type: AWS::Serverless::Function\n    Properties:\n"
        + "      Handler: gated.handler\n      Runtime: python3.9\n"
    )
    return project


def open_gate(project: Path) -> None:
    with open(project / "gate", "w"):  # blocks until the worker is reading: the import then ends
        pass


def saw(server: ServerProcess, pattern: str) -> None:
    """Wait for a console line matching ``pattern``, unless one already went by."""
    if not any(re.search(pattern, line) for line in server.output):
        server.wait_for_line(pattern)


def test_serve_answers_before_every_worker_is_warm(gated_project: Path, serve: Callable[..., ServerProcess]) -> None:
    server = serve(gated_project, "--no-reload")
    client = server.client()
    gated: Dict[str, Any] = {}
    waiting = threading.Thread(
        target=lambda: gated.update(json.loads(client.invoke(FunctionName="TestEntrypoint", Payload=b"{}")["Payload"].read()))
    )
    waiting.start()
    # TestEntrypoint is still importing, yet TypeFunction answers: its call waits for no other worker.
    answer = json.loads(client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}')["Payload"].read())
    assert answer["count"] == 1
    saw(server, r"^  TypeFunction\s+behaviours\.handler  warm in \d+ ms$")
    assert waiting.is_alive() and not gated  # the gated call waits for its own worker
    assert not [line for line in server.output if "TestEntrypoint" in line and "warm" in line]
    open_gate(gated_project)
    saw(server, r"^  TestEntrypoint\s+gated\.handler  warm in \d+ ms$")
    waiting.join(timeout=20)
    assert gated == {"status": "SUCCESS", "gated": True, "pid": gated["pid"]}
    saw(server, r"^ERROR: Broken does not load")  # its worker exited after failing to import
    # The early call took the warming worker, not one more of its own: that worker alone, beside the zygote
    # the project's functions share (started once TypeFunction was warm).
    wait_until(lambda: bool(server.zygote_pids()), what="the functions' zygote")
    assert [pid for pid in server.worker_pids("TestEntrypoint") if pid not in server.zygote_pids()] == [int(gated["pid"])]


def test_serve_warms_the_first_function_first_and_a_call_does_not_wait_its_turn(
    tmp_path: Path, serve: Callable[..., ServerProcess]
) -> None:
    """TypeFunction (declared first) imports alone; the others start once it is warm, or when a call asks for one."""
    project = with_gate(tmp_path / "first")
    template = project / "template.yml"
    template.write_text(
        template.read_text().replace("Handler: behaviours.handler", "Handler: gated.handler", 1)
        + "\n  Plain:\n    Type: AWS::Serverless::Function\n    Properties:\n      Handler: behaviours.handler\n"
    )
    server = serve(project, "--no-reload")
    answer = json.loads(server.client().invoke(FunctionName="Plain", Payload=b'{"do": "echo"}')["Payload"].read())
    assert answer["count"] == 1  # answered while TypeFunction still imports: it did not wait for its turn
    saw(server, r"^  Plain\s+behaviours\.handler  warm in \d+ ms$")
    assert len(server.worker_pids("Plain")) == 1  # the call's worker was the warm-up's too: no second one
    assert not [line for line in server.output if "Broken" in line]  # its turn has not come
    open_gate(project)
    saw(server, r"^ERROR: Broken does not load")
    warm = next(i for i, line in enumerate(server.output) if re.search(r"^  TypeFunction\s+gated\.handler  warm", line))
    assert warm < next(i for i, line in enumerate(server.output) if "Broken does not load" in line)


def test_serve_stopped_while_a_worker_imports_leaves_no_process(gated_project: Path, serve: Callable[..., ServerProcess]) -> None:
    server = serve(gated_project, "--no-reload")
    saw(server, r"^  TypeFunction\s+behaviours\.handler  warm")
    saw(server, r"^ERROR: Broken does not load")
    # TypeFunction's worker, the zygote started once it was warm, and TestEntrypoint's first worker: a fork of that
    # zygote, still importing.
    wait_until(
        lambda: len(server.zygote_pids()) == 1
        and len([pid for pid in server.worker_pids("misbehaving-function") if pid not in server.zygote_pids()]) == 1
        and len(server.worker_pids("TestEntrypoint")) == 1,
        what="TypeFunction's worker, the zygote and the importing fork",
    )
    workers = server.worker_pids()
    server.stop_cleanly()
    wait_until(lambda: not any(pid_alive(pid) for pid in workers), timeout=30, what="workers to exit")


def test_serve_on_a_taken_port_is_a_usage_error_while_workers_import(gated_project: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        # Workers start before the port is tried; the gated one is still importing when serve gives up.
        run = cfnrun("serve", str(gated_project), "--port", str(port), "--no-reload")
    assert run.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in run.stderr
    assert "pick another port with --port N" in run.stderr  # what to do about it (#30 item 13)
    assert "Traceback" not in run.stdout + run.stderr


# -- one-shot invoke: the worker imports the provider while the command line loads --------------

# Runs `cfnrun ARGS` through cfnrun/__main__.py, as the console script does, and records each worker
# spawned, or handed its spec after its interpreter started waiting for it (runtime/waiting_worker.py):
# its pid, and which of the command line's heavy modules were loaded by then; and each interpreter started
# waiting (WAITING: its pid, and which of cfnrun's first imports were loaded by then). With EARLY_REGION
# set, the early guess names that region, so it differs from what the command needs.
RECORD_SPAWNS = '''
import json, os, sys
import cfnrun.runtime.waiting_worker as waiting_worker

HEAVY = ["asyncio", "typer", "pydantic", "jsonschema", "cfnrun.cli", "cfnrun.contract.checker", "cfnrun.app.invoke"]
FIRST = ["dataclasses", "typing", "subprocess", "cfnrun.app.early_start", "cfnrun.runtime.spec"]  # cfnrun's own first imports
spawned = []
waiting = []


def record_spawns():  # the spawns through runtime/spec.py, and a wrong early guess (EARLY_REGION)
    import cfnrun.runtime.spec as specs
    from cfnrun.app import early_start

    start_worker_process = specs.start_worker_process

    def recording_start(spec, ends):
        process = start_worker_process(spec, ends)
        spawned.append({"pid": process.pid, "loaded": [m for m in HEAVY if m in sys.modules], "region": spec.region})
        return process

    specs.start_worker_process = recording_start
    if os.environ.get("EARLY_REGION"):
        import dataclasses
        guess = early_start.early_spec
        early_start.early_spec = lambda argv, command: dataclasses.replace(guess(argv, command), region=os.environ["EARLY_REGION"])


start_waiting = waiting_worker.WaitingWorker.start
sandbox_frame = waiting_worker.WaitingWorker.sandbox_frame


def recording_waiting(cls, *args):  # the first thing cfnrun invoke does: what was loaded then is cfnrun's, not this script's
    worker = start_waiting(*args)
    if worker is not None:
        waiting.append({"pid": worker.process.pid, "loaded": [m for m in FIRST if m in sys.modules], "parent": os.getpid()})
    record_spawns()
    return worker


def recording_hand(self, spec):
    spawned.append({"pid": self.process.pid, "loaded": [m for m in HEAVY if m in sys.modules], "region": spec.region, "waited": True})
    return sandbox_frame(self, spec)


waiting_worker.WaitingWorker.start = classmethod(recording_waiting)
waiting_worker.WaitingWorker.sandbox_frame = recording_hand
if sys.argv[1:2] != ["invoke"]:
    record_spawns()
sys.argv = ["cfnrun"] + sys.argv[1:]
from cfnrun.__main__ import _command as main  # the command, without ending the process
code = 0
try:
    main()
except SystemExit as exit:
    code = exit.code
print("WAITING", json.dumps(waiting), flush=True)
print("SPAWNED", json.dumps(spawned), code, flush=True)
'''


def run_recording_spawns(
    project: Path, home: Path, *args: str, **env: str
) -> "tuple[List[Dict[str, Any]], int, subprocess.CompletedProcess]":
    """``cfnrun ARGS`` run through RECORD_SPAWNS in ``project``: the workers spawned (or handed their spec), the exit
    status, the run. Every interpreter started waiting for its spec is gone (reaped) when the command returns."""
    spawned, code, run, waiting = run_recording_waits(project, home, *args, **env)
    assert not any(pid_alive(started["pid"]) for started in waiting), (waiting, run.stderr)
    return spawned, code, run


def run_recording_waits(
    project: Path, home: Path, *args: str, **env: str
) -> "tuple[List[Dict[str, Any]], int, subprocess.CompletedProcess, List[Dict[str, Any]]]":
    """``run_recording_spawns``, and the interpreters started waiting for their spec."""
    run = subprocess.run(
        [sys.executable, "-c", RECORD_SPAWNS, *args], cwd=str(project), capture_output=True, text=True, timeout=90,
        env={**no_aws_configuration(home), "NO_COLOR": "1", **env},
    )
    marker = [line for line in run.stdout.splitlines() if line.startswith("SPAWNED ")]
    assert marker, run.stdout + run.stderr
    spawned, code = marker[-1][len("SPAWNED "):].rsplit(" ", 1)
    waiting = json.loads(next(line for line in run.stdout.splitlines() if line.startswith("WAITING "))[len("WAITING "):])
    return list(json.loads(spawned)), int(code), run, list(waiting)


def test_invoke_starts_its_worker_before_the_command_line_schema_and_contract_load(
    sample: Callable[[str], Path], tmp_path: Path
) -> None:
    spawned, code, run, waiting = run_recording_waits(sample("note"), tmp_path, "invoke", "LIST", "--no-credentials")
    assert code == 0 and "SUCCESS LIST" in run.stdout, run.stdout + run.stderr
    assert len(spawned) == 1  # the early worker ran the operation: no second one
    assert spawned[0]["loaded"] == []  # the event loop, typer, pydantic, jsonschema, the contract checker: all loaded after
    # Its interpreter started before any of cfnrun's own first imports, and was then handed the spec.
    assert waiting == [{"pid": spawned[0]["pid"], "loaded": [], "parent": waiting[0]["parent"]}] and spawned[0]["waited"]
    assert not pid_alive(spawned[0]["pid"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["CREATE_PRE_PROVISION"], "is a hook invocation point, but this is a resource type project"),  # found by the command
        (["LIST", "--max-reinvoke", "-1"], "Invalid value for '--max-reinvoke'"),  # found by the command line library
        (["LIST", "nope.json"], "nope.json: request file not found"),
    ],
)
def test_a_usage_error_leaves_no_early_worker(sample: Callable[[str], Path], tmp_path: Path, args: List[str], message: str) -> None:
    spawned, code, run = run_recording_spawns(sample("note"), tmp_path, "invoke", *args, "--no-credentials")
    assert code == 2 and message in run.stderr, run.stderr
    assert len(spawned) == 1 and spawned[0]["loaded"] == []  # it did start early
    assert not pid_alive(spawned[0]["pid"])  # and it is gone (reaped) by the time the command returns
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["FOO"], "Invalid value for 'ACTION': 'FOO' is not an action"),
        (["LIST", "--bogus"], "No such option: --bogus"),
    ],
)
def test_a_command_line_the_early_start_cannot_read_leaves_no_waiting_interpreter(
    sample: Callable[[str], Path], tmp_path: Path, args: List[str], message: str
) -> None:
    spawned, code, run, waiting = run_recording_waits(sample("note"), tmp_path, "invoke", *args)
    assert message in run.stderr and code == 2, run.stdout + run.stderr
    assert spawned == [] and len(waiting) == 1  # an interpreter started waiting, and was never handed a spec
    assert not pid_alive(waiting[0]["pid"])  # killed and reaped before the command returned
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("args", [["LIST", "--help"], ["LIST", "--in-process", "--no-credentials"]])
def test_no_interpreter_waits_where_no_worker_starts_early(sample: Callable[[str], Path], tmp_path: Path, args: List[str]) -> None:
    spawned, code, run, waiting = run_recording_waits(sample("note"), tmp_path, "invoke", *args)
    assert code == 0 and ("Usage:" in run.stdout or "SUCCESS LIST" in run.stdout), run.stdout + run.stderr
    assert waiting == [] and spawned == []


SEEN = '''
import json, os, subprocess, sys


def handler(event, context):
    seen = {
        "pid": os.getpid(), "cwd": os.getcwd(), "environ": dict(os.environ), "warnoptions": sys.warnoptions,
        "child": subprocess.run(["env"], capture_output=True, text=True).stdout.splitlines(),  # the C library's environment
        "open": [os.readlink("/proc/self/fd/" + fd) for fd in os.listdir("/proc/self/fd") if os.path.exists("/proc/self/fd/" + fd)],
    }
    return {"status": "SUCCESS", "resourceModel": {"Id": json.dumps(seen)}}
'''


def seeing_project(tmp_path: Path, environment: str = "GREETING: hello") -> Path:
    """The misbehaving fixture whose TypeFunction answers what its worker sees: pid, folder, environment."""
    project = tmp_path / "seeing"
    shutil.copytree(MISBEHAVING, project, ignore=LOCAL_STATE)
    (project / "seen.py").write_text(SEEN)
    template = (project / "template.yml").read_text().replace("behaviours.handler", "seen.handler", 1)
    (project / "template.yml").write_text(template.replace("GREETING: hello", environment))
    (project / "sub").mkdir()
    return project


def seen_by_the_handler(run: "subprocess.CompletedProcess[str]") -> Dict[str, Any]:
    assert run.returncode == 0, run.stdout + run.stderr
    lines = "".join(line + "\n" for line in run.stdout.splitlines() if line.startswith("{"))  # RECORD_SPAWNS's own lines left out
    return dict(json.loads(result_of(subprocess.CompletedProcess(run.args, 0, lines, ""))["resourceModel"]["Id"]))


def test_the_waiting_interpreter_becomes_the_worker_with_the_functions_folder_and_exact_environment(tmp_path: Path) -> None:
    project = seeing_project(tmp_path)
    # Run from a subfolder, with a variable the function's environment drops (--aws-endpoint pops it): the interpreter
    # started there, with it, and must end up in the project's folder without it.
    spawned, code, run, waiting = run_recording_waits(
        project / "sub", tmp_path, "invoke", "CREATE", "--json", "--contract", "off", "--no-credentials", "--region", "eu-west-1",
        "--aws-endpoint", "http://127.0.0.1:9", AWS_IGNORE_CONFIGURED_ENDPOINT_URLS="true",
    )
    seen = seen_by_the_handler(run)
    assert [started["pid"] for started in waiting] == [spawned[0]["pid"]] == [seen["pid"]] and spawned[0]["waited"]
    assert seen["cwd"] == str(project.resolve())
    environ = seen["environ"]
    assert "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS" not in environ and environ["AWS_ENDPOINT_URL"] == "http://127.0.0.1:9"
    assert environ["GREETING"] == "hello" and environ["AWS_REGION"] == "eu-west-1" and environ["_HANDLER"] == "seen.handler"
    assert environ["AWS_LAMBDA_FUNCTION_NAME"] == "misbehaving-function" and environ["TZ"] == ":UTC"
    assert environ["CFNRUN_SANDBOX"].startswith(f"{run_pid(run)}-")
    # The processes the handler starts get the same environment (the C library's, not only os.environ's).
    child = dict(line.split("=", 1) for line in seen["child"] if "=" in line)
    assert {name: child.get(name) for name in environ} == environ
    assert not pid_alive(seen["pid"])


def test_the_waiting_interpreter_inherits_no_fd_but_its_own(tmp_path: Path) -> None:
    # A cfnrun started with an inheritable fd (a CI runner's, a shell's ``exec 3>file``): a worker started by subprocess
    # never had it; the interpreter started before anything loaded must not have it either.
    project = seeing_project(tmp_path)
    with open(tmp_path / "held-by-cfnrun", "w") as held:
        os.set_inheritable(held.fileno(), True)
        run = subprocess.run(
            [sys.executable, "-c", RECORD_SPAWNS, "invoke", "CREATE", "--json", "--contract", "off", "--no-credentials"],
            cwd=str(project), capture_output=True, text=True, timeout=90, pass_fds=(held.fileno(),),
            env={**no_aws_configuration(tmp_path), "NO_COLOR": "1"},
        )
    seen = seen_by_the_handler(run)
    assert '"waited": true' in run.stdout  # the waiting interpreter was the worker
    assert str(tmp_path / "held-by-cfnrun") not in seen["open"], seen["open"]


def run_pid(run: "subprocess.CompletedProcess[str]") -> int:
    """The pid of the cfnrun process RECORD_SPAWNS ran (the waiting interpreter's marker starts with it)."""
    return int(json.loads(next(line for line in run.stdout.splitlines() if line.startswith("WAITING "))[len("WAITING "):])[0]["parent"])


def test_a_spec_the_waiting_interpreter_does_not_fit_gets_an_interpreter_started_with_its_environment(tmp_path: Path) -> None:
    # PYTHONWARNINGS is read as the interpreter starts: the one started before the template was read cannot take it.
    project = seeing_project(tmp_path, "PYTHONWARNINGS: ignore::DeprecationWarning")
    spawned, code, run, waiting = run_recording_waits(project, tmp_path, "invoke", "CREATE", "--json", "--contract", "off", "--no-credentials")
    seen = seen_by_the_handler(run)
    assert len(waiting) == 1 and not pid_alive(waiting[0]["pid"])  # started, then killed and reaped
    assert len(spawned) == 1 and not spawned[0].get("waited") and spawned[0]["pid"] == seen["pid"] != waiting[0]["pid"]
    assert seen["warnoptions"] == ["ignore::DeprecationWarning"]


def test_an_early_worker_started_for_other_settings_is_killed_and_not_used(sample: Callable[[str], Path], tmp_path: Path) -> None:
    note = sample("note")
    spawned, code, run = run_recording_spawns(note, tmp_path, "invoke", "LIST", "--no-credentials", "--json", EARLY_REGION="ap-south-1")
    assert code == 0, run.stderr
    assert len(spawned) == 2 and spawned[1]["loaded"] != []  # the command started its own worker
    assert not any(pid_alive(worker["pid"]) for worker in spawned)
    assert '"status": "SUCCESS"' in run.stdout or '"status":"SUCCESS"' in run.stdout, run.stdout


@pytest.mark.parametrize(
    "config, profile_env, region",
    [
        ("[profile dev]\nregion = eu-central-1\n[default]\nregion = sa-east-1\n", {"AWS_PROFILE": "dev"}, "eu-central-1"),
        ("[default]\nregion = ap-southeast-2\n", {}, "ap-southeast-2"),
        ("[profile dev]\noutput = json\n", {"AWS_PROFILE": "dev"}, "us-east-1"),  # no region named: the default one
    ],
    ids=["named-profile", "default-profile", "no-region-named"],
)
def test_invoke_starts_early_with_the_region_an_aws_config_file_names(
    sample: Callable[[str], Path], tmp_path: Path, config: str, profile_env: Dict[str, str], region: str
) -> None:
    # A developer's machine: ~/.aws/config, no AWS_REGION. The command reads the region with botocore;
    # the early start guesses it from the file, so the worker imports the provider meanwhile.
    (tmp_path / "aws-config").write_text(config)
    note = sample("note")
    spawned, code, run = run_recording_spawns(
        note, tmp_path, "invoke", "LIST", "--no-credentials", "--json", AWS_CONFIG_FILE=str(tmp_path / "aws-config"), **profile_env
    )
    assert code == 0, run.stdout + run.stderr
    # started early for that region, and adopted: the command, which asks botocore, needed the same worker
    assert spawned == [{"pid": spawned[0]["pid"], "loaded": [], "region": region, "waited": True}]
    assert not pid_alive(spawned[0]["pid"])
    assert '"status": "SUCCESS"' in run.stdout or '"status":"SUCCESS"' in run.stdout, run.stdout


def test_a_stale_template_cache_costs_a_process_never_a_different_run(sample: Callable[[str], Path], tmp_path: Path) -> None:
    note = sample("note")
    cache = tmp_path / "cache"
    for _ in range(2):  # a miss, then a hit: the guess is right both times
        spawned, code, run = run_recording_spawns(note, tmp_path, "invoke", "LIST", "--no-credentials", XDG_CACHE_HOME=str(cache))
        assert code == 0 and len(spawned) == 1, run.stdout + run.stderr
    [entry] = (cache / "cfnrun" / "templates").glob("*.json")
    data = json.loads(entry.read_text())
    for function in data["functions"]:
        function["memory_mb"] = 512  # what the template does not say (256)
    entry.write_text(json.dumps(data))
    spawned, code, run = run_recording_spawns(note, tmp_path, "invoke", "LIST", "--no-credentials", "--json", XDG_CACHE_HOME=str(cache))
    assert code == 0, run.stderr
    assert len(spawned) == 2 and spawned[1]["loaded"] != []  # the stale guess was killed; the command started its own
    assert not any(pid_alive(worker["pid"]) for worker in spawned)
    assert '"status": "SUCCESS"' in run.stdout or '"status":"SUCCESS"' in run.stdout, run.stdout


@pytest.mark.parametrize("flag", ["--in-process", "--print-request", "--watch"])
def test_invoke_starts_nothing_early_where_it_would_not_run_one_local_worker(
    sample: Callable[[str], Path], tmp_path: Path, flag: str
) -> None:
    from cfnrun.app import early_start

    note = sample("note")
    assert early_start.early_spec(["LIST", "--project", str(note)]) is not None
    assert early_start.early_spec(["LIST", "--project", str(note), flag]) is None


def _spec_the_command_uses(args: List[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """Parse ``cfnrun invoke ARGS`` with the real command line and prepare it; the worker spec it would start."""
    import cfnrun.app.invoke as invoke
    from cfnrun.cli import app

    specs = []
    prepare = invoke.prepare

    def prepare_and_stop(settings: Any) -> Any:
        specs.append(invoke.local_spec(prepare(settings)))
        raise invoke.CfnrunError("stop here")

    monkeypatch.setattr(invoke, "prepare", prepare_and_stop)
    try:
        app(["invoke", *args], standalone_mode=False)
    except BaseException:  # noqa: B902 - the command line turns the stop into an exit
        pass
    assert len(specs) == 1
    return specs[0]


SAM_TESTS_EVENT = {"credentials": {}, "action": "CREATE", "request": {"desiredResourceState": {}}, "region": "ap-northeast-1"}


@pytest.mark.parametrize(
    "args",
    [
        ["LIST", "--no-credentials"],
        ["READ", "--region", "eu-west-1", "--log-level", "debug", "--memory-limit", "off", "--account-id", "111122223333"],
        ["CREATE", "--function", "TestEntrypoint", "--json", "--no-credentials"],
        ["CREATE", "sam-event.json", "--no-credentials"],
        ["CREATE", "sam-event.json", "--entrypoint", "type", "--region=sa-east-1", "--no-credentials"],
        ["LIST", "--entrypoint", "test", "--no-credentials"],
        ["CREATE", "--aws-endpoint", "http://127.0.0.1:5000", "--inject", "ssm:PutParameter=ThrottlingException", "--no-credentials"],
    ],
)
def test_the_early_guess_is_the_spec_the_command_uses(
    args: List[str], sample: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cfnrun.app import early_start

    note = sample("note")
    (note / "sam-event.json").write_text(json.dumps(SAM_TESTS_EVENT))
    monkeypatch.chdir(note)
    for name, value in no_aws_configuration(tmp_path).items():
        monkeypatch.setenv(name, value)
    for name in [name for name in os.environ if name.startswith("AWS_") and name != "AWS_CONFIG_FILE"]:
        monkeypatch.delenv(name)
    guess = early_start.early_spec(args)
    assert guess is not None
    assert guess == _spec_the_command_uses(args, monkeypatch)


# -- serve: the first worker imports the provider while the command line and the server load ------


def serve_recording_spawns(tmp_path: Path, **env: str) -> "tuple[Dict[str, Any], List[Dict[str, Any]]]":
    """``cfnrun serve`` on a copy of the misbehaving fixture, recording each worker spawned (RECORD_SPAWNS):
    the answer to one echo call, and the spawns, once serve has stopped."""
    project = tmp_path / "misbehaving"
    shutil.copytree(MISBEHAVING, project, ignore=LOCAL_STATE)
    serving = subprocess.Popen(
        [sys.executable, "-c", RECORD_SPAWNS, "serve", "--port", "0", "--no-reload"], cwd=str(project),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**no_aws_configuration(tmp_path), "NO_COLOR": "1", **env},
    )
    try:
        assert serving.stdout is not None
        lines = []
        for line in serving.stdout:
            lines.append(line)
            if "listening on" in line:
                break
        url = re.search(r"listening on (http://\S+)", "".join(lines))
        assert url is not None, "".join(lines)
        request = urllib.request.Request(f"{url.group(1)}/2015-03-31/functions/TypeFunction/invocations", data=b'{"do": "echo"}')
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.loads(response.read())
        serving.terminate()
        rest, _ = serving.communicate(timeout=30)
    finally:
        serving.kill()
    spawned = json.loads(next(line for line in rest.splitlines() if line.startswith("SPAWNED ")).split(" ", 1)[1].rsplit(" ", 1)[0])
    return answer, spawned


def test_serve_starts_its_first_worker_before_the_command_line_and_server_load(tmp_path: Path) -> None:
    answer, spawned = serve_recording_spawns(tmp_path)
    # TypeFunction's worker started before typer, the event loop, pydantic, jsonschema or the server loaded,
    # and it is the worker that answered the first call.
    assert spawned[0]["loaded"] == []
    assert answer["pid"] == spawned[0]["pid"] and answer["count"] == 1
    assert not any(pid_alive(worker["pid"]) for worker in spawned)


def test_serve_kills_an_early_worker_started_for_other_settings_and_starts_its_own(tmp_path: Path) -> None:
    answer, spawned = serve_recording_spawns(tmp_path, EARLY_REGION="ap-south-1")
    assert len(spawned) >= 2 and spawned[0]["loaded"] == [] and spawned[1]["loaded"] != []
    assert answer["pid"] == spawned[1]["pid"]  # serve's own worker answered, not the wrong guess
    assert not any(pid_alive(worker["pid"]) for worker in spawned)


def _spec_serve_uses(args: List[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """Parse ``cfnrun serve ARGS`` with the real command line; the worker spec of the first function it serves."""
    import cfnrun.app.serve as serve_module
    from cfnrun.cli import app
    from cfnrun.runtime.spec import worker_spec

    specs = []

    async def capture(sources: Any, settings: Any, console: Any, early: Any = None) -> None:
        project = sources.providers[0]
        specs.append(worker_spec(project, next(iter(project.functions.values())), settings.runtime))

    monkeypatch.setattr(serve_module, "serve_forever", capture)
    try:
        app(["serve", *args], standalone_mode=False)
    except BaseException:  # noqa: B902 - the command line turns what ends it into an exit
        pass
    assert len(specs) == 1
    return specs[0]


@pytest.mark.parametrize(
    "args",
    [
        [],
        [".", "--no-reload", "--port", "0", "--sts-standin", "--contract", "strict"],
        ["--region", "eu-west-1", "--log-level", "debug", "--memory-limit", "off", "--account-id", "111122223333", "--workers", "2"],
        ["--aws-endpoint", "http://127.0.0.1:5000", "--inject", "ssm:PutParameter=ThrottlingException", "--debug-wait"],
        ["-p", ".", "--python", sys.executable],
    ],
)
def test_the_early_guess_is_the_spec_serve_uses(args: List[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cfnrun.app import early_start

    project = tmp_path / "misbehaving"
    shutil.copytree(MISBEHAVING, project, ignore=LOCAL_STATE)
    monkeypatch.chdir(project)
    for name, value in no_aws_configuration(tmp_path).items():
        monkeypatch.setenv(name, value)
    for name in [name for name in os.environ if name.startswith("AWS_") and name != "AWS_CONFIG_FILE"]:
        monkeypatch.delenv(name)
    guess = early_start.early_spec(args, "serve")
    assert guess is not None
    assert guess == _spec_serve_uses(args, monkeypatch)


@pytest.mark.parametrize("inside_a_project", [True, False])
def test_the_early_guess_with_more_providers_is_the_spec_serve_uses(
    inside_a_project: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside a project its first function starts early; outside any, the first --provider's."""
    from cfnrun.app import early_start

    project, note, elsewhere = tmp_path / "misbehaving", tmp_path / "note", tmp_path / "elsewhere"
    shutil.copytree(MISBEHAVING, project, ignore=LOCAL_STATE)
    shutil.copytree(ROOT / "samples" / "note", note, ignore=LOCAL_STATE)
    elsewhere.mkdir()
    monkeypatch.chdir(project if inside_a_project else elsewhere)
    for name, value in no_aws_configuration(tmp_path).items():
        monkeypatch.setenv(name, value)
    for name in [name for name in os.environ if name.startswith("AWS_") and name != "AWS_CONFIG_FILE"]:
        monkeypatch.delenv(name)
    args = ["--provider", str(note), "--functions", str(ROOT / "tests" / "fixtures" / "functions" / "template.yaml")]
    guess = early_start.early_spec(args, "serve")
    assert guess is not None and guess.code_dir == (project if inside_a_project else note / "src")
    assert guess == _spec_serve_uses(args, monkeypatch)


@pytest.mark.parametrize("flag", [["--debug-port", "5999"], ["--moto"], ["--help"]])
def test_serve_starts_nothing_early_where_the_pool_sets_its_worker_up(flag: List[str]) -> None:
    from cfnrun.app import early_start

    assert early_start.early_spec([str(MISBEHAVING)], "serve") is not None
    assert early_start.early_spec([str(MISBEHAVING), *flag], "serve") is None


# -- serve listens before what reviews calls has loaded -------------------------------------------


def _serve_with_the_late_parts_held(monkeypatch: pytest.MonkeyPatch, contract: Any, scenario: Callable[..., Any], grace_s: float = 10.0) -> str:
    """Run serve in-process with what it loads after listening held back until ``scenario`` opens the gate.

    ``scenario(server, post, gate)`` runs once serve listens; ``post(path, body, headers)`` sends a
    request and returns (status, JSON body). Returns serve's console output.
    """
    import asyncio
    import io

    import aiohttp

    import cfnrun.app.late_parts as late_parts_module
    import cfnrun.app.serve as serve_module
    from cfnrun.model.project import load_project
    from cfnrun.ui.console import Console

    gate = threading.Event()
    load_late = late_parts_module._import_late_and_check
    monkeypatch.setattr(late_parts_module, "_import_late_and_check", lambda project: (gate.wait(60), load_late(project)))
    console = io.StringIO()

    async def started(server: Any) -> None:
        async with aiohttp.ClientSession() as session:

            async def post(path: str, body: bytes, headers: Dict[str, str]) -> Any:
                async with session.post(server.url + path, data=body, headers=headers) as response:
                    text = await response.text()
                    return response.status, json.loads(text) if text else None

            await scenario(server, post, gate)

    settings = serve_module.ServeSettings(port=0, contract=contract, shutdown_timeout_s=grace_s)
    asyncio.run(serve_module.serve_forever(serve_module.Sources.of(load_project(MISBEHAVING)), settings, Console(console), on_started=started))
    return console.getvalue()


INVOKE_TYPE_FUNCTION = "/2015-03-31/functions/TypeFunction/invocations"


async def still_waiting(request: Any) -> bool:
    """True when ``request`` has no answer half a second on: a call takes milliseconds here, so it waits on something."""
    import asyncio

    try:
        await asyncio.wait_for(asyncio.shield(request), 0.5)
    except asyncio.TimeoutError:
        return True
    return False


def test_a_call_is_answered_before_the_review_loads_and_reviewed_once_it_has(monkeypatch: pytest.MonkeyPatch) -> None:
    """The contract checker and history are not on the way to an answer; Cloud Control waits for its request store."""
    import asyncio

    from cfnrun.contract.mode import ContractMode

    seen: Dict[str, Any] = {}

    async def scenario(server: Any, post: Callable[..., Any], gate: threading.Event) -> None:
        seen["answer"] = await post(INVOKE_TYPE_FUNCTION, b'{"do": "echo"}', {})
        seen["reviewed_before_loading"] = server.loaded.done()
        target = {"X-Amz-Target": "CloudApiService.GetResourceRequestStatus", "Content-Type": "application/x-amz-json-1.0"}
        cloud_control = asyncio.ensure_future(post("/", b'{"RequestToken": "nope"}', target))
        seen["cloud_control_waited"] = await still_waiting(cloud_control)
        gate.set()
        await server.loaded
        seen["cloud_control"] = await cloud_control

    output = _serve_with_the_late_parts_held(monkeypatch, ContractMode.WARN, scenario)
    status, body = seen["answer"]
    assert status == 200 and body["status"] == "SUCCESS"
    assert seen["reviewed_before_loading"] is False
    assert seen["cloud_control_waited"]
    assert seen["cloud_control"][0] == 400 and seen["cloud_control"][1]["__type"] == "RequestTokenNotFoundException"
    assert "TypeFunction → SUCCESS" in output  # the answered call was reviewed once the review loaded, before serve stopped


def test_contract_strict_calls_wait_for_the_checker(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from cfnrun.contract.mode import ContractMode

    seen: Dict[str, Any] = {}

    async def scenario(server: Any, post: Callable[..., Any], gate: threading.Event) -> None:
        strict = asyncio.ensure_future(post(INVOKE_TYPE_FUNCTION, b'{"do": "echo"}', {}))
        seen["waited"] = await still_waiting(strict)
        gate.set()
        seen["answer"] = await strict

    _serve_with_the_late_parts_held(monkeypatch, ContractMode.STRICT, scenario)
    assert seen["waited"]
    assert seen["answer"][0] == 200 and seen["answer"][1]["status"] == "SUCCESS"


def test_a_call_answered_before_the_review_loads_is_reviewed_when_serve_stops_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stopping gives what loads after listening the grace too: no answered call goes unreviewed."""
    from cfnrun.contract.mode import ContractMode

    seen: Dict[str, Any] = {}

    async def scenario(server: Any, post: Callable[..., Any], gate: threading.Event) -> None:
        seen["answer"] = await post(INVOKE_TYPE_FUNCTION, b'{"do": "echo"}', {})
        refuse = server.service.refuse_new_calls

        def stop_then_open() -> None:  # the gate opens only once serve has begun to stop
            refuse()
            gate.set()

        server.service.refuse_new_calls = stop_then_open

    output = _serve_with_the_late_parts_held(monkeypatch, ContractMode.WARN, scenario)
    assert seen["answer"][0] == 200
    assert output.index("stopping: finishing in-flight calls") < output.index("TypeFunction → SUCCESS")


def test_a_strict_call_waiting_for_the_checker_is_answered_when_serve_stops_before_it_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the grace, the call waiting for the checker gets a 503 that says why, not a dropped connection."""
    import asyncio
    import urllib.error
    import urllib.request

    from cfnrun.contract.mode import ContractMode

    seen: Dict[str, Any] = {}
    holding: Dict[str, threading.Event] = {}

    def strict_call(url: str) -> None:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, data=b'{"do": "echo"}', method="POST"), timeout=30) as response:
                seen["answer"] = (response.status, response.read())
        except urllib.error.HTTPError as error:
            seen["answer"] = (error.code, error.read())
        except OSError as error:  # a dropped connection
            seen["answer"] = (None, str(error).encode())
        finally:
            holding["gate"].set()  # let the held import end, so serve's thread pool can shut down

    async def scenario(server: Any, post: Callable[..., Any], gate: threading.Event) -> None:
        holding["gate"] = gate
        waiting = asyncio.Event()
        late_parts = server.late.wait

        async def late_parts_seen() -> Any:  # the call has its worker's answer and now waits for the checker
            waiting.set()
            return await late_parts()

        server.late.wait = late_parts_seen
        call = threading.Thread(target=strict_call, args=(server.url + INVOKE_TYPE_FUNCTION,))
        call.start()
        await asyncio.wait_for(waiting.wait(), 60)
        seen["call"] = call  # serve now stops, with the checker still held back

    output = _serve_with_the_late_parts_held(monkeypatch, ContractMode.STRICT, scenario, grace_s=0.2)
    seen["call"].join(timeout=30)
    status, body = seen["answer"]
    assert status == 503, body
    assert "cfnrun serve is stopping: it stopped before its contract checks loaded" in body.decode()
    assert "stopped" in output


def test_a_second_signal_ends_a_start_that_waits(gated_project: Path) -> None:
    """With --debug-port serve waits for every worker before it listens; the gated one never comes.
    SIGTERM asks for a graceful stop once started; a second signal ends the start at once."""
    pytest.importorskip("debugpy")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = start_serve(gated_project, "--debug-port", str(port), "--no-reload")
    lines = read_until(process, r"TestEntrypoint\s+debugpy on")  # then it waits for the workers
    process.send_signal(signal.SIGTERM)
    process.send_signal(signal.SIGINT)  # another signal number: the two cannot merge into one
    rest = process.communicate(timeout=20)[0]
    assert process.returncode == 130, "".join(lines) + rest
    assert "cfnrun: interrupted while starting; workers stopped" in rest
    assert "listening" not in rest and "Traceback" not in rest
    wait_until(lambda: not sandboxes_of(process.pid), timeout=30, what="no worker of this serve to be left")


def test_cfnrun_tests_suite_process_loads_cfn_without_the_docker_sdk(tmp_path: Path) -> None:
    """The process ``cfnrun test`` starts runs ``cfn test`` alone: it loads cfn's command line as it waits for its
    arguments, but not the Docker SDK, which only ``cfn build-image`` and ``cfn test --docker-image`` use."""
    reading, writing = os.pipe()
    process = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "cfnrun.app.cfn_offline", "--arguments-from", str(reading)],
        cwd=str(tmp_path), pass_fds=(reading,), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    os.close(reading)
    with os.fdopen(writing, "w") as arguments:
        arguments.write(json.dumps(["--version"]))
    out, err = process.communicate(timeout=PATIENCE_S)
    assert process.returncode == 0, out + err
    imported = {line.rsplit("|", 1)[1].strip() for line in err.splitlines() if line.startswith("import time:")}
    assert "rpdk.core.cli" in imported, err[-2000:]
    assert not {name for name in imported if name == "docker" or name.startswith("docker.")}, sorted(n for n in imported if "docker" in n)
