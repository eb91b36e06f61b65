"""Run the Lambda endpoint until Ctrl-C or SIGTERM, then stop cleanly: no orphan workers."""
from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import signal
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Dict, Iterator, Optional

from cfnrun.api.limits import ConnectionLimits
from cfnrun.contract.mode import ContractMode
from cfnrun.model.errors import CfnrunError
from cfnrun.model.budgets import Budgets
from cfnrun.model.patterns import skipped_pattern_note, unusable_patterns
from cfnrun.model.project import Project
from cfnrun.app.moto_server import aws_endpoint_choice, moto_server
from cfnrun.runtime.process import WorkerInitError
from cfnrun.runtime.registry import FunctionRegistry
from cfnrun.runtime.spec import RuntimeSettings
from cfnrun.ui.console import Console

if TYPE_CHECKING:
    from aiohttp import web

    from cfnrun.app.early_start import EarlyStart
    from cfnrun.api.lambda_api import LambdaService
    from cfnrun.app.reloader import Reloader
    from cfnrun.app.resource_requests import ResourceRequestStore

# Serve listens once these are imported (on a thread, while the first worker imports the provider:
# on two cores the start-ups overlap).
LISTEN_MODULES = ("aiohttp.web", "cfnrun.api.connections", "cfnrun.api.lambda_api")
# Loaded once it listens: what reviews each answered call (the contract checker with jsonschema,
# pydantic's wire models, history) and the Cloud Control API's request store. A call that needs
# them sooner (``--contract strict``, Cloud Control) waits for them; other calls do not.
LATE_MODULES = ("cfnrun.api.call_review", "cfnrun.app.resource_requests", "cfnrun.history.recorder")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
DEBUG_TIMEOUT_S = 24 * 3600.0
ANSWER_AFTER_STOP_S = 2.0  # once workers are stopped, how long the calls they ran have to be answered


@dataclass(frozen=True)
class ServeSettings:
    host: str = "127.0.0.1"
    port: int = 3001
    runtime: RuntimeSettings = RuntimeSettings()
    budgets: Budgets = Budgets()
    shutdown_timeout_s: float = 10.0  # the grace calls in flight get on Ctrl-C or SIGTERM
    connections: ConnectionLimits = ConnectionLimits()
    sts_standin: bool = False
    reload: bool = False
    debugging: bool = False  # workers listen for a debugger: time limits are suspended
    contract: ContractMode = ContractMode.WARN
    virtual_clock: bool = False  # Cloud Control requests skip CallbackDelaySeconds waits
    moto: bool = False  # an embedded moto server takes the handlers' AWS calls while this serves


class RunningServer:
    """A started endpoint: its address, the rest of its start-up (``loaded``), and how to stop it."""

    def __init__(
        self,
        runner: web.AppRunner,
        service: LambdaService,
        registry: FunctionRegistry,
        url: str,
        loaded: "asyncio.Task[ResourceRequestStore]",
    ) -> None:
        self.runner = runner
        self.service = service
        self.registry = registry
        self.url = url
        # What serve loads once it listens (``load_late_parts``); raises what stops serve (an unusable schema).
        self.loaded = loaded
        self.reloader: Optional[Reloader] = None  # with reload on, once the file watch is in place
        self.reloading: Optional["asyncio.Task[None]"] = None

    @property
    def requests(self) -> Optional[ResourceRequestStore]:
        """The Cloud Control API's request store, once loaded."""
        loaded = self.loaded
        return loaded.result() if loaded.done() and not loaded.cancelled() and loaded.exception() is None else None

    async def stop(self, grace_s: float) -> None:
        """Stop accepting calls, give those in flight ``grace_s``, answer the rest, stop every worker."""
        self.service.refuse_new_calls()  # before the first await: no call may slip in while the rest stops
        if self.reloading is not None:
            self.reloading.cancel()
        if self.reloader is not None:
            self.reloader.feed.stop()  # the watch's thread ends too, even if the reloading task never ran
        loop = asyncio.get_running_loop()
        grace_ends = loop.time() + grace_s  # one grace for all that follows
        for site in self.runner.sites:
            await site.stop()
        # What loads after listening (imports, opening history) gets the grace too, so the calls
        # answered before it are reviewed and recorded like the rest, and those waiting on it answered.
        if not self.loaded.done():
            await asyncio.wait([self.loaded], timeout=max(0.0, grace_ends - loop.time()))
        if not self.loaded.done():
            self.loaded.cancel()
            await asyncio.gather(self.loaded, return_exceptions=True)
        self.service.cannot_complete(asyncio.CancelledError())  # settles what waits on them, if they never came
        # Lambda calls and Cloud Control requests share the rest of the grace: their handler calls finish together.
        requests, left = self.requests, max(0.0, grace_ends - loop.time())
        await asyncio.gather(self.service.finish_calls(grace_s, left), *([requests.close(left)] if requests is not None else []))
        await self.registry.close()  # calls still running end now, answered with a shutdown error
        await self.service.calls_ended(ANSWER_AFTER_STOP_S)
        await self.runner.cleanup()
        self.service.close()


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


def _import(names: "tuple[str, ...]") -> None:
    for name in names:
        importlib.import_module(name)


async def start_server(
    project: Project, settings: ServeSettings, console: Console, early: Optional[EarlyStart] = None
) -> RunningServer:
    """Listen as soon as the Lambda Invoke API can answer; the rest loads after (``RunningServer.loaded``).

    ``early``: what the early start began (the first function's worker, maybe), when serve runs as the command."""
    if settings.host not in LOOPBACK_HOSTS:
        console.warn(
            f"binding to {settings.host}: anyone who can reach this machine can run your handlers "
            "with the credentials passed to them. Use the default 127.0.0.1 unless you mean it."
        )
    if settings.contract is not ContractMode.OFF:
        for pointer, pattern in unusable_patterns(project.schema.document):
            console.warn(skipped_pattern_note(pointer, pattern))
    loading_since = early.began_at if early is not None else time.time()  # the project's files were read from then on
    registry = FunctionRegistry(project, settings.runtime, on_note=console.warn)
    # Workers import in the background while the server starts listening: a call waits only
    # for its own function's worker, and the console says when each function is warm.
    warming = registry.warm_each(adopt=early.take if early is not None else None)
    announce_warm(project, warming, console)
    reloader: Optional["Reloader"] = None
    if settings.reload:
        from cfnrun.app.reloader import Reloader
        from cfnrun.app.watcher import WatchFailed

        reloader = Reloader(registry, console)
    # The file watch sets itself up while the server loads; it is in place before serve says it listens.
    # Saves made since the workers began to load are caught up on, as a first change.
    watching = asyncio.ensure_future(reloader.start(loading_since)) if reloader is not None else None
    try:
        server = await _listen(project, settings, console, registry, warming)
    except BaseException:
        if reloader is not None and watching is not None:
            watching.cancel()
            if watching.done() and not watching.cancelled():
                watching.exception()  # a watch that failed first: what stops serve is the error above
            reloader.feed.stop()
        await registry.close()  # interrupted, a broken install, a taken port: no worker outlives this
        raise
    if reloader is None or watching is None:
        return server
    try:
        await watching  # a watch that fails to start has stopped itself
    except WatchFailed as error:
        console.warn(f"reload: {error}; serving without reload")
    except BaseException:
        await server.stop(0.0)
        raise
    else:
        server.reloader = reloader
        server.reloading = asyncio.ensure_future(reloader.run())
    return server


async def _listen(
    project: Project,
    settings: ServeSettings,
    console: Console,
    registry: FunctionRegistry,
    warming: Dict[str, "asyncio.Task[Optional[WorkerInitError]]"],
) -> RunningServer:
    await asyncio.to_thread(_import, LISTEN_MODULES)
    from aiohttp import web

    from cfnrun.api.connections import GuardedTCPSite
    from cfnrun.api.lambda_api import LambdaService
    from cfnrun.api.sts_standin import StsStandIn

    sts = StsStandIn(settings.runtime.account_id) if settings.sts_standin else None
    budgets = settings.budgets
    if settings.debugging:
        budgets = replace(budgets, invocation_timeout_s=DEBUG_TIMEOUT_S)
        console.warn("workers listen for a debugger: time limits are suspended while you step through calls")
        for index, name in enumerate(project.functions):
            console.info(f"  {name:<20} debugpy on 127.0.0.1:{(settings.runtime.debug_port or 0) + index}")
        await asyncio.gather(*warming.values(), return_exceptions=True)  # the debugger ports the banner names are open before it listens
    service = LambdaService(registry, budgets, console, sts, settings.contract, settings.connections, cloud_control=not project.is_hook)
    runner = web.AppRunner(
        service.app(),
        access_log=None,
        handle_signals=False,
        shutdown_timeout=ANSWER_AFTER_STOP_S,
        keepalive_timeout=settings.connections.idle_timeout_s,
    )
    await runner.setup()
    site = GuardedTCPSite(runner, settings.host, settings.port, service.connections)
    try:
        await site.start()
    except BaseException as error:
        await runner.cleanup()
        if isinstance(error, OSError):
            raise CfnrunError(f"cannot listen on {settings.host}:{settings.port}: {error.strerror or error}") from None
        raise
    port = runner.addresses[0][1] if runner.addresses else settings.port  # the bound one, for --port 0
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    loaded = asyncio.ensure_future(load_late_parts(service, registry, project, settings, budgets, console))
    return RunningServer(runner, service, registry, f"http://{host}:{port}", loaded)


async def load_late_parts(
    service: LambdaService, registry: FunctionRegistry, project: Project, settings: ServeSettings, budgets: Budgets, console: Console
) -> ResourceRequestStore:
    """What serve needs once it listens: the review of each call, Cloud Control's request store, then the spares.

    The schema is checked here too (the check loads jsonschema, which the review needs anyway):
    a schema cfnrun cannot validate against raises, and serve stops with that error.
    """
    try:
        await asyncio.to_thread(_import_late_and_check, project)
        from cfnrun.api.call_review import CallReview
        from cfnrun.api.cloudcontrol import CloudControlApi
        from cfnrun.api.lambda_api import LateParts
        from cfnrun.app.resource_requests import ResourceRequestStore
        from cfnrun.history.recorder import CallRecorder
        from cfnrun.history.store import HistoryStore

        requests = ResourceRequestStore(registry, budgets, console, settings.contract, settings.virtual_clock)
        history = HistoryStore.for_recording(project.root)
        recorder = CallRecorder(history, lambda: registry.project.schema, project.type_name) if history else None
        review = CallReview(registry, budgets, console, settings.contract, recorder)
        service.complete(LateParts(review, None if project.is_hook else CloudControlApi(requests)))
    except BaseException as error:
        service.cannot_complete(error)
        raise
    registry.keep_spares_when_warm()  # the spares import the provider's dependencies too: after all the rest
    return requests


def _import_late_and_check(project: Project) -> None:
    _import(LATE_MODULES)
    project.schema.require_usable()


def announce_warm(project: Project, warming: Dict[str, "asyncio.Task[Optional[WorkerInitError]]"], console: Console) -> None:
    """Say when each function's first worker is warm, or why it does not load."""
    started = time.perf_counter()
    handlers = {name: function.handler for name, function in project.functions.items()}

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


async def serve_forever(
    project: Project,
    settings: ServeSettings,
    console: Console,
    on_started: Optional[Callable[[RunningServer], Awaitable[None]]] = None,
    early: Optional[EarlyStart] = None,
) -> None:
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
        console.info(f"cfnrun serve: {project.type_name} from {project.root}")
        with aws_calls_routed(settings, console) as routed:
            await _serve(project, routed, console, on_started, stop, started, early)
    except asyncio.CancelledError:
        if forced.is_set():  # what start_server had begun is undone by now: no worker is left
            raise KeyboardInterrupt from None
        raise
    finally:
        for number, handler in previous.items():
            loop.remove_signal_handler(number)
            signal.signal(number, handler)


async def _serve(
    project: Project,
    settings: ServeSettings,
    console: Console,
    on_started: Optional[Callable[[RunningServer], Awaitable[None]]],
    stop: asyncio.Event,
    started: asyncio.Event,
    early: Optional[EarlyStart],
) -> None:
    server = await start_server(project, settings, console, early)
    started.set()
    _announce(project, settings, server, console)
    try:
        if on_started is not None:
            await on_started(server)
        else:
            await _until_stopped(server, stop)
    finally:
        console.info(
            f"stopping: finishing in-flight calls (up to {settings.shutdown_timeout_s:g} s; any still running "
            "then are answered with Runtime.ExitError), then stopping workers"
        )
        await server.stop(settings.shutdown_timeout_s)
        console.info("stopped")


def _announce(project: Project, settings: ServeSettings, server: RunningServer, console: Console) -> None:
    console.info(f"Lambda Invoke API listening on {server.url} (Ctrl-C to stop)")
    if not project.is_hook:
        console.info(f"Cloud Control API for {project.type_name} at {server.url}/")
    if server.reloader is not None:
        console.info(f"reload: watching {project.root} for changes (--no-reload to turn off)")
    if settings.sts_standin:
        console.info(f"STS stand-in (GetCallerIdentity, GetSessionToken) at {server.url}/")


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
