"""Run the Lambda endpoint until Ctrl-C or SIGTERM, then stop cleanly: no orphan workers."""
from __future__ import annotations

import asyncio
import signal
from dataclasses import dataclass, replace
from typing import Awaitable, Callable, Optional

from aiohttp import web

from cfnrun.contract.checker import ContractMode
from cfnrun.model.errors import CfnrunError
from cfnrun.model.budgets import Budgets
from cfnrun.model.project import Project
from cfnrun.app.reloader import Reloader
from cfnrun.runtime.registry import FunctionRegistry, RuntimeSettings
from cfnrun.ui.console import Console
from cfnrun.api.lambda_api import LambdaService
from cfnrun.api.sts_standin import StsStandIn
from cfnrun.api.cloudcontrol import CloudControlApi
from cfnrun.app.resource_requests import ResourceRequestStore

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
DEBUG_TIMEOUT_S = 24 * 3600.0


@dataclass(frozen=True)
class ServeSettings:
    host: str = "127.0.0.1"
    port: int = 3001
    runtime: RuntimeSettings = RuntimeSettings()
    budgets: Budgets = Budgets()
    shutdown_timeout_s: float = 10.0
    sts_standin: bool = False
    reload: bool = False
    debugging: bool = False  # workers listen for a debugger: time limits are suspended
    contract: ContractMode = ContractMode.WARN
    virtual_clock: bool = False  # Cloud Control requests skip CallbackDelaySeconds waits


class RunningServer:
    """A started endpoint: its address, and how to stop it."""

    def __init__(
        self, runner: web.AppRunner, service: LambdaService, registry: FunctionRegistry, url: str, requests: ResourceRequestStore
    ) -> None:
        self.runner = runner
        self.requests = requests
        self.service = service
        self.registry = registry
        self.url = url
        self.reloader: Optional["asyncio.Task[None]"] = None

    async def stop(self, timeout_s: float) -> None:
        if self.reloader is not None:
            self.reloader.cancel()
            self.reloader = None
        await self.runner.cleanup()  # stops accepting, lets in-flight calls finish (bounded)
        await self.service.drain(timeout_s)
        await self.requests.close(timeout_s)
        await self.registry.close()


async def start_server(project: Project, settings: ServeSettings, console: Console) -> RunningServer:
    if settings.host not in LOOPBACK_HOSTS:
        console.warn(
            f"binding to {settings.host}: anyone who can reach this machine can run your handlers "
            "with the credentials passed to them. Use the default 127.0.0.1 unless you mean it."
        )
    registry = FunctionRegistry(project, settings.runtime)
    for name, error in (await registry.warm_all()).items():
        if error is None:
            console.info(f"  {name:<20} {project.functions[name].handler}  warm")
        else:
            console.error(f"{name} does not load: {error.error.get('errorType')}: {error}")
    sts = StsStandIn(settings.runtime.account_id) if settings.sts_standin else None
    budgets = settings.budgets
    if settings.debugging:
        budgets = replace(budgets, invocation_timeout_s=DEBUG_TIMEOUT_S)
        console.warn("workers listen for a debugger: time limits are suspended while you step through calls")
        for index, name in enumerate(project.functions):
            console.info(f"  {name:<20} debugpy on 127.0.0.1:{(settings.runtime.debug_port or 0) + index}")
    requests = ResourceRequestStore(registry, budgets, console, settings.contract, settings.virtual_clock)
    service = LambdaService(registry, budgets, console, sts, settings.contract, CloudControlApi(requests))
    runner = web.AppRunner(service.app(), access_log=None, handle_signals=False, shutdown_timeout=settings.shutdown_timeout_s)
    await runner.setup()
    site = web.TCPSite(runner, settings.host, settings.port)
    try:
        await site.start()
    except OSError as error:
        await runner.cleanup()
        await registry.close()
        raise CfnrunError(f"cannot listen on {settings.host}:{settings.port}: {error.strerror or error}") from None
    sockets = getattr(site._server, "sockets", None) or []  # noqa: SLF001 - the bound port when --port 0
    port = sockets[0].getsockname()[1] if sockets else settings.port
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    server = RunningServer(runner, service, registry, f"http://{host}:{port}", requests)
    if settings.reload:
        reloader = Reloader(registry, console)
        await reloader.start()
        server.reloader = asyncio.ensure_future(reloader.run())
    return server


async def serve_forever(
    project: Project,
    settings: ServeSettings,
    console: Console,
    on_started: Optional[Callable[[RunningServer], Awaitable[None]]] = None,
) -> None:
    console.info(f"cfnrun serve: {project.type_name} from {project.root}")
    server = await start_server(project, settings, console)
    console.info(f"Lambda Invoke API listening on {server.url} (Ctrl-C to stop)")
    console.info(f"Cloud Control API for {project.type_name} at {server.url}/")
    if settings.reload:
        console.info(f"reload: watching {project.root} for changes (--no-reload to turn off)")
    if settings.sts_standin:
        console.info(f"STS stand-in (GetCallerIdentity, GetSessionToken) at {server.url}/")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        if on_started is not None:
            await on_started(server)
        else:
            await stop.wait()
    finally:
        console.info(f"stopping: finishing in-flight calls (up to {settings.shutdown_timeout_s:g} s), then stopping workers")
        await server.stop(settings.shutdown_timeout_s)
        console.info("stopped")
