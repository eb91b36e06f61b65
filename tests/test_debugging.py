"""Debugging as a developer does it: pdb on a real terminal (--in-process), an IDE over debugpy (--debug-wait)."""
from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import pytest

from conftest import LOCAL_STATE, MISBEHAVING, PATIENCE_S, ServerProcess, cfnrun, result_of

SCHEMA = str(MISBEHAVING / "cfnrun-test-misbehaving.json")

# The second call stops at breakpoint(); the first answers IN_PROGRESS, so a countdown was on screen.
STOPPING_HANDLER = textwrap.dedent(
    """\
    def handler(event, context):
        if not event.get("callbackContext"):
            return {"status": "IN_PROGRESS", "callbackContext": {"again": True}, "callbackDelaySeconds": 1}
        reached = "before the breakpoint"
        breakpoint()
        reached = "after the breakpoint"
        return {"status": "SUCCESS", "resourceModel": {"Id": reached}}
    """
)
BREAKPOINT_LINE = 5
LINE_AFTER_BREAKPOINT = 6


class Terminal:
    """A child process on a pseudo-terminal, read as a person would see it."""

    def __init__(self, args: List[str], cwd: Path) -> None:
        self._master, slave = pty.openpty()
        env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "PYTHONBREAKPOINT": ""}
        self.process = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, cwd=str(cwd), env=env, close_fds=True)
        os.close(slave)
        self.seen = ""

    def read_until(self, pattern: str, timeout: float = PATIENCE_S) -> str:
        """Everything up to and including the first match of ``pattern`` after what was already read."""
        start = len(self.seen)
        deadline = time.monotonic() + timeout
        while not re.search(pattern, self.seen[start:]):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no {pattern!r} on the terminal; it shows:\n{self.seen}")
            ready, _, _ = select.select([self._master], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self._master, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"the terminal closed before {pattern!r}; it shows:\n{self.seen}")
                self.seen += chunk.decode("utf-8", "replace")
        return self.seen[start:]

    def type(self, text: str) -> None:
        os.write(self._master, text.encode())

    def close(self) -> int:
        try:
            return self.process.wait(timeout=PATIENCE_S)
        finally:
            if self.process.poll() is None:
                self.process.kill()
            os.close(self._master)


def screen_line(raw: str) -> str:
    """What a terminal shows for one raw line: the text after the last carriage return, erases applied."""
    return raw.rstrip("\r").split("\r")[-1].replace("\x1b[K", "")


def test_breakpoint_stops_pdb_in_the_handler_on_a_clean_line(tmp_path: Path) -> None:
    (tmp_path / "stopping.py").write_text(STOPPING_HANDLER)
    terminal = Terminal(
        [sys.executable, "-m", "cfnrun", "invoke", "CREATE", "--handler", "stopping.handler", "--schema", SCHEMA,
         "--code-dir", str(tmp_path), "--no-credentials", "--contract", "off", "--in-process"],
        cwd=tmp_path,
    )
    try:
        stopped = terminal.read_until(r"\(Pdb\) ")
        terminal.type("where\n")
        where = terminal.read_until(r"\(Pdb\) ")
        terminal.type("p reached\n")
        value = terminal.read_until(r"\(Pdb\) ")
        terminal.type("c\n")
        terminal.read_until(r"SUCCESS CREATE after 2 invocation\(s\)")
    finally:
        status = terminal.close()
    handler_file = re.escape(str(tmp_path / "stopping.py"))
    current = [line for line in where.splitlines() if line.startswith("> ")]
    # pdb stops on the line after breakpoint(); from Python 3.13 on, pdb itself stops on the breakpoint() line
    stopped_at, source = (LINE_AFTER_BREAKPOINT, 'reached = "after the breakpoint"') if sys.version_info < (3, 13) else (BREAKPOINT_LINE, "breakpoint()")
    assert current and re.match(rf"> {handler_file}\({stopped_at}\)handler\(\)", current[0]), where
    assert "'before the breakpoint'" in value
    assert "hook()" not in where  # the innermost frame is the user's, not cfnrun's breakpointhook
    assert where.split(current[0], 1)[1].lstrip().startswith(f"-> {source}"), where
    assert status == 0
    # The countdown of the wait before call #2 was erased before pdb wrote its first line.
    first_pdb_line = next(raw for raw in stopped.split("\n") if "stopping.py" in raw)
    assert screen_line(first_pdb_line).startswith("> "), repr(first_pdb_line)
    assert "debugger attached: time budgets are suspended" in terminal.seen


def test_breakpoint_in_a_worker_says_how_to_debug_and_the_call_goes_on(tmp_path: Path) -> None:
    (tmp_path / "stopping.py").write_text(STOPPING_HANDLER)
    run = cfnrun(
        "invoke", "CREATE", "--handler", "stopping.handler", "--schema", SCHEMA, "--code-dir", str(tmp_path),
        "--no-credentials", "--contract", "off", "--virtual-clock", "--json", env={"PYTHONBREAKPOINT": ""},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert result_of(run)["resourceModel"] == {"Id": "after the breakpoint"}
    assert f"breakpoint() at stopping.py:{BREAKPOINT_LINE} skipped" in run.stdout
    assert "Use --in-process to stop there in pdb, or --debug-port to attach an IDE debugger" in run.stdout
    assert "BdbQuit" not in run.stdout + run.stderr


def test_sys_exit_in_process_is_reported_like_a_worker_exit() -> None:
    common = ["--handler", "behaviours.handler", "--schema", SCHEMA, "--code-dir", str(MISBEHAVING), "--no-credentials"]
    request = ["-"]  # the desired state comes on standard input
    worker = subprocess.run(
        [sys.executable, "-m", "cfnrun", "invoke", "CREATE", *request, *common],
        input='{"desiredResourceState": {"do": "exit"}}', capture_output=True, text=True, timeout=90, env={**os.environ, "NO_COLOR": "1"},
    )
    in_process = subprocess.run(
        [sys.executable, "-m", "cfnrun", "invoke", "CREATE", *request, *common, "--in-process"],
        input='{"desiredResourceState": {"do": "exit"}}', capture_output=True, text=True, timeout=90, env={**os.environ, "NO_COLOR": "1"},
    )
    assert (worker.returncode, in_process.returncode) == (1, 1), in_process.stdout + in_process.stderr
    for run in (worker, in_process):
        assert "#1   CRASHED" in run.stdout
        assert "FAILED CREATE after 1 invocation(s)" in run.stdout
        assert "before returning a ProgressEvent (sys.exit, os._exit or a crash in native code)" in run.stdout
    assert "worker process exited with status 3" in worker.stdout
    assert "handler called sys.exit(3) (exit status 3)" in in_process.stdout


def _dap_messages(connection: socket.socket) -> Iterator[Dict[str, Any]]:
    buffer = b""
    while True:
        while b"\r\n\r\n" not in buffer:
            chunk = connection.recv(65536)
            if not chunk:
                return
            buffer += chunk
        head, buffer = buffer.split(b"\r\n\r\n", 1)
        size = int(head.split(b":")[1])
        while len(buffer) < size:
            buffer += connection.recv(65536)
        body, buffer = buffer[:size], buffer[size:]
        yield json.loads(body)


def attach_debugger(port: int) -> socket.socket:
    """What an IDE does to attach to a listening debugpy: initialize, attach, configurationDone."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=30)
    seq = iter(range(1, 100))

    def request(command: str, arguments: Dict[str, Any]) -> None:
        body = json.dumps({"seq": next(seq), "type": "request", "command": command, "arguments": arguments}).encode()
        connection.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    request("initialize", {"adapterID": "cfnrun-test", "clientID": "cfnrun-test"})
    request("attach", {"justMyCode": False})
    for message in _dap_messages(connection):
        if message.get("event") == "initialized":
            request("configurationDone", {})
        if message.get("command") == "configurationDone":
            return connection
    raise AssertionError("debugpy closed the connection during the attach")


def test_debug_wait_holds_each_call_until_a_debugger_attaches(tmp_path: Path, serve: Callable[..., ServerProcess]) -> None:
    pytest.importorskip("debugpy")
    project = tmp_path / "misbehaving"
    shutil.copytree(MISBEHAVING, project, ignore=LOCAL_STATE)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = serve(project, "--debug-port", str(port), "--debug-wait", "--no-reload")
    answers: List[Dict[str, Any]] = []
    client = server.client()

    def call() -> None:
        response = client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}')
        answers.append(json.loads(response["Payload"].read()))

    caller = threading.Thread(target=call)
    caller.start()
    server.has_printed(r"TypeFunction\s+behaviours\.handler\s+warm in")  # its debugpy listens from the worker's start on
    debugger = attach_debugger(port)
    try:
        caller.join(timeout=60)
        assert not caller.is_alive() and answers and answers[0]["count"] == 1
        server.wait_for_line(rf"cfnrun: waiting for a debugger on 127\.0\.0\.1:{port}")  # the call waited
    finally:
        debugger.close()
