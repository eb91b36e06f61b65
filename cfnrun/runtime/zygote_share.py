"""Which zygote a pool forks its workers from: one for all the functions whose workers could be forks of one process.

Functions of one code folder (a provider project's TypeFunction and TestEntrypoint, say) run in
the same interpreter and working folder, import the same dependencies, and have the same
environment apart from the variables that name the function (``FUNCTION_VARIABLES``). One zygote
forks the workers of them all, each fork taking its own function's values of those variables
(``zygote.py``). Any other difference, their template Environment's included (a dependency may
read a variable as it is imported), means a zygote of their own.

A registry (``registry.py``) keeps one ``ZygoteShare`` for all its pools; a pool made without one
has a share of its own (``cfnrun invoke``'s pool, benches), which only it uses.

A zygote outlives every worker it forked (it is their parent: ``Zygote.close`` waits for them).
It retires when the last pool using it leaves (closes or retires), or when a pool needs modules it
has not imported (a reload brought a new dependency): a zygote importing what it had and the new
modules then replaces it for every pool sharing it, and the old one ends once its forks have.
"""
from __future__ import annotations

import asyncio
import os
from typing import Callable, Dict, Hashable, List, Optional

from cfnrun.runtime.environment import FUNCTION_VARIABLES
from cfnrun.runtime.spec import WorkerSpec
from cfnrun.runtime.zygote import VARIABLE_ROOM, ForkUnavailable, Zygote


def zygote_key(spec: WorkerSpec) -> Hashable:
    """Equal for two specs whose workers can be forks of one zygote.

    A function variable too long for the zygote's room for it (``VARIABLE_ROOM``) counts with its value.
    """

    def shared(name: str, value: str) -> bool:
        return name in FUNCTION_VARIABLES and len(os.fsencode(value)) <= VARIABLE_ROOM

    environment = tuple(sorted((name, None if shared(name, value) else value) for name, value in spec.env.items()))
    return (spec.python, str(spec.code_dir), str(spec.cwd), spec.debug_port, environment)


class SharedZygote:
    """The zygote of one key (or its start), the modules it imports, and the pools that use it."""

    def __init__(self, key: Hashable) -> None:
        self.key = key
        self.users: List[Callable[[str], None]] = []  # each pool using it: told once a zygote fails to start, and why
        self.modules: List[str] = []  # in the order they were first imported
        self.fork_unavailable: Optional[str] = None  # why no zygote of this key can fork, once one failed to
        self._task: Optional["asyncio.Task[Optional[Zygote]]"] = None
        self._retiring: List["asyncio.Future[None]"] = []
        self._closed = False

    @property
    def started(self) -> bool:
        """A zygote is starting or started (``ready`` then waits for it)."""
        return self._task is not None

    def prepare(self, spec: WorkerSpec, modules: List[str]) -> None:
        """Have a zygote importing ``modules`` on its way, started with ``spec``'s settings unless one is already."""
        if self._closed or self.fork_unavailable is not None:
            return
        if self._task is not None and set(modules) <= set(self.modules):
            return
        if self._task is not None:  # a pool's provider now imports more: a zygote that has it all, for every pool
            self._retire(self._task)
        self.modules += [name for name in modules if name not in self.modules]
        self._task = asyncio.ensure_future(self._start(spec, list(self.modules)))

    async def ready(self) -> Optional[Zygote]:
        """The zygote, once it has imported its modules; None where there is none, or it failed to start or has ended."""
        task = self._task
        if task is None:
            return None
        try:
            zygote = await asyncio.shield(task)
        except OSError:
            return None
        except asyncio.CancelledError:
            if task.cancelled():  # the zygote's start was called off (``close``): there is none
                return None
            raise  # the caller was (a pool closing): it starts no worker now
        if zygote is not None and not zygote.alive:
            self.ended(zygote)
            return None
        return zygote

    def ended(self, zygote: Zygote) -> None:
        """``zygote`` can fork no more: if it is the current one, the next ``prepare`` starts another."""
        task = self._task
        if task is not None and task.done() and not task.cancelled() and task.exception() is None and task.result() is zygote:
            self._retire(task)
            self._task = None

    async def close(self) -> None:
        """Retire the zygote; return once it (and every zygote replaced before it) has ended."""
        self._closed = True
        if self._task is not None:
            if not self._task.done():  # still importing: no pool will fork from it, so it is not waited for
                self._task.cancel()
            self._retire(self._task)
            self._task = None
        # Shielded: a caller cancelled half-way (a pool closing) must not leave a zygote half closed.
        await asyncio.gather(*(asyncio.shield(retiring) for retiring in self._retiring), return_exceptions=True)

    async def _start(self, spec: WorkerSpec, modules: List[str]) -> Optional[Zygote]:
        try:
            return await Zygote.start(
                spec.python, str(spec.code_dir), str(spec.cwd), spec.env, modules, spec.init_timeout_s, FUNCTION_VARIABLES
            )
        except ForkUnavailable as error:
            self.fork_unavailable = str(error)
        except (OSError, asyncio.TimeoutError) as error:
            self.fork_unavailable = f"the zygote did not start: {error}"
        for user in list(self.users):
            user(self.fork_unavailable)
        return None

    def _retire(self, task: "asyncio.Task[Optional[Zygote]]") -> None:
        async def retire() -> None:
            try:
                zygote = await task
            except (OSError, asyncio.CancelledError):
                return
            if zygote is not None:
                await zygote.close()  # once the workers it forked have ended

        self._retiring = [retiring for retiring in self._retiring if not retiring.done()]
        self._retiring.append(asyncio.ensure_future(retire()))


class ZygoteShare:
    """The zygotes of one registry's pools, one per ``zygote_key``."""

    def __init__(self) -> None:
        self._zygotes: Dict[Hashable, SharedZygote] = {}

    def join(self, spec: WorkerSpec, on_unavailable: Callable[[str], None]) -> SharedZygote:
        """The zygote ``spec``'s pool forks from, used by it until it ``leave``s; ``on_unavailable`` is told why if it cannot fork."""
        key = zygote_key(spec)
        shared = self._zygotes.get(key)
        if shared is None:
            shared = self._zygotes[key] = SharedZygote(key)
        shared.users.append(on_unavailable)
        return shared

    async def leave(self, shared: SharedZygote, on_unavailable: Callable[[str], None]) -> None:
        """One pool less uses ``shared``: after the last, it closes (return once it has)."""
        shared.users.remove(on_unavailable)
        if shared.users:
            return
        if self._zygotes.get(shared.key) is shared:
            del self._zygotes[shared.key]
        await shared.close()

    def shared(self, spec: WorkerSpec, other: WorkerSpec) -> bool:
        """The workers of both specs are forks of one zygote (once it has started)."""
        return zygote_key(spec) == zygote_key(other)
