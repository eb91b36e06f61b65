"""The sandbox boundary (issue #9): a worker's answers, processes and memory stay its own.

Real worker processes and real `cfnrun serve` subprocesses; nothing is mocked.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import signal
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict

import pytest

from cfnrun.runtime.outcome import OutcomeKind
from cfnrun.runtime.pool import FunctionPool
from conftest import MISBEHAVING, ServerProcess, cfnrun, pid_alive, result_of, wait_until
from test_runtime import parent_of, spec_for, with_pool


@pytest.fixture(params=[False, True], ids=["spawned", "forked"])
def forked(request: pytest.FixtureRequest) -> bool:
    """Each pool-level case runs on spawned workers and on workers forked from the function's zygote."""
    return bool(request.param)


def test_a_forked_child_never_answers_and_every_call_gets_its_own_answer(forked: bool) -> None:
    async def body(pool: FunctionPool) -> None:
        worker = pool.pids[0]
        fork_call = await pool.invoke({"do": "fork"}, 5)
        assert fork_call.kind is OutcomeKind.RETURNED
        assert fork_call.result["pid"] == worker and fork_call.result["child"] != 0
        for count in range(2, 7):
            echo = await pool.invoke({"do": "echo"}, 5)
            assert echo.kind is OutcomeKind.RETURNED
            assert (echo.result["pid"], echo.result["count"]) == (worker, count)
        wait_until(lambda: not pid_alive(fork_call.result["child"]), what="the forked child to leave")

    with_pool(body, forked=forked)


def test_a_child_in_the_workers_group_dies_with_the_crashed_worker(forked: bool) -> None:
    async def body(pool: FunctionPool) -> None:
        crashed = await pool.invoke({"do": "group_child"}, 5)
        assert crashed.kind is OutcomeKind.WORKER_DIED
        child = int(re.search(r"child pid (\d+)", crashed.logs).group(1))
        wait_until(lambda: not pid_alive(child), what=f"child {child} to be gone")

    with_pool(body, forked=forked)


def test_a_setsid_daemon_dies_with_the_crashed_worker_and_the_answer_does_not_wait(tmp_path: Path, forked: bool) -> None:
    pid_file = tmp_path / "daemon.pid"

    async def body(pool: FunctionPool) -> None:
        # The daemon holds the log pipe for 600 s: an answer that waited for the pipe's EOF would come
        # as the budget's timeout, not as the crash.
        crashed = await pool.invoke({"do": "daemon", "pid_file": str(pid_file), "then": "crash"}, 30)
        assert crashed.kind is OutcomeKind.WORKER_DIED
        assert "exited with status 9" in crashed.error_message
        daemon = int(pid_file.read_text())
        assert not pid_alive(daemon), f"daemon {daemon} still runs after the crash answer"  # killed before answering
        assert (await pool.invoke({"do": "echo"}, 5)).kind is OutcomeKind.RETURNED

    with_pool(body, forked=forked)


def test_a_setsid_daemon_dies_when_the_pool_closes(tmp_path: Path, forked: bool) -> None:
    pid_file = tmp_path / "daemon.pid"

    async def body(pool: FunctionPool) -> int:
        started = await pool.invoke({"do": "daemon", "pid_file": str(pid_file)}, 10)
        assert started.kind is OutcomeKind.RETURNED
        assert pid_alive(started.result["daemon"])
        return int(started.result["daemon"])

    daemon = with_pool(body, forked=forked)
    wait_until(lambda: not pid_alive(daemon), what=f"daemon {daemon} to be gone")


def test_serve_leaves_no_handler_started_process_after_sigterm(tmp_path: Path) -> None:
    server = ServerProcess(MISBEHAVING)
    try:
        pid_file = tmp_path / "daemon.pid"
        answer = server.client().invoke(
            FunctionName="TypeFunction", Payload=json.dumps({"do": "daemon", "pid_file": str(pid_file)}).encode()
        )
        daemon = json.loads(answer["Payload"].read())["daemon"]
        assert pid_alive(daemon)
    finally:
        server.stop_cleanly()
    wait_until(lambda: not pid_alive(daemon), what=f"daemon {daemon} to be gone")


def test_workers_die_with_a_sigkilled_server(tmp_path: Path) -> None:
    server = ServerProcess(MISBEHAVING)
    started = tmp_path / "spinning"
    client = server.client(read_timeout=30)
    payload = json.dumps({"do": "spin", "started": str(started)}).encode()
    threading.Thread(target=lambda: _ignore_errors(lambda: client.invoke(FunctionName="TypeFunction", Payload=payload)), daemon=True).start()
    wait_until(lambda: started.exists() and started.read_text() != "", what="the spinning call to start")
    worker = int(started.read_text())
    server.stop(signal.SIGKILL)
    wait_until(lambda: not pid_alive(worker), timeout=30, what=f"worker {worker} to die with its server")


def _ignore_errors(call: Callable[[], Any]) -> None:
    try:
        call()
    except Exception:  # noqa: B902 - the server is killed under this call on purpose
        pass


def test_a_handler_that_closes_stdio_gets_a_clear_error_and_the_worker_is_replaced(forked: bool) -> None:
    async def body(pool: FunctionPool) -> None:
        worker = pool.pids[0]
        broken = await pool.invoke({"do": "close_stdio"}, 5)
        assert broken.kind is OutcomeKind.WORKER_DIED
        assert "closed or replaced the worker's stdout (fd 1) and stderr (fd 2)" in broken.error_message
        assert not pid_alive(worker)
        after = await pool.invoke({"do": "echo"}, 5)
        assert after.kind is OutcomeKind.RETURNED and after.result["pid"] != worker
        assert after.logs == "echo call 1\n"

    with_pool(body, forked=forked)


def test_a_handler_that_closes_every_fd_is_reported_as_such(forked: bool) -> None:
    async def body(pool: FunctionPool) -> None:
        broken = await pool.invoke({"do": "close_all"}, 5)
        assert broken.kind is OutcomeKind.WORKER_DIED
        assert "closed or replaced the worker's request channel" in broken.error_message
        assert (await pool.invoke({"do": "echo"}, 5)).kind is OutcomeKind.RETURNED

    with_pool(body, forked=forked)


def test_exceeding_memorysize_ends_the_call_like_lambda_and_replaces_the_worker(forked: bool) -> None:
    spec = dataclasses.replace(spec_for("behaviours.handler"), memory_mb=128)

    async def body(pool: FunctionPool) -> None:
        worker = pool.pids[0]
        hog = await pool.invoke({"do": "allocate", "megabytes": 4096}, 30)
        assert hog.kind is OutcomeKind.WORKER_DIED
        assert hog.error_type == "Runtime.OutOfMemory"
        assert "MemorySize of 128 MB" in hog.error_message
        peak = int(re.search(r"used (\d+) MB", hog.error_message).group(1))
        assert 128 <= peak < 1024  # whole MB, rounded down: just over 128 MB reads as 128
        assert not pid_alive(worker)
        assert (await pool.invoke({"do": "allocate", "megabytes": 32}, 5)).kind is OutcomeKind.RETURNED

    with_pool(body, spec=spec, forked=forked)


def test_memory_limit_off_lets_a_worker_grow(forked: bool) -> None:
    spec = dataclasses.replace(spec_for("behaviours.handler"), memory_mb=128, memory_limit=False)

    async def body(pool: FunctionPool) -> Dict[str, Any]:
        grown = await pool.invoke({"do": "allocate", "megabytes": 256}, 30)
        assert grown.kind is OutcomeKind.RETURNED, grown.error
        return grown.result

    assert with_pool(body, spec=spec, forked=forked) == {"allocated": 256}


def _my_workers() -> "list[int]":
    """This process's worker processes: spawned ones, zygotes, and the workers zygotes forked."""
    parents = {str(os.getpid())}
    found: "list[int]" = []
    for _ in range(2):
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and entry.name not in parents and (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] in parents:
                    if b"worker.py" in (entry / "cmdline").read_bytes() and int(entry.name) not in found:
                        found.append(int(entry.name))
            except (OSError, IndexError):
                continue
        parents |= {str(pid) for pid in found}
    return found


def test_closing_the_pool_while_a_replacement_starts_leaves_no_worker(forked: bool) -> None:
    async def body(pool: FunctionPool) -> None:
        died = await pool.invoke({"do": "exit"}, 5)
        assert died.kind is OutcomeKind.WORKER_DIED  # a replacement is now starting in the background
        deadline = time.monotonic() + 10
        while not _my_workers():  # the replacement's process exists; its handler is still importing
            assert time.monotonic() < deadline, "no replacement worker started"
            await asyncio.sleep(0.005)

    with_pool(body, forked=forked)
    assert _my_workers() == []


def test_serve_answers_an_out_of_memory_call_like_lambda() -> None:
    server = ServerProcess(MISBEHAVING)  # the fixture's template says MemorySize: 128
    try:
        client = server.client()
        answer = client.invoke(FunctionName="TypeFunction", Payload=json.dumps({"do": "allocate", "megabytes": 2048}).encode())
        error = json.loads(answer["Payload"].read())
        assert answer["FunctionError"] == "Unhandled"
        assert error["errorType"] == "Runtime.OutOfMemory"
        assert "MemorySize of 128 MB" in error["errorMessage"]
        after = client.invoke(FunctionName="TypeFunction", Payload=b'{"do": "echo"}')
        assert json.loads(after["Payload"].read())["count"] == 1
    finally:
        server.stop()


def test_serve_memory_limit_off_lets_a_worker_grow() -> None:
    server = ServerProcess(MISBEHAVING, "--memory-limit", "off")
    try:
        answer = server.client().invoke(FunctionName="TypeFunction", Payload=json.dumps({"do": "allocate", "megabytes": 256}).encode())
        assert json.loads(answer["Payload"].read()) == {"allocated": 256}
    finally:
        server.stop()


def test_a_worker_whose_lifeline_breaks_leaves_with_what_it_started(forked: bool) -> None:
    """The portable half of dying with the parent (macOS has no parent-death signal)."""

    async def body(pool: FunctionPool) -> None:
        worker = pool.pids[0]
        spawned = await pool.invoke({"do": "group_child_stays"}, 5)
        child = spawned.result["child"]
        process = next(iter(pool._workers))
        os.close(process._lifeline)  # as if this process had died
        process._lifeline = None
        deadline = time.monotonic() + 10
        while pid_alive(worker) or pid_alive(child):
            assert time.monotonic() < deadline, "the worker or its child outlived the lifeline"
            await asyncio.sleep(0.01)

    with_pool(body, forked=forked)


def test_a_setsid_daemon_dies_when_its_worker_is_retired_by_a_reload(tmp_path: Path, forked: bool) -> None:
    pid_file = tmp_path / "daemon.pid"

    async def body(pool: FunctionPool) -> None:
        started = await pool.invoke({"do": "daemon", "pid_file": str(pid_file)}, 10)
        daemon = started.result["daemon"]
        assert await pool.reload() is None
        deadline = time.monotonic() + 10
        while pid_alive(daemon):
            assert time.monotonic() < deadline, f"daemon {daemon} outlived the reload"
            await asyncio.sleep(0.01)

    with_pool(body, forked=forked)


def test_invoke_enforces_memorysize_unless_told_not_to(tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"desiredResourceState": {"do": "allocate", "megabytes": 512}, "previousResourceState": None}))
    plain = ["--handler", "behaviours.handler", "--schema", str(MISBEHAVING / "cfnrun-test-misbehaving.json"), "--code-dir", str(MISBEHAVING)]
    enforced = cfnrun("invoke", "CREATE", str(request), *plain, "--no-credentials")
    assert "MemorySize of 128 MB" in enforced.stdout, enforced.stdout + enforced.stderr
    grown = cfnrun("invoke", "CREATE", str(request), *plain, "--no-credentials", "--memory-limit", "off", "--json")
    assert result_of(grown)["reason"] == "invalid-progress-event"  # it returned {"allocated": 512}


# -- workers forked from the function's zygote (#16) ----------------------------------------------


def _sandbox_marker(pid: int) -> str:
    found = re.search(rb"(?:^|\0)CFNRUN_SANDBOX=([^\0]*)", Path(f"/proc/{pid}/environ").read_bytes())
    assert found, f"process {pid} carries no sandbox marker"
    return found.group(1).decode()


def test_forked_workers_are_sandboxes_of_their_own(tmp_path: Path) -> None:
    """A fork of the zygote gets its own session, group, marker and lifeline, and its own answers."""

    async def body(pool: FunctionPool) -> int:
        first = pool.pids[0]
        assert parent_of(parent_of(first)) == os.getpid()  # forked by a zygote this process started
        assert os.getpgid(first) == first and os.getsid(first) == first
        assert _sandbox_marker(first) != _sandbox_marker(parent_of(first))
        # The first load told the provider's real dependencies: the zygote forking from now on has them imported.
        assert (await pool.invoke({"do": "exit"}, 5)).kind is OutcomeKind.WORKER_DIED
        second = (await pool.invoke({"do": "echo"}, 5)).result["pid"]
        zygote = parent_of(second)
        assert zygote != os.getpid() and parent_of(zygote) == os.getpid() and os.getpgid(zygote) != second
        assert (await pool.invoke({"do": "exit"}, 5)).kind is OutcomeKind.WORKER_DIED
        after = await pool.invoke({"do": "echo"}, 5)
        third = after.result["pid"]
        assert after.kind is OutcomeKind.RETURNED and third not in (first, second) and parent_of(third) == zygote  # forked again
        assert after.result["count"] == 1 and after.logs == "echo call 1\n"  # fresh module state, its own log pipe
        assert _sandbox_marker(third) != _sandbox_marker(zygote) and os.getpgid(third) == third
        child = (await pool.invoke({"do": "group_child_stays"}, 5)).result["child"]
        assert _sandbox_marker(child) == _sandbox_marker(third)  # what the handler starts carries the worker's marker
        return zygote

    zygote = with_pool(body, forked=True)
    assert not pid_alive(zygote) and _my_workers() == []


def test_where_forking_is_unsafe_new_workers_come_from_a_spare_and_it_is_said(tmp_path: Path) -> None:
    """A dependency that starts a thread at import makes forking unsafe: fresh processes, and a note why."""
    notes: "list[str]" = []

    async def run() -> None:
        pool = FunctionPool(spec_for("behaviours.handler"), standby=True, dependencies=["threaded_dependency"], on_note=notes.append)
        try:
            await pool.warm()
            first = pool.pids[0]
            assert parent_of(first) == os.getpid()  # spawned
            assert (await pool.invoke({"do": "exit"}, 5)).kind is OutcomeKind.WORKER_DIED
            after = await pool.invoke({"do": "echo"}, 5)
            assert after.kind is OutcomeKind.RETURNED and parent_of(after.result["pid"]) == os.getpid()
            assert pool.fork_unavailable is not None and "threads" in pool.fork_unavailable
        finally:
            await pool.close()

    asyncio.run(run())
    assert len(notes) == 1 and "fresh processes, not forks" in notes[0] and "2 threads" in notes[0], notes
    assert _my_workers() == []


def test_serve_forks_a_crashed_workers_replacement_and_everything_dies_with_a_sigkilled_server() -> None:
    server = ServerProcess(MISBEHAVING, "--no-reload", "--workers", "1")
    try:
        client = server.client()

        def call(do: str = "echo") -> Dict[str, Any]:
            return dict(json.loads(client.invoke(FunctionName="TypeFunction", Payload=json.dumps({"do": do}).encode())["Payload"].read()))

        first = call()["pid"]
        assert parent_of(first) == server.process.pid  # the first worker is spawned: it tells the dependencies
        wait_until(lambda: len(server.worker_pids("misbehaving-function")) == 2, what="TypeFunction's zygote")
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: first not in server.worker_pids(), what=f"worker {first} to be reaped")
        replacement = call()["pid"]
        zygote = parent_of(replacement)
        assert zygote != server.process.pid and parent_of(zygote) == server.process.pid  # forked by the zygote
        exited = call("exit")  # sys.exit(3) in a forked worker: its status, as a spawned worker's interpreter ends
        assert exited.get("errorType") == "Runtime.ExitError" and "exited with status 3" in exited.get("errorMessage", ""), exited
        again = call()["pid"]
        assert again not in (first, replacement) and parent_of(again) == zygote
        everyone = [zygote, again] + server.worker_pids()
    finally:
        server.stop(signal.SIGKILL)
    wait_until(lambda: not any(pid_alive(pid) for pid in everyone), timeout=30, what="zygote and forked workers to die with their server")
