"""The endpoint on serve's port: the HTTP layer (``cfnrun.api``) joined to what runs its calls, and how it stops.

``app/serve.py`` imports this module on a thread, while the first worker imports the provider
(on two cores the start-ups overlap), and listens with it as soon as it is imported: it holds
what answers a Lambda call (aiohttp, the Invoke API, the call policy) and nothing that can come
later (``app/late_parts.py``).
"""
from __future__ import annotations

import asyncio
import errno
from typing import TYPE_CHECKING, Callable, List, Optional

from cfnrun.app.aiohttp_import import import_aiohttp

import_aiohttp()  # first: aiohttp's client TLS contexts read the CA bundle only if a client ever connects over TLS
from aiohttp import web  # noqa: E402

from cfnrun.api.cloudcontrol import CloudControlApi
from cfnrun.api.cloudformation.custom_resource_responses import CustomResourceResponseEndpoint
from cfnrun.api.cloudformation.wait_condition_signals import WaitConditionSignalEndpoint
from cfnrun.api.cloudformation.hook_payloads import HookPayloadEndpoint
from cfnrun.api.cloudformation.service import CloudFormationApi
from cfnrun.api.connections import GuardedTCPSite
from cfnrun.api.forwarding import Forwarder
from cfnrun.api.lambda_api import LambdaService
from cfnrun.api.malformed_requests import install as say_malformed_requests
from cfnrun.api.sts_standin import StsStandIn
from cfnrun.app.console_sources import ServedToConsole
from cfnrun.app.lambda_calls import LambdaCallPolicy
from cfnrun.app.lambda_functions import CreatedFunctions
from cfnrun.app.late_parts import (
    CloudControlRequests,
    HookPayloadsWhenLoaded,
    LateLoading,
    LateParts,
    ResponsesWhenLoaded,
    SignalsWhenLoaded,
)
from cfnrun.app.registered_types import with_registry
from cfnrun.app.served import Served, Warming
from cfnrun.app.stop_steps import StopSteps
from cfnrun.console.routes import ConsoleRoutes
from cfnrun.model.errors import CfnrunError
from cfnrun.ui.console import Console

if TYPE_CHECKING:
    from cfnrun.app.call_review import CallReview
    from cfnrun.app.reloader import Reloader
    from cfnrun.app.serve_settings import ServeSettings

OWN_SERVICES = frozenset({"lambda", "cloudformation", "cloudcontrolapi"})  # what serve answers itself; any other service's calls are forwarded
ANSWER_AFTER_STOP_S = 2.0  # once workers are stopped, how long the calls they ran have to be answered
WORKERS_STOP_S = 5.0  # every worker and zygote told to leave, given two seconds, killed and swept for

# The port is taken (often by another cfnrun serve): what to do about it.
PORT_TAKEN_HINT = "; another process (an earlier cfnrun serve?) listens there: stop it, or pick another port with --port N (--port 0 picks a free one)"


class RunningServer:
    """A listening endpoint: its address, what it serves (``served``: the lookup of types and functions), what it
    loads after listening (``late``), and how to stop it."""

    def __init__(
        self, runner: web.AppRunner, service: LambdaService, calls: LambdaCallPolicy, late: LateLoading, served: Served, url: str,
        reloaders: Optional[List["Reloader"]] = None, created: Optional[CreatedFunctions] = None,
    ) -> None:
        self.runner = runner
        self.service = service
        self.calls = calls
        self.late = late
        self.served = served
        self.url = url
        self.reloaders: List[Reloader] = reloaders if reloaders is not None else []  # with reload on, one per served source once its file watch is in place (the console shows their last reloads)
        self.reloading: List["asyncio.Task[None]"] = []
        self.created = created  # the functions CreateFunction made
        self.stop_steps = StopSteps()
        self.forget_malformed_lines: Callable[[], None] = lambda: None  # malformed_requests.install's undoing

    @property
    def loaded(self) -> "asyncio.Task[LateParts]":
        """The late parts' loading; raises what stops serve (an unusable schema)."""
        assert self.late.task is not None, "begun once the server listens"
        return self.late.task

    @property
    def review(self) -> Optional["CallReview"]:
        """The review of every call (contract checks, FAILED answers) once the late parts are loaded: for a summary."""
        parts = self.late.parts
        return parts.review if parts is not None else None

    @property
    def loops_stopped(self) -> int:
        """LIST paging loops serve stopped (answered FAILED), for a summary."""
        return self.calls.paging.stopped

    async def stop(self, grace_s: float) -> None:
        """Stop accepting calls, give those in flight ``grace_s``, answer the rest, stop every worker.

        Each step is bounded (``app/stop_steps.py``); ``stopped_cleanly`` says afterwards whether every one finished.
        """
        self.service.refuse_new_calls()  # before the first await: no call may slip in while the rest stops
        self._stop_starting()  # and no stack starts a resource operation more
        for reloading in self.reloading:
            reloading.cancel()
        for reloader in self.reloaders:
            reloader.feed.stop()  # the watch's thread ends too, even if the reloading task never ran
        loop = asyncio.get_running_loop()
        grace_ends = loop.time() + grace_s  # one grace for all that follows
        steps = self.stop_steps
        for site in self.runner.sites:
            await steps.run("closing the port", site.stop(), 0.0)
        left = max(0.0, grace_ends - loop.time())
        await steps.run("the late parts' loading", self.late.finish(left), left)
        self._stop_starting()  # the stacks may have loaded meanwhile
        # Lambda calls, Cloud Control requests and stack operations share the rest of the grace: their handler calls finish together.
        parts = self.late.parts
        left = max(0.0, grace_ends - loop.time())
        closing = [
            parts.stacks.calls.stop_linting(), parts.stacks.store.close(left), parts.stacks.drift.close(left),
            parts.stacks.generator.close(left),
            *([parts.requests.close(left)] if parts.requests is not None else []),
        ] if parts else []
        await steps.run("the calls and stack operations in flight", asyncio.gather(self.calls.finish(grace_s, left), *closing), left)
        if parts is not None and parts.stacks.store.state is None:  # without --state, name what unfinished stacks leave
            from cfnrun.app.leftovers_named import AWS_LEFT, unfinished_stacks_left  # with the stacks: not before serve listens

            for line in unfinished_stacks_left(parts.stacks.store.stacks.values(), [r.project for r in self.served.providers], AWS_LEFT):
                parts.stacks.console.warn(line)
        await steps.run("stopping the workers", self.served.close(), WORKERS_STOP_S)  # calls still running end now, answered with a shutdown error
        if self.created is not None:
            self.created.close()
        await steps.run("answering the calls the workers ran", self.calls.ended(ANSWER_AFTER_STOP_S), ANSWER_AFTER_STOP_S)
        await steps.run("closing the connections", self.runner.cleanup(), ANSWER_AFTER_STOP_S)
        if self.service.forwarder is not None:
            await steps.run("closing the connections to the AWS endpoint", self.service.forwarder.close(), ANSWER_AFTER_STOP_S)
        self.late.close()
        self.forget_malformed_lines()

    @property
    def stopped_cleanly(self) -> bool:
        """Every step of the stop finished within its bound (``stop`` left none behind)."""
        return not self.stop_steps.left_behind

    def _stop_starting(self) -> None:
        if self.late.parts is not None:
            self.late.parts.stacks.stop_starting("cfnrun serve stopping")

async def listen(served: Served, settings: "ServeSettings", console: Console, warming: Warming) -> RunningServer:
    """Listen on the settings' address with the Invoke API (and Cloud Control, the STS stand-in), calls run by ``served``'s registries."""
    if settings.debugging:
        console.warn("workers listen for a debugger: time limits are suspended while you step through calls")
        for index, name in enumerate(warming):
            console.info(f"  {name:<20} debugpy on 127.0.0.1:{(settings.runtime.debug_port or 0) + index}")
        await asyncio.gather(*warming.values(), return_exceptions=True)  # the debugger ports the banner names are open before it listens
    late = LateLoading()
    calls = LambdaCallPolicy(served, settings.contract, late)
    shown = ServedToConsole(served, late)
    created = CreatedFunctions(served, settings.stack_state)
    for name in created.restore():
        console.info(f"function {name} (made by CreateFunction) read back from {settings.stack_state}")
    service = LambdaService(
        calls,
        console.error,
        settings.connections,
        sts=StsStandIn(settings.runtime.account_id) if settings.answers_sts else None,
        cloud_control=CloudControlApi(CloudControlRequests(late)) if served.type_names() else None,
        cloudformation=CloudFormationApi(with_registry(served, late, console.warn, settings.stack_state, console.info)),
        custom_resource_responses=CustomResourceResponseEndpoint(ResponsesWhenLoaded(late)),
        hook_payloads=HookPayloadEndpoint(HookPayloadsWhenLoaded(late)),
        wait_condition_signals=WaitConditionSignalEndpoint(SignalsWhenLoaded(late)),
        pages=ConsoleRoutes(shown),
        functions=created,
        forwarder=Forwarder(served.aws_endpoint, OWN_SERVICES | ({"sts"} if settings.answers_sts else set())),
    )
    runner = web.AppRunner(
        service.app(),
        access_log=None,
        handle_signals=False,
        shutdown_timeout=ANSWER_AFTER_STOP_S,
        keepalive_timeout=settings.connections.idle_timeout_s,
    )
    await runner.setup()
    assert runner.server is not None
    runner.server.request_handler = service.requests(runner.server.request_handler)  # Invoke calls skip the router
    site = GuardedTCPSite(runner, settings.host, settings.port, service.connections)
    try:
        await site.start()
    except BaseException as error:
        await runner.cleanup()
        if isinstance(error, OSError):
            hint = PORT_TAKEN_HINT if error.errno == errno.EADDRINUSE else ""
            raise CfnrunError(f"cannot listen on {settings.host}:{settings.port}: {error.strerror or error}{hint}") from None
        raise
    port = runner.addresses[0][1] if runner.addresses else settings.port  # the bound one, for --port 0
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    running = RunningServer(runner, service, calls, late, served, f"http://{host}:{port}", shown.reloaders, created)
    running.forget_malformed_lines = say_malformed_requests(console.warn)
    return running
