"""Where a pool's next worker comes from: a fork of the function's zygote, a spare, or a fresh process.

A fresh process imports the provider's dependencies before its own code, about the provider's
whole import time. With standby on, the pool keeps them imported ahead of need:

- a zygote (``zygote.py``) that forks each new worker in a few milliseconds, however many
  are needed one after the other (crash replacements, scaling up, back-to-back reloads);
- where forking is unsafe (macOS, a debugger in each worker, threads started by the
  dependencies' imports), one spare process with the dependencies imported, replaced
  after it is taken. ``on_note`` is told once why the zygote is not used.

The dependencies are the modules the provider's first load imported from outside its code
folder (``WorkerProcess.dependencies``), or given up front.
"""
from __future__ import annotations

import asyncio
from typing import Callable, List, Optional, Set

from cfnrun.runtime.process import WorkerInitError, WorkerProcess
from cfnrun.runtime.spec import WorkerSpec
from cfnrun.runtime.zygote import ForkUnavailable, Zygote, fork_unsafe_reason


class WorkerSource:
    def __init__(self, spec: WorkerSpec, standby: bool = False, on_note: Optional[Callable[[str], None]] = None) -> None:
        self.spec = spec
        self.standby = standby
        self._on_note = on_note
        self.fork_unavailable: Optional[str] = fork_unsafe_reason(spec.python, spec.debug_port)
        self._noted = False
        self._zygote: Optional["asyncio.Task[Optional[Zygote]]"] = None
        self._zygote_modules: Set[str] = set()
        self._spare: Optional["asyncio.Task[Optional[WorkerProcess]]"] = None
        self._closing: List["asyncio.Future[None]"] = []
        self._closed = False

    def prepare(self, modules: List[str]) -> None:
        """Have the next worker ready to fork (or a spare to take), the dependencies ``modules`` imported."""
        if not self.standby or self._closed:
            return
        if self.fork_unavailable is None:
            if self._zygote is not None and set(modules) <= self._zygote_modules:
                return
            if self._zygote is not None:  # the provider now imports more: a zygote that has it all
                self._retire_zygote(self._zygote)
            self._zygote_modules = set(modules)
            self._zygote = asyncio.ensure_future(self._start_zygote(list(modules)))
            return
        if self._spare is None:
            self._spare = asyncio.ensure_future(self._start_spare(list(modules)))

    async def new_worker(self) -> WorkerProcess:
        """A started worker that has loaded nothing yet; from the zygote or the spare when there is one."""
        zygote = await self._ready_zygote()
        if zygote is not None:
            try:
                return await WorkerProcess.fork(self.spec, zygote)
            except ForkUnavailable:
                self._zygote = None  # it ended; the next prepare() starts another
        spare = await self._take_spare()
        if spare is not None:
            return spare
        return await WorkerProcess.spawn(self.spec)

    async def close(self) -> None:
        """End the zygote (once the workers it forked have ended) and the spare."""
        self._closed = True
        if self._zygote is not None:
            self._retire_zygote(self._zygote)
            self._zygote = None
        spare = await self._take_spare()
        if spare is not None:
            await spare.kill()
        # Shielded: a caller cancelled half-way (a pool closing) must not leave a zygote half closed.
        await asyncio.gather(*(asyncio.shield(closing) for closing in self._closing), return_exceptions=True)

    # -- internals ---------------------------------------------------------------

    async def _start_zygote(self, modules: List[str]) -> Optional[Zygote]:
        spec = self.spec
        try:
            return await Zygote.start(spec.python, str(spec.code_dir), str(spec.cwd), dict(spec.env), modules, spec.init_timeout_s)
        except ForkUnavailable as error:
            self._no_fork(str(error))
        except (OSError, asyncio.TimeoutError) as error:
            self._no_fork(f"the zygote did not start: {error}")
        return None

    def _no_fork(self, reason: str) -> None:
        self.fork_unavailable = reason
        if self._on_note is not None and not self._noted:
            self._noted = True
            self._on_note(f"{self.spec.function_name}: new workers start as fresh processes, not forks ({reason})")

    async def _ready_zygote(self) -> Optional[Zygote]:
        task = self._zygote
        if task is None:
            return None
        try:
            zygote = await asyncio.shield(task)
        except (OSError, asyncio.CancelledError):
            return None
        if zygote is None:  # forking turned out unsafe: from now on, spares
            self._zygote = None
            self.prepare(sorted(self._zygote_modules))
            return None
        if not zygote.alive:
            self._zygote = None
            return None
        return zygote

    def _retire_zygote(self, task: "asyncio.Task[Optional[Zygote]]") -> None:
        async def retire() -> None:
            try:
                zygote = await task
            except (OSError, asyncio.CancelledError):
                return
            if zygote is not None:
                await zygote.close()

        self._closing = [closing for closing in self._closing if not closing.done()]
        self._closing.append(asyncio.ensure_future(retire()))

    async def _start_spare(self, modules: List[str]) -> Optional[WorkerProcess]:
        worker = await WorkerProcess.spawn(self.spec)
        try:
            await worker.preload(modules)
        except WorkerInitError:
            return None
        return worker

    async def _take_spare(self) -> Optional[WorkerProcess]:
        task, self._spare = self._spare, None
        if task is None:
            return None
        try:
            worker = await task
        except (OSError, asyncio.CancelledError):
            return None
        return worker if worker is not None and worker.alive else None
