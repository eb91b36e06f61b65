"""Warm workers for one function: up to N run in parallel, the rest of the calls queue.

A worker that dies or is killed at its deadline is dropped and a replacement is
started in the background, so the next call finds a warm sandbox again.
"""
from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any, List, Optional, Set

from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.process import WorkerInitError, WorkerProcess, WorkerSpec


class FunctionPool:
    def __init__(self, spec: WorkerSpec, size: int = 1) -> None:
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        self.spec = spec
        self.size = size
        self._idle: List[WorkerProcess] = []
        self._workers: Set[WorkerProcess] = set()
        self._slots = 0  # workers alive or starting
        self._changed = asyncio.Condition()
        self._background: Set[asyncio.Task[None]] = set()
        self._closed = False

    async def warm(self) -> None:
        """Start one worker now, so the first call is warm; raises WorkerInitError."""
        worker = await self._acquire()
        await self._release(worker)

    async def invoke(self, event: Any, timeout_s: float, request_id: Optional[str] = None) -> InvocationOutcome:
        request_id = request_id or str(uuid.uuid4())
        started = time.perf_counter()
        try:
            worker = await self._acquire()
        except WorkerInitError as error:
            return InvocationOutcome(
                OutcomeKind.INIT_ERROR,
                request_id,
                (time.perf_counter() - started) * 1000.0,
                logs=error.logs,
                error=error.error,
            )
        outcome = await worker.invoke(event, timeout_s, request_id)
        await self._release(worker)
        return outcome

    @property
    def pids(self) -> List[int]:
        return sorted(w.pid for w in self._workers if w.alive)

    async def close(self) -> None:
        self._closed = True
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*(w.kill() for w in list(self._workers)), return_exceptions=True)
        self._workers.clear()
        self._idle.clear()

    # -- internals ---------------------------------------------------------------

    async def _acquire(self) -> WorkerProcess:
        async with self._changed:
            while True:
                if self._closed:
                    raise RuntimeError("the pool is closed")
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive:
                        return worker
                    self._forget(worker)
                if self._slots < self.size:
                    self._slots += 1
                    break
                await self._changed.wait()
        return await self._start_worker()

    async def _start_worker(self) -> WorkerProcess:
        try:
            worker = await WorkerProcess.start(self.spec)
        except BaseException:
            async with self._changed:
                self._slots -= 1
                self._changed.notify()
            raise
        self._workers.add(worker)
        return worker

    async def _release(self, worker: WorkerProcess) -> None:
        async with self._changed:
            if worker.alive and not self._closed:
                self._idle.append(worker)
            else:
                self._forget(worker)
                if not self._closed:
                    self._replenish()
            self._changed.notify()

    def _forget(self, worker: WorkerProcess) -> None:
        if worker in self._workers:
            self._workers.discard(worker)
            self._slots -= 1

    def _replenish(self) -> None:
        """Start a replacement worker in the background (errors surface on the next call)."""
        self._slots += 1

        async def start() -> None:
            try:
                worker = await self._start_worker()
            except (WorkerInitError, OSError):
                return
            await self._release(worker)

        task = asyncio.ensure_future(start())
        self._background.add(task)
        task.add_done_callback(self._background.discard)
