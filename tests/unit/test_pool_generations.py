"""The pool's bookkeeping (generations, retiring, standby, replacements) with fake workers.

No process starts here: ``WorkerProcess`` is replaced by ``FakeWorker``, which loads
"the code on disk" (a number the test changes) and can hold a call open. What only real
processes show (killing, log pipes, imports) is in tests/test_runtime.py and test_reload.py.
"""
from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from cfnrun.runtime import pool as pool_module
from cfnrun.runtime import standby as standby_module
from cfnrun.runtime.lambda_error import LambdaError
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.pool import FunctionPool
from cfnrun.runtime.process import WorkerInitError
from cfnrun.runtime.spec import WorkerSpec

SPEC = WorkerSpec("TypeFunction", "handlers.handler", Path("/nowhere"), Path("/nowhere"), {})


class Disk:
    """The provider's code as the fake workers find it when they load."""

    version = 1
    broken = False


class FakeWorker:
    _pids = itertools.count(1000)
    spawned: List["FakeWorker"] = []

    def __init__(self) -> None:
        self.pid = next(self._pids)
        self.alive = True
        self.generation = 0
        self.code: Optional[int] = None
        self.preloaded: Optional[List[str]] = None
        self.dependencies: List[str] = []
        self.stopped = False
        self.hold: Optional[asyncio.Event] = None  # set by a test: the next call waits for it
        self.die_after_call = False

    @classmethod
    async def spawn(cls, spec: WorkerSpec) -> "FakeWorker":
        worker = cls()
        cls.spawned.append(worker)
        return worker

    async def preload(self, modules: List[str]) -> None:
        self.preloaded = modules

    async def load(self) -> None:
        await asyncio.sleep(0)
        if Disk.broken:
            self.alive = False
            raise WorkerInitError(LambdaError("Runtime.UserCodeSyntaxError", "bad"), "")
        self.code = Disk.version
        self.dependencies = ["boto3"]

    def begin(self, event_json: bytes, timeout_s: float, request_id: str, tap: Any) -> Any:
        return (request_id, timeout_s, 0.0)

    async def outcome(self, call: Any) -> InvocationOutcome:
        if self.hold is not None:
            await self.hold.wait()
        if self.die_after_call:
            self.alive = False
            return InvocationOutcome(OutcomeKind.WORKER_DIED, "r", 1.0)
        return InvocationOutcome(OutcomeKind.RETURNED, "r", 1.0, result={"pid": self.pid, "code": self.code})

    async def stop(self) -> None:
        self.stopped = True
        self.alive = False

    async def kill(self) -> None:
        self.alive = False


@pytest.fixture(autouse=True)
def fake_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_module, "WorkerProcess", FakeWorker)
    monkeypatch.setattr(standby_module, "WorkerProcess", FakeWorker)
    # Fake workers cannot be forked: standby keeps a spare here (the zygote is tested with real processes).
    monkeypatch.setattr(standby_module, "fork_unsafe_reason", lambda python, debug_port: "fake workers")
    FakeWorker.spawned = []
    Disk.version, Disk.broken = 1, False


async def call(pool: FunctionPool) -> Dict[str, Any]:
    outcome = await pool.invoke({}, 1.0)
    assert outcome.kind is OutcomeKind.RETURNED, outcome
    return outcome.result


async def settle() -> None:
    """Let background tasks the pool started (stops, replacements) run to their end."""
    for _ in range(10):
        await asyncio.sleep(0)


def test_a_reload_moves_calls_to_a_worker_with_the_new_code() -> None:
    async def scenario() -> None:
        pool = FunctionPool(SPEC)
        await pool.warm()
        first = await call(pool)
        Disk.version = 2
        assert await pool.reload() is None
        await settle()
        second = await call(pool)
        assert (first["code"], second["code"], pool.generation) == (1, 2, 1)
        old = next(w for w in FakeWorker.spawned if w.pid == first["pid"])
        assert old.stopped and pool.pids == [second["pid"]]
        await pool.close()

    asyncio.run(scenario())


def test_a_call_in_flight_finishes_on_its_code_and_its_worker_is_retired_after() -> None:
    async def scenario() -> None:
        pool = FunctionPool(SPEC)
        await pool.warm()
        [old] = FakeWorker.spawned
        old.hold = asyncio.Event()
        in_flight = asyncio.ensure_future(call(pool))
        await settle()
        Disk.version = 2
        await pool.reload()
        assert not old.stopped  # busy: not interrupted
        old.hold.set()
        assert (await in_flight)["code"] == 1
        await settle()
        assert old.stopped and (await call(pool))["code"] == 2
        await pool.close()

    asyncio.run(scenario())


def test_two_reloads_in_a_row_are_two_generations_and_leave_one_worker() -> None:
    async def scenario() -> None:
        pool = FunctionPool(SPEC)
        await pool.warm()
        Disk.version = 2
        await pool.reload()
        Disk.version = 3
        await pool.reload()
        await settle()
        assert pool.generation == 2
        assert len(FakeWorker.spawned) == 3  # one load per reload: a double reload is visible here
        assert [w.alive for w in FakeWorker.spawned] == [False, False, True]
        assert (await call(pool))["code"] == 3
        await pool.close()

    asyncio.run(scenario())


def test_a_reload_with_broken_code_reports_it_and_the_fix_recovers() -> None:
    async def scenario() -> None:
        pool = FunctionPool(SPEC)
        await pool.warm()
        Disk.broken = True
        failure = await pool.reload()
        assert failure is not None and failure.error.error_type == "Runtime.UserCodeSyntaxError"
        outcome = await pool.invoke({}, 1.0)
        assert outcome.kind is OutcomeKind.INIT_ERROR  # calls answer with the error until a save fixes it
        Disk.broken, Disk.version = False, 2
        assert await pool.reload() is None
        assert (await call(pool))["code"] == 2
        await pool.close()

    asyncio.run(scenario())


def test_standby_keeps_a_preloaded_spare_that_the_next_load_uses() -> None:
    async def scenario() -> None:
        pool = FunctionPool(SPEC, standby=True)
        await pool.warm()
        await settle()
        assert len(FakeWorker.spawned) == 2
        spare = FakeWorker.spawned[1]
        assert spare.preloaded == ["boto3"] and spare.code is None  # dependencies in, provider code not yet
        Disk.version = 2
        await pool.reload()
        assert spare.code == 2 and (await call(pool))["pid"] == spare.pid
        await settle()
        assert len(FakeWorker.spawned) == 3 and FakeWorker.spawned[2].preloaded == ["boto3"]  # a new spare
        await pool.close()
        assert not any(w.alive for w in FakeWorker.spawned)

    asyncio.run(scenario())


def test_a_worker_that_dies_is_replaced_in_the_background() -> None:
    async def scenario() -> None:
        pool = FunctionPool(SPEC)
        await pool.warm()
        [first] = FakeWorker.spawned
        first.die_after_call = True
        assert (await pool.invoke({}, 1.0)).kind is OutcomeKind.WORKER_DIED
        await settle()
        assert len(FakeWorker.spawned) == 2 and pool.pids == [FakeWorker.spawned[1].pid]
        assert (await call(pool))["pid"] == FakeWorker.spawned[1].pid
        await pool.close()

    asyncio.run(scenario())


def test_queued_calls_get_the_released_worker_first_come_first_served() -> None:
    async def scenario() -> None:
        pool = FunctionPool(SPEC)
        await pool.warm()
        [worker] = FakeWorker.spawned
        worker.hold = asyncio.Event()
        order: List[str] = []

        async def caller(name: str) -> None:
            await call(pool)
            order.append(name)

        in_flight = asyncio.ensure_future(caller("first"))
        await settle()
        worker.hold.set()  # released calls go straight through from here on
        queued = [asyncio.ensure_future(caller(name)) for name in ("a", "b", "c")]
        await asyncio.gather(in_flight, *queued)
        assert order == ["first", "a", "b", "c"] and len(FakeWorker.spawned) == 1
        await pool.close()

    asyncio.run(scenario())


def test_a_queued_call_cancelled_once_handed_a_worker_passes_it_to_the_next() -> None:
    async def scenario() -> None:
        pool = FunctionPool(SPEC)
        await pool.warm()
        [worker] = FakeWorker.spawned
        worker.hold = asyncio.Event()
        tasks: Dict[str, "asyncio.Task[Any]"] = {}

        async def first_then_cancel_the_next() -> None:
            await call(pool)  # its worker is handed to "a" on the way out
            worker.hold = None
            tasks["a"].cancel()  # before "a" runs: the worker must not be lost with it

        tasks["first"] = asyncio.ensure_future(first_then_cancel_the_next())
        await settle()
        tasks["a"] = asyncio.ensure_future(call(pool))
        tasks["b"] = asyncio.ensure_future(call(pool))
        await settle()
        worker.hold.set()
        await tasks["first"]
        assert (await tasks["b"])["pid"] == worker.pid
        assert tasks["a"].cancelled() and len(FakeWorker.spawned) == 1 and pool.idle == 1
        await pool.close()

    asyncio.run(scenario())
