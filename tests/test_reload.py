"""Hot reload and debugging: real servers, real file edits, real watchers."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Dict

import pytest
from typer.testing import CliRunner

from conftest import LOCAL_STATE, MISBEHAVING, ServerProcess, start_serve, wait_until


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A private copy of the misbehaving fixture project, to edit freely."""
    target = tmp_path / "misbehaving"
    shutil.copytree(MISBEHAVING, target, ignore=LOCAL_STATE)
    return target


def set_version(project: Path, version: Any) -> None:
    handlers = project / "behaviours.py"
    lines = handlers.read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith("VERSION = "))
    lines[index] = f"VERSION = {version}  # tests edit this line to see reloads"
    handlers.write_text("\n".join(lines) + "\n")


def call(server: ServerProcess, body: Dict[str, Any], function: str = "TypeFunction") -> Dict[str, Any]:
    response = server.client().invoke(FunctionName=function, Payload=json.dumps(body).encode())
    return json.loads(response["Payload"].read())


def test_saved_edit_is_live_on_the_next_call(project: Path, serve: Callable[..., ServerProcess]) -> None:
    server = serve(project)
    assert call(server, {"do": "echo"})["version"] == 1
    set_version(project, 2)
    server.wait_for_line(r"reload: behaviours.py changed")
    server.wait_for_line(r"reload: new code live in \d+ ms: TypeFunction")
    after = call(server, {"do": "echo"})
    assert after["version"] == 2 and after["count"] == 1  # a fresh worker


def test_an_edit_that_keeps_the_size_and_the_second_is_live_too(
    project: Path, serve: Callable[..., ServerProcess], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python's bytecode cache cannot tell these two saves apart (equal size, same whole second); the reload must."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # workers cache bytecode, as on a developer's machine
    server = serve(project)
    handlers = project / "behaviours.py"
    set_version(project, 2)
    server.wait_for_line(r"reload: new code live")
    assert call(server, {"do": "echo"})["version"] == 2
    assert Path(importlib.util.cache_from_source(str(handlers))).exists()  # the new worker cached its bytecode
    saved_at = handlers.stat().st_mtime_ns
    staged = tmp_path / "behaviours.py"  # an editor's atomic save: written aside, renamed into place
    staged.write_text(handlers.read_text().replace("VERSION = 2 ", "VERSION = 3 "))
    os.utime(staged, ns=(saved_at, saved_at))
    os.replace(staged, handlers)
    server.wait_for_line(r"reload: new code live")
    assert call(server, {"do": "echo"})["version"] == 3


def test_syntax_error_then_fix(project: Path, serve: Callable[..., ServerProcess]) -> None:
    server = serve(project)
    handlers = project / "behaviours.py"
    good = handlers.read_text()
    handlers.write_text(good + "\ndef half_written(:\n")
    broken_line = len(good.splitlines()) + 2
    server.wait_for_line(r"reload: TypeFunction does not load: Runtime.UserCodeSyntaxError")
    error = call(server, {"do": "echo"})
    assert error["errorType"] == "Runtime.UserCodeSyntaxError"
    assert f"behaviours.py:{broken_line}" in error["errorMessage"]
    handlers.write_text(good)
    server.wait_for_line(r"reload: new code live")
    assert call(server, {"do": "echo"})["version"] == 1


def test_in_flight_call_finishes_on_the_code_it_started_with(project: Path, serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    server = serve(project, "--workers", "2")
    started = tmp_path / "started"
    old: Dict[str, Any] = {}
    in_flight = threading.Thread(target=lambda: old.update(call(server, {"do": "sleep", "seconds": 2, "started": str(started)})))
    in_flight.start()
    wait_until(started.exists, what="the slow call to start")
    set_version(project, 2)
    server.wait_for_line(r"reload: new code live")
    assert call(server, {"do": "echo"})["version"] == 2
    in_flight.join(timeout=20)
    assert old == {"slept": 2, "version": 1}


def test_template_edits_add_and_remove_functions(project: Path, serve: Callable[..., ServerProcess]) -> None:
    server = serve(project)
    template = project / "template.yml"
    original = template.read_text()
    template.write_text(original + "\n  Extra:\n    Type: AWS::Serverless::Function\n    Properties:\n      Handler: behaviours.handler\n")
    server.wait_for_line(r"reload: functions added: Extra")
    assert call(server, {"do": "echo"}, function="Extra")["count"] == 1
    template.write_text(original)
    server.wait_for_line(r"reload: functions removed: Extra")
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as gone:
        call(server, {"do": "echo"}, function="Extra")
    assert gone.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_broken_template_keeps_the_previous_configuration(project: Path, serve: Callable[..., ServerProcess]) -> None:
    server = serve(project)
    template = project / "template.yml"
    original = template.read_text()
    template.write_text("Resources: [\n")
    server.wait_for_line(r"template.yml: not valid YAML.*still serving the previous configuration")
    assert call(server, {"do": "echo"})["count"] == 1
    template.write_text(original)
    server.wait_for_line(r"reload: new code live")


def test_ignored_files_do_not_reload_and_bursts_reload_once(project: Path, serve: Callable[..., ServerProcess]) -> None:
    server = serve(project)
    (project / "__pycache__").mkdir(exist_ok=True)
    (project / "__pycache__" / "behaviours.cpython-311.pyc").write_bytes(b"junk")
    (project / ".behaviours.py.swp").write_text("swap")
    (project / "notes.log").write_text("log")
    for version in range(2, 7):  # a burst, like format-on-save
        set_version(project, version)
    line = server.wait_for_line(r"changed$")
    assert line == "reload: behaviours.py changed"
    server.wait_for_line(r"reload: new code live")
    # The next change is to another file: every reload the burst caused shows up before it. A quiet machine coalesces
    # the five saves into one reload; a starved one may see them in two batches, never one reload per save.
    (project / "helpers.py").write_text("VALUE = 1\n")
    changes = [line]
    while not changes[-1].endswith("helpers.py changed"):
        changes.append(server.wait_for_line(r"changed$"))
    assert set(changes[:-1]) == {"reload: behaviours.py changed"} and len(changes) - 1 < 5, changes
    server.wait_for_line(r"reload: new code live")
    assert call(server, {"do": "echo"})["version"] == 6


def test_no_reload_keeps_the_code(project: Path, serve: Callable[..., ServerProcess]) -> None:
    fixed = serve(project, "--no-reload")
    watching = serve(project)  # a reloading server on the same files tells us when the edit was seen
    assert call(fixed, {"do": "echo"})["version"] == 1
    set_version(project, 2)
    watching.wait_for_line(r"reload: new code live")
    assert call(watching, {"do": "echo"})["version"] == 2
    assert call(fixed, {"do": "echo"})["version"] == 1


def test_cfnruns_own_state_in_a_project_whose_code_is_its_root_reloads_nothing(project: Path) -> None:
    from cfnrun.app.watcher import ProjectFilter
    from cfnrun.model.project import load_project

    loaded = load_project(project)
    assert loaded.code_dir == loaded.root  # behaviours.py at the top, no src/
    watched = ProjectFilter(loaded)
    assert watched(watchfiles_modified(), str(project / "behaviours.py"))
    for state in (".cfnrun/history.sqlite3", ".cfnrun/history.sqlite3-wal"):
        assert not watched(watchfiles_modified(), str(project / state))


def watchfiles_modified() -> Any:
    import watchfiles

    return watchfiles.Change.modified


def test_a_watch_that_cannot_start_says_why_and_stops_its_thread(project: Path, tmp_path: Path) -> None:
    import asyncio

    from cfnrun.app.watcher import ChangeFeed, WatchFailed
    from cfnrun.model.project import load_project

    missing = tmp_path / "gone" / "request.json"  # a watched file outside the project, in a folder that is not there
    threads_before = set(threading.enumerate())

    async def start() -> None:
        await ChangeFeed(load_project(project), [missing]).start()

    with pytest.raises(WatchFailed, match=r"cannot watch .*/gone, .*/misbehaving for saves: "):
        asyncio.run(start())
    wait_until(lambda: not (set(threading.enumerate()) - threads_before), what="the watch thread to end")


def test_a_save_made_before_the_watch_was_in_place_comes_first(project: Path) -> None:
    import asyncio
    import time

    from cfnrun.app.watcher import ChangeFeed
    from cfnrun.model.project import load_project

    since = time.time() - 1.0  # the copied files keep their old times; only the save below is newer
    set_version(project, 2)  # saved after the code began to load, before the watch is in place
    feed = ChangeFeed(load_project(project))

    async def first_change() -> Any:
        await feed.start(saved_since=since)
        try:
            return await asyncio.wait_for(feed.next(), 10)
        finally:
            feed.stop()

    change = asyncio.run(first_change())
    assert change.paths == {project / "behaviours.py"} and not change.config


def test_a_folder_made_after_the_watch_began_is_watched_and_cfnruns_own_writes_are_not(project: Path) -> None:
    """A folder made in the code is reported with the files it holds (written into it a moment after it was made,
    before its own watch was in place: they raised no change of their own), and a save in it after that is seen;
    cfnrun's history and a provider's state are never reported."""
    import asyncio

    from cfnrun.app.watcher import ChangeFeed
    from cfnrun.model.project import load_project

    feed = ChangeFeed(load_project(project))
    package = project / "newpkg"
    module = package / "module.py"

    async def changes() -> list:
        seen = []

        async def until(*paths: Path) -> None:
            while True:
                change = await asyncio.wait_for(feed.next(), 10)
                seen.append(change.paths)
                if change.paths & set(paths):
                    return

        await feed.start()
        try:
            package.mkdir()
            module.write_text("X = 1\n")
            await until(package, module)
            assert module in seen[-1]  # with the folder, or on its own
            module.write_text("X = 2\n")  # the new folder is watched by now
            await until(module)
            (project / ".cfnrun").mkdir(exist_ok=True)
            (project / ".cfnrun" / "history.sqlite3-wal").write_bytes(b"x")  # cfnrun's own
            (project / ".state").mkdir(exist_ok=True)
            (project / ".state" / "thing.json").write_text("{}")  # a provider's state
            set_version(project, 2)
            await until(project / "behaviours.py")
            return seen
        finally:
            feed.stop()

    seen = asyncio.run(changes())
    assert all(not path.is_relative_to(project / ".cfnrun") and not path.is_relative_to(project / ".state") for paths in seen for path in paths)


def test_a_save_while_serve_starts_is_live(project: Path) -> None:
    """Saved once serve's first worker is on its way, before serve listens: the new code is what serve runs."""
    process = start_serve(project)
    try:
        wait_until(lambda: bool(children_of(process.pid)), what="serve's first worker to start")
        set_version(project, 2)
        server = ServerProcess(project, process=process)
        server.has_printed(r"reload: new code live")  # it may come before serve says it listens
        assert call(server, {"do": "echo"})["version"] == 2
    finally:
        process.terminate()
        process.wait(timeout=30)


def children_of(pid: int) -> list:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            continue
    return found


def test_invoke_watch_runs_the_operation_again_after_each_save(project: Path, tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"desiredResourceState": {"do": "echo"}}))
    process = subprocess.Popen(
        [sys.executable, "-m", "cfnrun", "invoke", "CREATE", str(request), "--project", str(project), "--json", "--watch", "--no-credentials"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None

        def next_result() -> Dict[str, Any]:
            for line in process.stdout:  # type: ignore[union-attr]
                record = json.loads(line)
                if record["event"] == "result":
                    return record
            raise AssertionError("cfnrun exited before another result")

        first = next_result()
        assert first["status"] == "SUCCESS"
        set_version(project, 2)
        second = next_result()
        assert second["status"] == "SUCCESS"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 130
        assert "behaviours.py changed: running CREATE again" in (process.stderr.read() if process.stderr else "")
    finally:
        if process.poll() is None:
            process.kill()


def test_in_process_runs_the_handler_inside_cfnrun(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cfnrun.cli import app

    request = tmp_path / "request.json"
    request.write_text(json.dumps({"desiredResourceState": {"do": "planted"}}))
    planted = type(sys)("cfnrun_test_planted")
    planted.VALUE = "planted-by-the-test"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cfnrun_test_planted", planted)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "breakpointhook", sys.breakpointhook)
    monkeypatch.chdir(tmp_path)
    saved_environment = dict(os.environ)
    try:
        result = CliRunner().invoke(
            app, ["invoke", "CREATE", str(request), "--project", str(project), "--in-process", "--json", "--no-credentials"]
        )
    finally:
        os.environ.clear()
        os.environ.update(saved_environment)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    final = records[-1]
    assert final["status"] == "SUCCESS"
    assert final["resourceModel"] == {"Id": "planted-by-the-test"}
    invocation = next(r for r in records if r["event"] == "invocation")
    assert invocation["progressEvent"]["pid"] == os.getpid()


def test_debug_port_opens_a_debugpy_listener(project: Path, serve: Callable[..., ServerProcess]) -> None:
    pytest.importorskip("debugpy")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = serve(project, "--debug-port", str(port), "--no-reload")
    banner = "\n".join(server.output)  # printed before the server said it was listening
    assert f"debugpy on 127.0.0.1:{port}" in banner and "time limits are suspended" in banner
    connection = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        request = json.dumps({"seq": 1, "type": "request", "command": "initialize", "arguments": {"adapterID": "cfnrun-test"}}).encode()
        connection.sendall(b"Content-Length: %d\r\n\r\n" % len(request) + request)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = connection.recv(4096)
            assert chunk, "debugpy closed the connection"
            received += chunk
        assert received.startswith(b"Content-Length:")
    finally:
        connection.close()
