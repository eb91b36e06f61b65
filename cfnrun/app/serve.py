"""cfnrun serve: startup → serve → shutdown, until Ctrl-C or SIGTERM; no worker outlives it.

What it serves (``Sources``): one or more provider projects (the current one and each ``--provider``)
and the plain functions of each ``--functions`` template, each with its own warm pools and reload
(``app/served.py``). Startup (``start_server``): the workers begin to warm (the first may have been spawned before
the command line loaded, ``app/early_start.py``), the port listens as soon as the Lambda Invoke
API can answer (``app/endpoint.py``), and then one step loads what answers do not wait for
(``app/late_parts.py``: the contract checks, history, Cloud Control's request store).
Serve (``_until_stopped``): until Ctrl-C or SIGTERM, or until that step fails (an unusable schema).
Shutdown (``RunningServer.stop``): new calls are refused, the calls in flight and the late
step share one grace, then every worker stops.
"""
from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import signal
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Dict, Iterator, Optional, Tuple

from cfnrun.contract.mode import ContractMode
from cfnrun.model.function_template import FunctionTemplate
from cfnrun.model.module_fragment import ModuleFragment
from cfnrun.model.patterns import skipped_pattern_note, unusable_patterns
from cfnrun.model.project import Project
from cfnrun.app.settings.serve import DEFAULT_HOST
from cfnrun.app.serve_settings import ServeSettings
from cfnrun.app.loaded_objects import keep_what_loaded
from cfnrun.app.moto_server import aws_endpoint_choice, moto_server
from cfnrun.app.served import Served, Warming
from cfnrun.app.state_lock import StateHold, state_held
from cfnrun.app.stop_steps import StopIncomplete
from cfnrun.runtime.process import WorkerInitError
from cfnrun.runtime.registry import FunctionRegistry
from cfnrun.ui.console import Console

if TYPE_CHECKING:
    from cfnrun.app.early_start import EarlyStart
    from cfnrun.app.endpoint import RunningServer

# What answers a call, imported on a thread while the first worker imports the provider (on two
# cores the start-ups overlap): aiohttp, the HTTP layer, the call policy. Serve listens once it is in.
ENDPOINT_MODULE = "cfnrun.app.endpoint"
LOOPBACK_HOSTS = (DEFAULT_HOST, "localhost", "::1")
DEBUG_TIMEOUT_S = 24 * 3600.0


@dataclass(frozen=True)
class Sources:
    """What one serve serves: provider projects (the current project first, when there is one) and templates of plain functions."""

    providers: Tuple[Project, ...]
    templates: Tuple[FunctionTemplate, ...] = ()
    hooks: Tuple[str, ...] = ()  # the hooks --hook named (among the providers): they run in stacks from the start
    modules: Tuple[ModuleFragment, ...] = ()  # MODULE projects given with --provider: their fragments expand in stacks

    @classmethod
    def of(cls, project: Project) -> "Sources":
        return cls((project,))


async def serve_forever(
    sources: Sources,
    settings: ServeSettings,
    console: Console,
    on_started: Optional[Callable[[RunningServer], Awaitable[None]]] = None,
    early: Optional[EarlyStart] = None,
) -> None:
    """Serve until Ctrl-C or SIGTERM; ``early``: what the early start began, when serve runs as the command."""
    # Ctrl-C and SIGTERM stop serve gracefully from its first line on: one that comes while serve
    # starts (its port already open, the watch being set up) stops it as soon as it has started;
    # a second one while it still starts ends the start at once.
    stop, started, forced = asyncio.Event(), asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()
    serving = asyncio.current_task()

    def on_signal() -> None:
        if stop.is_set() and not started.is_set() and serving is not None and not forced.is_set():
            forced.set()
            serving.cancel()
        stop.set()

    previous: Dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous[signum] = signal.getsignal(signum)
        loop.add_signal_handler(signum, on_signal)
    try:
        for project in sources.providers:
            console.info(f"cfnrun serve: {project.type_name} from {project.root}")
        for template in sources.templates:
            console.info(f"cfnrun serve: functions {', '.join(template.functions)} from {template.path}")
        with state_held(settings.stack_state) as hold, aws_calls_routed(settings, console) as routed:
            await _serve(sources, routed, console, on_started, stop, started, early, hold)
    except asyncio.CancelledError:
        if forced.is_set():  # what start_server had begun is undone by now: no worker is left
            raise KeyboardInterrupt from None
        raise
    finally:
        for number, handler in previous.items():
            loop.remove_signal_handler(number)
            signal.signal(number, handler)


async def _serve(
    sources: Sources,
    settings: ServeSettings,
    console: Console,
    on_started: Optional[Callable[[RunningServer], Awaitable[None]]],
    stop: asyncio.Event,
    started: asyncio.Event,
    early: Optional[EarlyStart],
    hold: StateHold,
) -> None:
    server = await start_server(sources, settings, console, early)  # startup
    hold.tell(server.url)
    started.set()
    # It answers calls already; it says it listens once it knows it can go on (a broken schema stops it first).
    announcing = asyncio.ensure_future(_announce_when_loaded(settings, server, console))
    try:  # serve
        if on_started is not None:
            await on_started(server)
        else:
            await _until_stopped(server, stop)
    finally:  # shutdown
        console.info(
            f"stopping: finishing in-flight calls (up to {settings.shutdown_timeout_s:g} s; any still running "
            "then are answered with Runtime.ExitError), then stopping workers"
        )
        announcing.cancel()
        await server.stop(settings.shutdown_timeout_s)
        if server.stopped_cleanly:
            console.info("stopped")
    if not server.stopped_cleanly:
        raise StopIncomplete(f"serve stopped without waiting for: {'; '.join(server.stop_steps.left_behind)} (a bug in cfnrun; see above)")


async def start_server(sources: Sources, settings: ServeSettings, console: Console, early: Optional[EarlyStart] = None) -> RunningServer:
    """Startup: the workers begin to warm, the port listens, then the late parts load (``RunningServer.loaded``).

    A start that fails or is interrupted stops what it began: no worker outlives it.
    """
    _warn_before_starting(sources, settings, console)
    loading_since = early.began_at if early is not None else time.time()  # the project's files were read from then on
    budgets = replace(settings.budgets, invocation_timeout_s=DEBUG_TIMEOUT_S) if settings.debugging else settings.budgets
    served = Served(sources.providers, sources.templates, settings.runtime, budgets, on_note=console.warn)
    # Workers import in the background while the server starts listening: a call waits only
    # for its own function's worker, and the console says when each function is warm.
    warming = served.warm_each(adopt=early.take if early is not None else None, test_entrypoints=settings.warm_test_entrypoints)
    announce_warm(served, warming, console)
    # The file watches set themselves up while the server loads; they are in place before serve says it listens.
    # Saves made since the workers began to load are caught up on, as a first change.
    watches = [_FileWatch(registry, console, loading_since) for registry in served.registries] if settings.reload else []
    try:
        await asyncio.to_thread(importlib.import_module, ENDPOINT_MODULE)
        from cfnrun.app.endpoint import listen

        server = await listen(served, settings, console, warming)
    except BaseException:
        for watch in watches:
            watch.abandon()
        await served.close()  # interrupted, a broken install, a taken port: no worker outlives this
        raise
    # Listening: what no answer waits for loads now, in one step (``app/late_parts.py``).
    server.late.begin(
        served, budgets, console, settings.contract, settings.virtual_clock, server.url, settings.stack_state, sources.hooks,
        settings.guard_rules_dirs, sources.modules, settings.parameter_lookups,
    )
    try:
        for watch in watches:
            await watch.in_place(server)
    except BaseException:
        await server.stop(0.0)
        raise
    return server


def _warn_before_starting(sources: Sources, settings: ServeSettings, console: Console) -> None:
    if settings.host not in LOOPBACK_HOSTS:
        console.warn(
            f"binding to {settings.host}: anyone who can reach this machine can run your handlers "
            "with the credentials passed to them. Use the default 127.0.0.1 unless you mean it."
        )
    if settings.contract is not ContractMode.OFF:
        for project in sources.providers:
            for pointer, pattern in unusable_patterns(project.schema.document):
                console.warn(skipped_pattern_note(pointer, pattern))


class _FileWatch:
    """``--reload``'s watch, set up while the server starts; it reloads once serve listens."""

    def __init__(self, registry: "FunctionRegistry[Any]", console: Console, saved_since: float) -> None:
        from cfnrun.app.reloader import Reloader

        self.console = console
        self.reloader = Reloader(registry, console)
        self.starting = asyncio.ensure_future(self.reloader.start(saved_since))

    def abandon(self) -> None:
        """The server did not start: the watch stops too."""
        self.starting.cancel()
        if self.starting.done() and not self.starting.cancelled():
            self.starting.exception()  # a watch that failed first: what stops serve is the server's error
        self.reloader.feed.stop()

    async def in_place(self, server: RunningServer) -> None:
        """Once the watch is set up, the server reloads on each save; a watch that cannot start is only warned about."""
        from cfnrun.app.watcher import WatchFailed

        try:
            await self.starting
        except WatchFailed as error:  # it has stopped itself
            self.console.warn(f"reload: {error}; serving without reload")
            return
        server.reloaders.append(self.reloader)
        server.reloading.append(asyncio.ensure_future(self.reloader.run()))


def announce_warm(served: Served, warming: Warming, console: Console) -> None:
    """Say when each function's first worker is warm, or why it does not load."""
    started = time.perf_counter()
    handlers = served.handlers()

    def report(name: str, task: "asyncio.Task[Optional[WorkerInitError]]") -> None:
        if task.cancelled():
            return
        failure = task.exception()
        if failure is not None:  # not the provider's fault (no process could start): the next call tries again
            console.error(f"{name}: cannot start a worker: {failure}")
            return
        error = task.result()
        if error is None:
            took = (time.perf_counter() - started) * 1000.0
            console.info(f"  {name:<20} {handlers[name]}  warm in {took:.0f} ms")
        else:
            console.error(f"{name} does not load: {error.error.error_type}: {error}")

    for name, task in warming.items():
        task.add_done_callback(functools.partial(report, name))


def _announce(settings: ServeSettings, server: RunningServer, console: Console) -> None:
    console.info(f"Lambda Invoke API listening on {server.url} (Ctrl-C to stop)")
    served = server.served
    if served.type_names():
        console.info(f"Cloud Control API for {', '.join(served.type_names())} at {server.url}/")
    console.info(f"CloudFormation API (local stacks) at {server.url}/")
    console.info(f"console: open {server.url}/ in a browser")
    if len(served.registries) > 1:
        console.info(f"functions by unambiguous name: {', '.join(served.function_names())}")
    if server.reloaders:
        folders = ", ".join(str(reloader.registry.project.root) for reloader in server.reloaders)
        console.info(f"reload: watching {folders} for changes (--no-reload to turn off)")
    if settings.answers_sts:
        console.info(f"STS stand-in (GetCallerIdentity, GetSessionToken) at {server.url}/")


async def _announce_when_loaded(settings: ServeSettings, server: RunningServer, console: Console) -> None:
    """Say serve listens once what it loads after listening is in; never, if that fails (``_until_stopped`` says why)."""
    try:
        await asyncio.shield(server.loaded)
    except Exception:  # noqa: B902 - reported where serve stops on it
        return
    keep_what_loaded()  # the modules, the app, the served projects: kept for the life of the process
    _announce(settings, server, console)


async def _until_stopped(server: RunningServer, stop: asyncio.Event) -> None:
    """Until Ctrl-C or SIGTERM; or until what serve loads after listening fails, with that error."""
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait([stopped, server.loaded], return_when=asyncio.FIRST_COMPLETED)
        if server.loaded.done() and not stopped.done():
            server.loaded.result()  # raises what stops serve (an unusable schema)
            await stopped
    finally:
        stopped.cancel()


@contextlib.contextmanager
def aws_calls_routed(settings: ServeSettings, console: Console) -> Iterator[ServeSettings]:
    """The settings to serve with: ``--moto`` starts a moto server (until the block ends) and routes AWS calls to it."""
    aws_endpoint_choice(settings.runtime.aws_endpoint, settings.moto)
    if not settings.moto:
        if settings.runtime.aws_endpoint:
            console.info(f"the handlers' AWS calls go to {settings.runtime.aws_endpoint}")
        yield settings
        return
    with moto_server() as url:
        console.info(f"moto server (AWS stand-in) at {url}: the handlers' AWS calls go there")
        yield replace(settings, moto=False, runtime=replace(settings.runtime, aws_endpoint=url))
