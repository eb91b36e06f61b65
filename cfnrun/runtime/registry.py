"""One source's functions (a provider project's, or a template's plain functions), each with its own pool of warm
workers, created on first use. Serve keeps one registry per source (``app/served.py``)."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Collection, Dict, Generic, List, Optional, Tuple, TypeVar

from cfnrun.runtime.pool import FunctionPool
from cfnrun.runtime.process import WorkerInitError, WorkerProcess
from cfnrun.runtime.spec import RuntimeSettings, WorkerSpec, worker_spec
from cfnrun.runtime.zygote_share import ZygoteShare
from cfnrun.model.template import FunctionSource, FunctionSpec

# Hands over a worker already started for a spec (``app/early_start.py``), or None.
Adopt = Callable[[WorkerSpec], Optional[WorkerProcess]]
S = TypeVar("S", bound=FunctionSource)


class FunctionRegistry(Generic[S]):
    """``project``: the source as it is now (a reload may bring a new one): a ``Project``, or a ``FunctionTemplate``."""

    projects_set: ClassVar[int] = 0  # how many times any registry's ``project`` was set: what was found by name may have changed

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "project":
            FunctionRegistry.projects_set += 1
        super().__setattr__(name, value)

    def __init__(self, project: S, settings: RuntimeSettings, on_note: Optional[Callable[[str], None]] = None) -> None:
        self.project = project
        self.settings = settings
        self._on_note = on_note  # told once per function when its workers cannot be forked
        self._pools: Dict[str, FunctionPool] = {}
        self._warming: Dict[str, "asyncio.Task[Optional[WorkerInitError]]"] = {}
        self._asked: Dict[str, "asyncio.Future[Optional[asyncio.Future[None]]]"] = {}  # functions waiting for their turn to warm
        self._spares = False  # settings.standby takes effect at keep_spares_when_warm(): start-up first
        self._zygotes = ZygoteShare()  # one zygote for the functions of one code folder (zygote_share.py)
        self._spares_task: Optional["asyncio.Task[None]"] = None
        self._last_called: Optional[str] = None  # the function the latest call went to: a reload warms it first

    def keep_spares_when_warm(self) -> None:
        """Once every function's first worker is warm (or failed), pools keep their spares (settings.standby).

        Spares import the provider's dependencies too: started with the first workers, they
        would compete with them, and with the server's own start-up, for the same cores.
        """
        warming = list(self._warming.values())

        async def when_warm() -> None:
            await asyncio.gather(*warming, return_exceptions=True)
            self._spares = self.settings.standby
            for pool in self._pools.values():
                pool.keep_spare(self._spares)

        self._spares_task = asyncio.ensure_future(when_warm())

    def resolve(self, name: str) -> Optional[FunctionSpec]:
        return self.project.find_function(name)

    def workers(self, logical_id: str) -> int:
        """How many workers function ``logical_id``'s pool has now (0 before its first call or warm-up)."""
        pool = self._pools.get(logical_id)
        return len(pool.pids) if pool is not None else 0

    def idle_workers(self, logical_id: str) -> int:
        """How many of function ``logical_id``'s workers wait warm for a call now."""
        pool = self._pools.get(logical_id)
        return pool.idle if pool is not None else 0

    def calls(self) -> int:
        """Calls on this registry's functions now, running or queued."""
        return sum(pool.calls for pool in self._pools.values())

    def pool(self, function: FunctionSpec) -> FunctionPool:
        self._last_called = function.logical_id
        pool = self._pools.get(function.logical_id)
        if pool is None:
            pool = self._new_pool(function)
            self._pools[function.logical_id] = pool
        asked = self._asked.pop(function.logical_id, None)
        if asked is not None and not asked.done():  # asked for before its turn to warm: its worker starts now
            asked.set_result(pool.start_warming())
        return pool

    def _new_pool(self, function: FunctionSpec, adopt: Optional[Adopt] = None) -> FunctionPool:
        # A debugger port belongs to one process: one worker per function then.
        workers = 1 if self.settings.debug_port is not None else self.settings.workers
        spec = worker_spec(self.project, function, self.settings)
        first = adopt(spec) if adopt is not None else None
        return FunctionPool(spec, workers, standby=self._spares, first=first, on_note=self._on_note, zygotes=self._zygotes)

    async def reload(self, project: Optional[S] = None) -> Dict[str, Optional[WorkerInitError]]:
        """Move every function to the code on disk, and to ``project``'s functions if given.

        Functions whose configuration is unchanged reload their code in place, all switched at
        once (a call from then on runs the new code); the one the latest call went to starts its
        new worker first and the others once it is warm, so on a small machine the function in
        use does not share the cores with the others' imports (a call for one of them starts its
        worker at once). Added functions get a pool, removed ones finish their calls in flight
        and go. Returns the init error (or None) of every function now served.
        """
        if project is not None:
            self.project = project
        current = self.project.functions
        for name in [n for n in self._pools if n not in current]:
            await self._pools.pop(name).retire()
        results: Dict[str, Optional[WorkerInitError]] = {}
        in_place = {  # a save of code alone (no new project) changes no function's configuration
            name: pool for name, pool in self._pools.items()
            if name in current and (project is None or pool.spec == worker_spec(self.project, current[name], self.settings))
        }
        for pool in in_place.values():
            pool.switch()
        order = sorted(in_place, key=lambda name: name != self._last_called)  # stable: then as declared
        warming: Dict[str, "asyncio.Task[Optional[WorkerInitError]]"] = {}
        if order:
            first_pool = in_place[order[0]]
            warming[order[0]] = first = asyncio.ensure_future(_warmed(first_pool.start_warming()))
            for name in order[1:]:
                self._asked[name] = asyncio.get_running_loop().create_future()  # set by ``pool`` for a call
                warming[name] = asyncio.ensure_future(self._warm_after(name, in_place[name], first, first_pool, self._asked[name]))
            self._warming.update(warming)  # cancelled by ``close`` and ``rest`` as the first warm-ups are

        async def refresh(function: FunctionSpec) -> None:
            if function.logical_id in warming:
                results[function.logical_id] = await warming[function.logical_id]
                return
            pool = self._pools.get(function.logical_id)
            if pool is not None:
                await pool.retire()
            fresh = self._pools[function.logical_id] = self._new_pool(function)
            try:
                await fresh.warm()
                results[function.logical_id] = None
            except WorkerInitError as error:
                results[function.logical_id] = error

        await asyncio.gather(*(refresh(f) for f in current.values()))
        return {name: results[name] for name in current}

    def warm_each(
        self, adopt: Optional[Adopt] = None, skip: Collection[str] = ()
    ) -> Dict[str, "asyncio.Task[Optional[WorkerInitError]]"]:
        """Start one worker per function (but those named in ``skip``), each in its own task, and wait for none of them.

        The pools exist when this returns, so a call that arrives before its function is
        warm waits for that function's worker (never for the others') instead of starting
        one more. Each task ends with the function's init error, or None once it is warm.

        The first function declared (TypeFunction in a ``cfn init`` template) starts at once;
        the others once it is warm, so on a small machine it does not share the cores with
        them as well as with the server's own start-up. A call for one of the others before
        then starts its worker at once (``pool`` below), and waits for that one.

        With standby on, once the first function is warm its zygote starts (rather than once
        every function is) where another function shares it (same code folder, ``zygote_share.py``):
        that one's first worker is then a fork of it, instead of a fresh process importing the
        provider's dependencies a second time alongside the zygote.

        ``adopt`` may hand over the first function's worker, started before the event loop was
        (``app/early_start.py``): that one is its first worker then. A function in ``skip`` gets
        its pool and first worker at its first call (``pool``), as one not yet warm would.
        """
        first: "Optional[Tuple[asyncio.Task[Optional[WorkerInitError]], FunctionPool]]" = None
        for name, function in self.project.functions.items():
            if name in skip:
                continue
            if first is None and adopt is not None and name not in self._pools:
                self._pools[name] = self._new_pool(function, adopt)
            pool = self.pool(function)
            if first is None:
                self._warming[name] = warming = asyncio.ensure_future(_warmed(pool.start_warming()))
                first = (warming, pool)
            else:
                self._asked[name] = asyncio.get_running_loop().create_future()  # set by ``pool`` for a call
                self._warming[name] = asyncio.ensure_future(self._warm_after(name, pool, *first, self._asked[name]))
        return dict(self._warming)

    async def _warm_after(
        self,
        name: str,
        pool: FunctionPool,
        first: "asyncio.Future[Optional[WorkerInitError]]",
        first_pool: FunctionPool,
        asked: "asyncio.Future[Optional[asyncio.Future[None]]]",
    ) -> Optional[WorkerInitError]:
        try:
            either: "List[asyncio.Future[Any]]" = [first, asked]
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._asked.pop(name, None)
        if asked.done():
            return await _warmed(asked.result())
        if self.settings.standby and self._zygotes.shared(first_pool.spec, pool.spec):
            first_pool.keep_spare()  # its zygote starts now (once), and this worker is a fork of it
        return await _warmed(pool.start_warming())

    async def rest(self) -> None:
        """Let every worker go (spares and zygotes too) once its call in flight ends: a registered version no longer its
        type's default. The next call, or ``wake``, starts them again as a first call does."""
        if self._spares_task is not None:
            self._spares_task.cancel()
            self._spares_task = None
        self._spares = False
        warming, self._warming = list(self._warming.values()), {}
        pools, self._pools = list(self._pools.values()), {}
        for task in warming:
            task.cancel()
        await asyncio.gather(*warming, return_exceptions=True)
        await asyncio.gather(*(pool.retire() for pool in pools))

    def wake(self) -> None:
        """After ``rest``: one worker per function started now, then the spares (nothing when the functions have workers)."""
        if not self._pools:
            self.warm_each()
            self.keep_spares_when_warm()

    async def close(self) -> None:
        # A worker still importing belongs to no pool yet: cancelling its start tears it down.
        if self._spares_task is not None:
            self._spares_task.cancel()
        warming, self._warming = list(self._warming.values()), {}
        for task in warming:
            task.cancel()
        await asyncio.gather(*warming, return_exceptions=True)
        await asyncio.gather(*(pool.close() for pool in self._pools.values()))
        self._pools.clear()


async def _warmed(arrival: "Optional[asyncio.Future[None]]") -> Optional[WorkerInitError]:
    """Once ``arrival`` (a pool's ``start_warming``) is warm: its init error, or None."""
    if arrival is None:
        return None
    try:
        await arrival
    except WorkerInitError as error:
        return error
    return None


@dataclass(frozen=True, eq=False)
class ServedFunction:
    """A function as serve answers for it: the name it goes by there, its spec, and the registry whose pools run it."""

    name: str  # unambiguous among everything serve serves
    spec: FunctionSpec
    registry: "FunctionRegistry[Any]"
    type_name: Optional[str] = None  # the provider's resource type or hook; None for a plain function

    def pool(self) -> FunctionPool:
        return self.registry.pool(self.spec)
