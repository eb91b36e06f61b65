"""Where a pool's next worker comes from: a fork of the function's zygote, a spare, or a fresh process.

A fresh process imports the provider's dependencies before its own code, about the provider's
whole import time. With standby on, the pool keeps them imported ahead of need:

- a zygote (``zygote.py``) that forks each new worker in a few milliseconds, however many
  are needed one after the other (crash replacements, scaling up, back-to-back reloads),
  shared with the other functions of its code folder (``zygote_share.py``);
- once a pool has reloaded, a fork made ahead of the next save (``fork_ahead``), waiting for its load frame, so that
  the save's reload starts with the new code's import rather than with a fork (its page tables copied, the child
  set up: ~10 ms of the ~50 from a save to the new code answering, measured 2026-11-29 on the note sample);
- where forking is unsafe (macOS, a debugger in each worker, threads started by the
  dependencies' imports), one spare process with the dependencies imported, replaced
  after it is taken. ``on_note`` is told once why the zygote is not used.

The dependencies are the modules the provider's first load imported from outside its code
folder (``WorkerProcess.dependencies``), or given up front.

A zygote started for another function sharing it is forked from even before this pool's own
standby is on: serve's second function's first worker is such a fork (``registry.py``).
"""
from __future__ import annotations

import asyncio
from typing import Callable, List, Optional, Tuple

from cfnrun.runtime.process import WorkerInitError, WorkerProcess
from cfnrun.runtime.spec import WorkerSpec
from cfnrun.runtime.zygote import ForkUnavailable, Zygote, fork_unsafe_reason
from cfnrun.runtime.zygote_share import ZygoteShare


class WorkerSource:
    def __init__(
        self,
        spec: WorkerSpec,
        standby: bool = False,
        on_note: Optional[Callable[[str], None]] = None,
        zygotes: Optional[ZygoteShare] = None,
    ) -> None:
        """``zygotes``: where the zygote shared with other pools is found; None for one of this source's own."""
        self.spec = spec
        self.standby = standby
        self._on_note = on_note
        self._unsafe: Optional[str] = fork_unsafe_reason(spec.python, spec.debug_port)
        self._noted = False
        self._share = zygotes if zygotes is not None else ZygoteShare()
        self._zygote = self._share.join(spec, self._no_fork)
        self._spare: Optional["asyncio.Task[Optional[WorkerProcess]]"] = None
        self._ahead: Optional["asyncio.Task[Optional[Tuple[Zygote, WorkerProcess]]]"] = None  # a fork and its zygote
        self._leaving: Optional["asyncio.Future[None]"] = None
        self._closed = False

    @property
    def fork_unavailable(self) -> Optional[str]:
        """Why new workers are not forked from a zygote; None while they are (or may be)."""
        return self._unsafe or self._zygote.fork_unavailable

    def prepare(self, modules: List[str]) -> None:
        """Have the next worker ready to fork (or a spare to take), the dependencies ``modules`` imported."""
        if not self.standby or self._closed:
            return
        if self.fork_unavailable is None:
            self._zygote.prepare(self.spec, modules)
            return
        if self._spare is None:
            self._spare = asyncio.ensure_future(self._start_spare(list(modules)))

    async def new_worker(self) -> WorkerProcess:
        """A started worker that has loaded nothing yet; from the zygote or the spare when there is one."""
        if self._unsafe is None:
            for _ in range(2):  # once more where the zygote was replaced (or ended) meanwhile
                zygote = await self._zygote.ready()
                if zygote is None:
                    break
                ahead = await self._take_ahead(zygote)
                if ahead is not None:
                    return ahead
                try:
                    return await WorkerProcess.fork(self.spec, zygote)
                except ForkUnavailable:
                    self._zygote.ended(zygote)  # the next prepare() starts another
            if self._zygote.fork_unavailable is not None and self._spare is None:  # forking turned out unsafe: spares
                self.prepare(list(self._zygote.modules))
        spare = await self._take_spare()
        if spare is not None:
            return spare
        return await WorkerProcess.spawn(self.spec)

    def fork_ahead(self) -> None:
        """Have the next worker forked from the zygote now, unloaded, for the next ``new_worker`` (with standby, where
        forking is safe); one at a time. A fork from a zygote since replaced (the provider imports more) is not used."""
        if self.standby and not self._closed and self._unsafe is None and self._ahead is None:
            self._ahead = asyncio.ensure_future(self._fork_now())

    async def close(self) -> None:
        """End the spare and the fork made ahead, and leave the zygote: the last pool to leave ends it, once the workers it
        forked have ended."""
        self._closed = True
        if self._leaving is None:
            self._leaving = asyncio.ensure_future(self._share.leave(self._zygote, self._no_fork))
        await self._take_ahead(None)  # kills it
        spare = await self._take_spare()
        if spare is not None:
            await spare.kill()
        await asyncio.shield(self._leaving)  # a caller cancelled half-way (a pool closing) must not leave a zygote half closed

    # -- internals ---------------------------------------------------------------

    def _no_fork(self, reason: str) -> None:
        """The zygote this source forks from could not start, for ``reason``: said once per function."""
        if self._on_note is not None and not self._noted and not self._closed:
            self._noted = True
            self._on_note(f"{self.spec.function_name}: new workers start as fresh processes, not forks ({reason})")

    async def _start_spare(self, modules: List[str]) -> Optional[WorkerProcess]:
        worker = await WorkerProcess.spawn(self.spec)
        try:
            await worker.preload(modules)
        except WorkerInitError:
            return None
        return worker

    async def _fork_now(self) -> Optional[Tuple[Zygote, WorkerProcess]]:
        zygote = await self._zygote.ready()
        if zygote is None:
            return None
        try:
            return zygote, await WorkerProcess.fork(self.spec, zygote)
        except ForkUnavailable:
            return None

    async def _take_ahead(self, zygote: Optional[Zygote]) -> Optional[WorkerProcess]:
        """The fork made ahead, if it is alive and a fork of ``zygote``; one that is not is killed (None: kill it)."""
        task, self._ahead = self._ahead, None
        if task is None:
            return None
        try:
            made = await task
        except (OSError, asyncio.CancelledError):
            return None
        if made is None:
            return None
        forked_from, worker = made
        if forked_from is zygote and worker.alive:
            return worker
        await worker.kill()
        return None

    async def _take_spare(self) -> Optional[WorkerProcess]:
        task, self._spare = self._spare, None
        if task is None:
            return None
        try:
            worker = await task
        except (OSError, asyncio.CancelledError):
            return None
        return worker if worker is not None and worker.alive else None
