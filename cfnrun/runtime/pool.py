"""Warm workers for one function: up to N run in parallel, the rest of the calls queue.

A worker that dies or is killed at its deadline is dropped and a replacement is
started in the background, so the next call finds a warm sandbox again.

``reload`` moves the pool to new code: idle workers are retired at once, busy ones
finish the call they started on the old code and are retired when they return, and
a worker with the new code is started right away. With ``standby`` new workers come
from a process that has already imported the provider's dependencies (boto3, the
support library, ...): a fork of the function's zygote, or a spare (``standby.py``), so
loading new code costs only the provider's own modules.

A pool can start with a worker already on its way (``first``: spawned, and told to load,
before the caller had the rest of its work done): the first worker the pool needs is that one.
"""
from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any, Callable, Deque, List, Optional, Set, Tuple

from cfnrun.runtime.logs import OUTPUT_TAP, OutputTap
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.process import BegunCall, WorkerInitError, WorkerProcess
from cfnrun.runtime.worker import protocol
from cfnrun.model.random_ids import random_uuid
from cfnrun.runtime.spec import WorkerSpec
from cfnrun.runtime.standby import WorkerSource
from cfnrun.runtime.zygote_share import ZygoteShare


Handed = Optional[Tuple[WorkerProcess, BegunCall]]  # what wakes a queued caller: its call begun on a worker, or None: look again


class _Queued:
    """A caller waiting for a worker, with its call ready to send: a worker set free begins it at once
    (``FunctionPool._release``), so the worker does not idle until the event loop gets back to the caller."""

    __slots__ = ("event_json", "timeout_s", "request_id", "tap", "woken")

    def __init__(self, event_json: bytes, timeout_s: float, request_id: str, tap: Optional[OutputTap]) -> None:
        self.event_json = event_json
        self.timeout_s = timeout_s
        self.request_id = request_id
        self.tap = tap
        self.woken: "Optional[asyncio.Future[Handed]]" = None  # set while it is in the queue

    def begin_on(self, worker: WorkerProcess) -> BegunCall:
        return worker.begin(self.event_json, self.timeout_s, self.request_id, self.tap)


class FunctionPool:
    def __init__(
        self,
        spec: WorkerSpec,
        size: int = 1,
        standby: bool = False,
        first: Optional[WorkerProcess] = None,
        dependencies: Optional[List[str]] = None,
        on_note: Optional[Callable[[str], None]] = None,
        zygotes: Optional[ZygoteShare] = None,
    ) -> None:
        """``dependencies``, when known up front, are imported ahead of need at once: then even the first worker
        is a fork of the zygote. Otherwise they are learned from the first worker that loads.

        ``zygotes``: the zygotes shared with the other pools of a registry (``zygote_share.py``); None for one of
        the pool's own."""
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        if first is not None and first.spec != spec:
            raise ValueError("the pool's first worker was started for another function or settings")
        self._first = first
        self.spec = spec
        self.size = size
        self.generation = 0
        self._idle: List[WorkerProcess] = []
        self._retired: List[WorkerProcess] = []  # idle on the old code at a reload: stopped once a worker of the new code has loaded
        self._workers: Set[WorkerProcess] = set()
        self._slots = 0  # workers of the current generation, alive or starting
        self._arriving = 0  # workers starting for the pool (warm, replacement), not for one caller
        self._waiting_for_arrivals = 0
        self._queued = 0  # callers waiting in _acquire (also once woken, until they run)
        # Queued callers, first come first served: each is woken with its call begun on a worker set free (handed
        # straight to it), or with None to look again (a slot freed, a worker arriving, a reload, the pool closing).
        # Nothing between a look and its change awaits, so the pool needs no lock.
        self._waiters: Deque[_Queued] = deque()
        self._background: Set["asyncio.Task[Any]"] = set()
        self._source = WorkerSource(spec, standby, on_note, zygotes)
        self._dependencies: List[str] = list(dependencies or [])
        self._loaded = dependencies is not None  # _dependencies is what the provider imports
        self._closed = False
        if self._loaded:
            self._source.prepare(self._dependencies)

    @property
    def standby(self) -> bool:
        return self._source.standby

    @property
    def fork_unavailable(self) -> Optional[str]:
        """Why new workers are not forked from a zygote; None while they are (or may be)."""
        return self._source.fork_unavailable

    async def warm(self) -> None:
        """Start one worker now, so the first call is warm; raises WorkerInitError.

        Calls that arrive meanwhile wait for this worker rather than each starting
        their own: after a reload the first call then pays only the new code's import.
        """
        arrival = self.start_warming()
        if arrival is not None:
            await arrival

    def start_warming(self) -> "Optional[asyncio.Future[None]]":
        """``warm`` without waiting: the worker is counted at once (calls from now on wait for it).

        Returns what ends once it is warm (or raises its WorkerInitError); None when no worker
        is needed: one is idle, or the pool is full or closed.
        """
        if self._closed or self._idle or self._slots >= self.size:
            return None
        self._slots += 1  # nothing awaits between the check and here: no lock needed
        self._arriving += 1
        return self._in_background(self._arrive(self.generation))

    async def _arrive(self, generation: int) -> None:
        try:
            worker = await self._start_worker(generation)
        finally:
            self._arriving -= 1
            self._wake_all()
        self._release(worker)

    async def invoke(
        self, event: Any, timeout_s: float, request_id: Optional[str] = None, event_json: Optional[bytes] = None
    ) -> InvocationOutcome:
        """One call on a warm worker (``event_json``: see ``WorkerProcess.invoke``).

        A caller that finds no worker idle queues with its call encoded; the worker a finished call frees begins
        the first queued call at once (its deadline runs from then), and the caller's task takes the answer when
        the loop gets back to it. A caller cancelled once its call has begun leaves the answer to the pool, which
        frees the worker when it comes (as a call cancelled while its worker runs it)."""
        request_id = request_id or random_uuid()
        body = event_json if event_json is not None else protocol.encode_json(event)
        # The warm path, without a coroutine of its own: an idle worker, and no caller queued before this one.
        worker = self._take_idle() if not self._queued and not self._closed else None
        if worker is not None:
            call = worker.begin(body, timeout_s, request_id, OUTPUT_TAP.get())
        else:
            started = time.perf_counter()
            try:
                worker, call = await self._acquire(_Queued(body, timeout_s, request_id, OUTPUT_TAP.get()))
            except WorkerInitError as error:
                return InvocationOutcome(
                    OutcomeKind.INIT_ERROR,
                    request_id,
                    (time.perf_counter() - started) * 1000.0,
                    logs=error.logs,
                    error=error.error,
                )
        try:
            outcome = await worker.outcome(call)
        except asyncio.CancelledError:
            self._in_background(self._answer_abandoned(worker, call))
            raise
        self._release(worker)
        return outcome

    async def reload(self) -> Optional[WorkerInitError]:
        """Switch to the code now on disk; the new code's init error, if it has one."""
        self.switch()
        try:
            await self.warm()
        except WorkerInitError as error:
            return error
        return None

    def switch(self) -> None:
        """Let the workers started on the old code go: from now on calls wait for, or start, a worker of the code on disk.

        The idle ones are stopped once the first worker of the new code has loaded (or failed to): stopping one sweeps
        ``/proc`` for what it started (``sandbox.py``), work that would otherwise compete with the new code's import."""
        self.generation += 1
        retired, self._idle = self._idle, []
        if self._first is not None:  # started on the old code
            retired.append(self._first)
            self._first = None
        for worker in retired:
            self._workers.discard(worker)
        self._retired += retired
        self._slots = 0
        self._wake_all()

    @property
    def idle(self) -> int:
        """Workers warm and waiting for a call (the rest of ``pids`` are busy or starting)."""
        return sum(1 for w in self._idle if w.alive)

    @property
    def calls(self) -> int:
        """Calls on the pool now: running on a worker, or queued for one (read by background work that waits for a pause)."""
        return len(self._workers) - len(self._idle) + self._queued

    @property
    def pids(self) -> List[int]:
        return sorted(w.pid for w in self._workers if w.alive)

    async def retire(self) -> None:
        """Take no new calls; let calls in flight finish on their workers, then stop them."""
        self._closed = True
        idle, self._idle = self._idle, []
        self._wake_all()
        first, self._first = self._first, None
        for worker in idle + ([first] if first is not None else []):
            self._workers.discard(worker)
            self._in_background(worker.stop())
        self._stop_retired()
        self._in_background(self._source.close())  # a zygote outlives the calls still running on its forks

    async def close(self) -> None:
        self._closed = True
        self._wake_all()
        background = list(self._background)
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)  # their workers are torn down
        first, self._first = self._first, None
        if first is not None:
            await first.kill()
        retired, self._retired = self._retired, []
        await asyncio.gather(*(w.kill() for w in [*self._workers, *retired]), return_exceptions=True)
        self._workers.clear()
        self._idle.clear()
        await self._source.close()

    # -- internals ---------------------------------------------------------------

    async def _acquire(self, queued: _Queued) -> Tuple[WorkerProcess, BegunCall]:
        """``queued``'s call begun on a worker, for a caller that found none idle (``invoke`` takes an idle one itself)
        or queued behind others."""
        self._queued += 1
        try:
            while True:
                if self._closed:
                    raise RuntimeError("the pool is closed")
                worker = self._take_idle()
                if worker is not None:
                    return worker, queued.begin_on(worker)
                if self._arriving > self._waiting_for_arrivals:
                    self._waiting_for_arrivals += 1  # a worker on its way will be ours
                    try:
                        handed = await self._wait(queued)
                    finally:
                        self._waiting_for_arrivals -= 1
                elif self._slots < self.size:
                    self._slots += 1
                    generation = self.generation
                    break
                else:
                    handed = await self._wait(queued)
                if handed is not None:  # begun on a worker of the current generation as it was set free
                    return handed
        finally:
            self._queued -= 1
        worker = await self._start_worker(generation)
        return worker, queued.begin_on(worker)

    async def _wait(self, queued: _Queued) -> Handed:
        """Queue for the next released worker (``queued``'s call begun on it) or the next change (None)."""
        woken: "asyncio.Future[Handed]" = asyncio.get_running_loop().create_future()
        queued.woken = woken
        self._waiters.append(queued)
        try:
            return await woken
        except asyncio.CancelledError:
            if woken.done() and not woken.cancelled():  # woken, then cancelled before it ran
                handed = woken.result()
                if handed is not None:  # its call runs already: the pool takes its answer and frees the worker
                    self._in_background(self._answer_abandoned(*handed))
                else:
                    self._wake_one()  # pass the look on
            raise

    async def _answer_abandoned(self, worker: WorkerProcess, call: BegunCall) -> None:
        """A begun call whose caller was cancelled: its answer awaited and dropped, then its worker released."""
        await worker.outcome(call)
        self._release(worker)

    def _next_waiter(self) -> Optional[_Queued]:
        while self._waiters:
            queued = self._waiters.popleft()
            woken = queued.woken
            if woken is not None and not woken.done():  # not cancelled
                return queued
        return None

    def _wake_one(self) -> None:
        queued = self._next_waiter()
        if queued is not None:
            assert queued.woken is not None
            queued.woken.set_result(None)

    def _wake_all(self) -> None:
        waiters, self._waiters = self._waiters, deque()
        for queued in waiters:
            woken = queued.woken
            if woken is not None and not woken.done():
                woken.set_result(None)

    def _take_idle(self) -> Optional[WorkerProcess]:
        while self._idle:
            worker = self._idle.pop()
            if worker.alive:
                return worker
            self._forget(worker)
        return None

    async def _start_worker(self, generation: int) -> WorkerProcess:
        try:
            return await self._load_worker(generation)
        finally:
            self._stop_retired()

    def _stop_retired(self) -> None:
        retired, self._retired = self._retired, []
        for worker in retired:
            self._in_background(worker.stop())

    async def _load_worker(self, generation: int) -> WorkerProcess:
        worker: Optional[WorkerProcess] = None
        try:
            worker, self._first = self._first, None
            if worker is None:
                worker = await self._source.new_worker()
            try:
                await worker.load()
                self._dependencies = worker.dependencies or self._dependencies
                self._loaded = True
            finally:
                if self._loaded:
                    self._source.prepare(self._dependencies)
                if generation:  # a reload's worker: the next save's is forked now
                    self._source.fork_ahead()
        except BaseException:
            if worker is not None:  # failed or cancelled half-way (the pool closing): leave nothing behind
                await worker.kill()
            if generation == self.generation:
                self._slots -= 1
            self._wake_one()
            raise
        worker.generation = generation
        self._workers.add(worker)
        return worker

    def _release(self, worker: WorkerProcess) -> None:
        """A worker back from a call: handed straight to the first queued caller, else idle; retired or
        replaced when it is of an older generation or dead."""
        current = worker.generation == self.generation
        if worker.alive and current and not self._closed:
            queued = self._next_waiter() if self._waiters else None  # none queued: no call
            if queued is not None:
                assert queued.woken is not None
                queued.woken.set_result((worker, queued.begin_on(worker)))  # sent now, before its caller runs again
            else:
                self._idle.append(worker)
            return
        if current:
            self._forget(worker)
        else:
            self._workers.discard(worker)
        if worker.alive:
            self._in_background(worker.stop())
        elif current and not self._closed:
            self._replenish()
        self._wake_one()

    def _forget(self, worker: WorkerProcess) -> None:
        if worker in self._workers:
            self._workers.discard(worker)
            self._slots -= 1

    def _replenish(self) -> None:
        """Start a replacement worker in the background (errors surface on the next call)."""

        async def start() -> None:
            try:
                await self.warm()
            except (WorkerInitError, OSError):
                return

        self._in_background(start())

    def keep_spare(self, standby: bool = True) -> None:
        """Turn ``standby`` on (ready ahead of need from now, once the dependencies are known) or off."""
        self._source.standby = standby
        if standby and self._loaded:  # otherwise the next worker to load tells the dependencies
            self._source.prepare(self._dependencies)

    def _in_background(self, work: Any) -> "asyncio.Future[Any]":
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task
