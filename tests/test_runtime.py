"""The worker runtime, driven directly: real worker processes, real sockets and pipes, real signals."""
from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any, Awaitable, Callable, Optional

import pytest

from cfnrun.model.project import handler_project
from cfnrun.runtime.environment import lambda_environment
from cfnrun.runtime.outcome import OutcomeKind
from cfnrun.runtime.pool import FunctionPool
from cfnrun.runtime.process import WorkerInitError, WorkerProcess
from cfnrun.runtime.spec import WorkerSpec
from conftest import MISBEHAVING, pid_alive, wait_until


def spec_for(handler: str, **env: str) -> WorkerSpec:
    project = handler_project(handler, MISBEHAVING / "cfnrun-test-misbehaving.json", MISBEHAVING)
    function = project.type_function()
    return WorkerSpec(
        function_name="Misbehaving",
        handler=handler,
        code_dir=MISBEHAVING,
        cwd=MISBEHAVING,
        env=lambda_environment(project, function, "eu-west-3", overrides=env),
        memory_mb=512,
        region="eu-west-3",
    )


def with_pool(
    body: Callable[[FunctionPool], Awaitable[Any]],
    size: int = 1,
    handler: str = "behaviours.handler",
    spec: Optional[WorkerSpec] = None,
    forked: bool = False,
) -> Any:
    """Run ``body`` against a warm pool of the misbehaving provider, and close the pool after.

    ``forked``: every worker, the first included, is a fork of the function's zygote (standby.py).
    """

    async def run() -> Any:
        pool = FunctionPool(spec or spec_for(handler), size=size, standby=forked, dependencies=["json"] if forked else None)
        try:
            await pool.warm()
            if forked:
                assert all(parent_of(pid) != os.getpid() for pid in pool.pids), "a worker was spawned, not forked"
            return await body(pool)
        finally:
            await pool.close()

    return asyncio.run(run())


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_worker_stays_warm_and_keeps_module_state() -> None:
    async def body(pool: FunctionPool) -> None:
        first = await pool.invoke({"do": "echo"}, 5)
        second = await pool.invoke({"do": "echo"}, 5)
        assert first.kind is OutcomeKind.RETURNED
        assert (first.result["count"], second.result["count"]) == (1, 2)
        assert first.result["pid"] == second.result["pid"]
        assert first.logs == "echo call 1\n" and second.logs == "echo call 2\n"

    with_pool(body)


def test_handler_sees_lambda_context_and_environment() -> None:
    async def body(pool: FunctionPool) -> None:
        outcome = await pool.invoke({"do": "context"}, 7, request_id="req-123")
        seen = outcome.result
        assert seen["function_name"] == "Misbehaving"
        assert seen["memory_limit_in_mb"] == "512"
        assert seen["aws_request_id"] == "req-123"
        assert seen["invoked_function_arn"].startswith("arn:aws:lambda:eu-west-3:")
        assert 0 < seen["remaining_ms"] <= 7000
        assert seen["env"]["AWS_REGION"] == seen["env"]["AWS_DEFAULT_REGION"] == "eu-west-3"
        assert seen["env"]["AWS_LAMBDA_FUNCTION_NAME"] == "TypeFunction"
        assert seen["env"]["LAMBDA_TASK_ROOT"] == str(MISBEHAVING)

    with_pool(body)


@pytest.mark.parametrize("forked", [False, True])
def test_the_handler_imports_from_its_code_folder_not_the_current_one_or_cfnruns(tmp_path: Path, forked: bool) -> None:
    import dataclasses

    import cfnrun.runtime.worker as worker

    async def body(pool: FunctionPool) -> None:
        seen = (await pool.invoke({"do": "import_path"}, 5)).result
        assert seen["cwd"] == str(tmp_path)
        assert seen["path"][0] == str(MISBEHAVING)
        assert not {"", ".", str(tmp_path), os.path.dirname(worker.__file__)} & set(seen["path"])

    with_pool(body, spec=dataclasses.replace(spec_for("behaviours.handler"), cwd=tmp_path), forked=forked)


def test_megabyte_events_and_results_cross_the_worker_boundary_whole() -> None:
    async def body(pool: FunctionPool) -> None:
        outcome = await pool.invoke({"do": "big", "blob": "x" * 3_000_000, "size": 5_000_000}, 10)
        assert outcome.kind is OutcomeKind.RETURNED, outcome.error
        assert outcome.result["received"] == 3_000_000 and len(outcome.result["blob"]) == 5_000_000
        assert (await pool.invoke({"do": "echo"}, 5)).result["count"] == 2

    with_pool(body)


def test_exception_is_reported_and_the_same_worker_serves_on() -> None:
    async def body(pool: FunctionPool) -> None:
        failed = await pool.invoke({"do": "raise"}, 5)
        assert failed.kind is OutcomeKind.FUNCTION_ERROR
        assert failed.error_type == "ValueError"
        assert failed.error_message == "the handler broke on purpose"
        assert any("behaviours.py" in line for line in failed.error.stack_trace)
        assert not any("runtime/worker/" in line for line in failed.error.stack_trace)
        assert failed.logs == "about to fail\n"
        after = await pool.invoke({"do": "echo"}, 5)
        assert after.kind is OutcomeKind.RETURNED and after.result["count"] == 2

    with_pool(body)


@pytest.mark.parametrize(
    "do, expected",
    [
        ("exit", "exited with status 3"),
        ("hard_exit", "exited with status 7"),
        ("segfault", "killed by SIGSEGV"),
    ],
)
def test_dead_worker_is_reported_and_replaced(do: str, expected: str) -> None:
    async def body(pool: FunctionPool) -> None:
        before = await pool.invoke({"do": "echo"}, 5)
        died = await pool.invoke({"do": do}, 5)
        assert died.kind is OutcomeKind.WORKER_DIED
        assert expected in died.error_message
        if do == "segfault":
            assert "Fatal Python error" in died.logs and "behaviours.py" in died.logs
        after = await pool.invoke({"do": "echo"}, 5)
        assert after.kind is OutcomeKind.RETURNED
        assert after.result["pid"] != before.result["pid"]
        assert after.result["count"] == 1  # a fresh sandbox

    with_pool(body)


def test_call_past_its_deadline_is_killed_and_the_worker_replaced() -> None:
    async def body(pool: FunctionPool) -> None:
        hung_pid = pool.pids[0]
        outcome = await pool.invoke({"do": "sleep", "seconds": 60}, 0.5)
        assert outcome.kind is OutcomeKind.TIMED_OUT
        assert outcome.timeout_s == 0.5
        assert outcome.logs == "going to sleep\n"
        assert not pid_alive(hung_pid)
        after = await pool.invoke({"do": "echo"}, 5)
        assert after.kind is OutcomeKind.RETURNED and after.result["pid"] != hung_pid

    with_pool(body)


def test_each_call_is_cut_at_its_own_deadline_whatever_the_budgets_of_the_calls_before_it() -> None:
    """A worker keeps one deadline timer across its calls (none made and cancelled per call): a timer left armed by an
    earlier call with a shorter budget must not cut a later call, and one with a longer budget must not let a later
    call run past its own."""

    async def body(pool: FunctionPool) -> None:
        short = await pool.invoke({"do": "echo"}, 0.3)  # ends at once; the timer stays armed for its deadline
        assert short.kind is OutcomeKind.RETURNED
        longer = await pool.invoke({"do": "sleep", "seconds": 1}, 30)  # in flight when that timer fires
        assert longer.kind is OutcomeKind.RETURNED, longer
        hung = await pool.invoke({"do": "sleep", "seconds": 60}, 0.5)  # the timer is armed 30 s out: moved in
        assert hung.kind is OutcomeKind.TIMED_OUT and hung.timeout_s == 0.5

    with_pool(body)


def test_killing_a_worker_also_kills_what_it_started() -> None:
    async def body(pool: FunctionPool) -> None:
        outcome = await pool.invoke({"do": "spawn"}, 1.0)
        assert outcome.kind is OutcomeKind.TIMED_OUT
        child = int(re.search(r"child pid (\d+)", outcome.logs).group(1))
        wait_until(lambda: not pid_alive(child), what=f"child {child} to be gone")

    with_pool(body)


def test_output_flood_is_bounded_and_does_not_leak_into_the_next_call() -> None:
    async def body(pool: FunctionPool) -> None:
        flood = await pool.invoke({"do": "flood", "lines": 300000}, 30)
        assert flood.kind is OutcomeKind.RETURNED
        assert len(flood.logs) < 300 * 1024
        assert flood.logs.startswith("flood line 0\n")
        assert flood.logs.rstrip().endswith("flood line 299999")
        assert "bytes of output omitted" in flood.logs
        after = await pool.invoke({"do": "print", "text": "clean"}, 5)
        assert after.logs == "clean\n"

    with_pool(body)


@pytest.mark.parametrize("forked", [False, True], ids=["spawned", "forked"])
def test_a_quiet_call_spares_the_log_pipe_read_and_every_call_gets_exactly_its_own_output(
    monkeypatch: pytest.MonkeyPatch, forked: bool
) -> None:
    """The worker's reply says whether the log pipe still held output for the parent: after a call that wrote
    nothing the pipe is not read at all; output written below Python's streams is still the call's own."""
    reads = []
    real_readv = os.readv

    def counted_readv(fd: int, buffers: Any) -> int:
        reads.append(fd)
        return real_readv(fd, buffers)

    monkeypatch.setattr(os, "readv", counted_readv)

    async def body(pool: FunctionPool) -> None:
        written = await pool.invoke({"do": "write_fds", "text": "first"}, 5)
        assert written.logs == "first on fd 1\nfirst on fd 2\n"
        for _ in range(3):
            reads.clear()
            quiet = await pool.invoke({"do": "event"}, 5)
            assert (quiet.kind, quiet.logs, reads) == (OutcomeKind.RETURNED, "", [])
        written = await pool.invoke({"do": "write_fds", "text": "second"}, 5)
        assert written.logs == "second on fd 1\nsecond on fd 2\n"

    with_pool(body, forked=forked)


@pytest.mark.parametrize("do", ["buffered_stdout", "reconfigured_stdout"])
def test_output_a_handlers_stream_holds_back_is_flushed_into_its_own_call(do: str) -> None:
    """The worker skips flushing its own write-through streams, but not a stream the handler made or reconfigured."""

    async def body(pool: FunctionPool) -> None:
        held = await pool.invoke({"do": do, "text": "held back"}, 5)
        assert (held.kind, held.logs) == (OutcomeKind.RETURNED, "held back\n")
        after = await pool.invoke({"do": "print", "text": "next"}, 5)
        assert after.logs == "next\n"

    with_pool(body)


def test_unserializable_result_is_a_marshal_error() -> None:
    async def body(pool: FunctionPool) -> None:
        outcome = await pool.invoke({"do": "set"}, 5)
        assert outcome.kind is OutcomeKind.FUNCTION_ERROR
        assert outcome.error_type == "Runtime.MarshalError"
        assert "set is not JSON serializable" in outcome.error_message

    with_pool(body)


def test_parallel_calls_run_on_separate_warm_workers() -> None:
    async def body(pool: FunctionPool) -> None:
        first, second = await asyncio.gather(
            pool.invoke({"do": "sleep", "seconds": 0.3}, 5), pool.invoke({"do": "context"}, 5)
        )
        assert first.kind is second.kind is OutcomeKind.RETURNED
        assert len(pool.pids) == 2

    with_pool(body, size=2)


@pytest.mark.parametrize(
    "handler, error_type, where",
    [
        ("broken_syntax.handler", "Runtime.UserCodeSyntaxError", "broken_syntax.py:2"),
        ("broken_import.handler", "Runtime.ImportModuleError", "broken_import.py:3"),
        ("no_such_module.handler", "Runtime.ImportModuleError", "no module named 'no_such_module'"),
        ("behaviours.no_such_function", "Runtime.HandlerNotFound", "Handler 'no_such_function' missing"),
    ],
)
def test_import_problems_name_the_file_and_line(handler: str, error_type: str, where: str) -> None:
    async def start() -> WorkerInitError:
        with pytest.raises(WorkerInitError) as caught:
            await WorkerProcess.start(spec_for(handler))
        return caught.value

    error = asyncio.run(start())
    assert error.error.error_type == error_type
    assert where in error.error.message


def test_pool_reports_init_error_as_an_outcome() -> None:
    async def run() -> None:
        pool = FunctionPool(spec_for("broken_syntax.handler"))
        try:
            outcome = await pool.invoke({}, 5)
        finally:
            await pool.close()
        assert outcome.kind is OutcomeKind.INIT_ERROR
        assert outcome.error_type == "Runtime.UserCodeSyntaxError"

    asyncio.run(run())
