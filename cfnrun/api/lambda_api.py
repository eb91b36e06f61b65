"""The AWS Lambda Invoke API over a project's functions, as aiohttp handlers.

Clients that speak to Lambda — boto3, the aws CLI, ``cfn invoke``, ``cfn test`` — use it
unchanged: ``POST /2015-03-31/functions/{FunctionName}/invocations``.

Light on purpose: serve listens with this loaded, and what it does not need to answer a
call (the contract checks, history, the Cloud Control API's request store) arrives a moment
later as ``LateParts``; a call that needs them sooner waits for them.
"""
from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import traceback
import uuid
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Dict, List, Optional, Set, Tuple

from aiohttp import web

from cfnrun.api import service_errors
from cfnrun.api.cloudcontrol import CloudControlApi
from cfnrun.api.connections import ConnectionGuard, ConnectionLimits
from cfnrun.api.function_responses import function_payload, shutdown_payload, tail_log
from cfnrun.api.paging import PagingWatch, loop_message
from cfnrun.api.sts_standin import StsStandIn
from cfnrun.contract.mode import ContractMode
from cfnrun.model.action import Action
from cfnrun.model.budgets import Budget, Budgets
from cfnrun.model.errors import CfnrunError
from cfnrun.model.seen_call import SeenCall
from cfnrun.model.template import FunctionSpec
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.registry import FunctionRegistry
from cfnrun.ui.console import Console

if TYPE_CHECKING:
    from cfnrun.api.call_review import CallReview

MAX_PAYLOAD_BYTES = 6 * 1024 * 1024
INVOKE_PATH = "/2015-03-31/functions/{name}/invocations"
INVOCATION_TYPES = ("RequestResponse", "Event", "DryRun")
PAGING_LOOP_LIMIT = 3  # --contract warn: answers handing back their own nextToken before serve stops the loop

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclasses.dataclass(frozen=True)
class LateParts:
    """What serve loads once it listens (``app/serve.py``)."""

    review: "CallReview"
    cloud_control: Optional[CloudControlApi]  # None for a hook project: a hook provisions nothing


class LambdaService:
    def __init__(
        self,
        registry: FunctionRegistry,
        budgets: Budgets,
        console: Console,
        sts: Optional[StsStandIn] = None,
        contract: ContractMode = ContractMode.WARN,
        limits: ConnectionLimits = ConnectionLimits(),
        cloud_control: bool = False,
    ) -> None:
        self.registry = registry
        self.budgets = budgets
        self.console = console
        self.sts = sts
        self.contract = contract
        self.limits = limits
        self.connections = ConnectionGuard(limits)
        self.paging = PagingWatch()
        self.serves_cloud_control = cloud_control
        self.late: "asyncio.Future[LateParts]" = asyncio.get_running_loop().create_future()  # see ``complete``
        self._reviews: Set["asyncio.Future[None]"] = set()  # calls waiting for ``late`` to be reviewed
        self._limits: Dict[Tuple[str, Optional[float], Optional[Action]], Budget] = {}
        self._calls: Set["asyncio.Future[Any]"] = set()  # calls running: one future each, Event calls their task
        self._grace_expired: Optional[float] = None  # the shutdown grace, once it has run out
        self._stopping = False

    def complete(self, parts: LateParts) -> None:
        """The parts loaded after listening are here: calls waiting for them go on."""
        self.late.set_result(parts)

    def cannot_complete(self, error: BaseException) -> None:
        """They will not come: calls waiting for them are answered with an error (serve stopping, or why it stops)."""
        if self.late.done():
            return
        if isinstance(error, asyncio.CancelledError):  # serve stopped first
            self.late.cancel()
            return
        self.late.set_exception(error)
        self.late.exception()  # retrieved: the calls that waited were told, serve reports it

    @property
    def violations_seen(self) -> "collections.Counter[str]":
        """Violation lines the contract checks found, for a summary."""
        parts = self._parts_if_loaded()
        return parts.review.violations_seen if parts is not None else collections.Counter()

    def close(self) -> None:
        """After the last call: close what reviews them (history)."""
        parts = self._parts_if_loaded()
        if parts is not None:
            parts.review.close()

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_PAYLOAD_BYTES, middlewares=[self._service_errors])
        app.router.add_route("*", INVOKE_PATH, self.invoke)
        if self.sts is not None or self.serves_cloud_control:
            app.router.add_post("/", self.root)
        app.router.add_route("*", "/{path:.*}", self.unknown)
        return app

    def refuse_new_calls(self) -> None:
        """From now on a new call (on a kept-alive connection) is answered "serve is stopping"."""
        self._stopping = True

    async def finish_calls(self, grace_s: float, left_s: float) -> int:
        """Let the calls in flight finish, for the ``left_s`` that remain of the ``grace_s`` shutdown grace;
        how many are still running.

        Those still running are then answered with a shutdown error as soon as their worker
        is stopped (``FunctionRegistry.close``), instead of having their connection dropped.
        Call ``refuse_new_calls`` first.
        """
        if self._calls:
            await asyncio.wait(set(self._calls), timeout=left_s)
        if self._calls:
            self._grace_expired = grace_s
        return len(self._calls)

    async def calls_ended(self, timeout_s: float) -> None:
        if self._calls:
            await asyncio.wait(set(self._calls), timeout=timeout_s)

    # -- routes --------------------------------------------------------------

    async def unknown(self, request: web.Request) -> web.StreamResponse:
        raise service_errors.unknown_operation(request.method, request.path)

    async def root(self, request: web.Request) -> web.StreamResponse:
        """POST /: Cloud Control (JSON 1.0, by X-Amz-Target) or the STS stand-in (a form)."""
        if self._stopping:  # a new request on a kept-alive connection while serve stops
            raise service_errors.stopping()
        if self.serves_cloud_control and CloudControlApi.accepts(request):
            cloud_control = (await self._late_parts()).cloud_control
            assert cloud_control is not None
            return await cloud_control.handle(request)
        if self.sts is not None:
            return await self.sts.handle(request)
        raise service_errors.unknown_operation(request.method, request.path)

    async def invoke(self, request: web.Request) -> web.StreamResponse:
        if request.method != "POST":
            raise service_errors.method_not_allowed(request.method, request.path)
        name = request.match_info["name"]
        function = self.registry.resolve(name)
        if function is None:
            raise service_errors.function_not_found(name, self.registry.project.function_names())
        invocation_type = request.headers.get("X-Amz-Invocation-Type", "RequestResponse")
        if invocation_type not in INVOCATION_TYPES:
            raise service_errors.bad_invocation_type(invocation_type)
        payload, payload_json = await self._read_payload(request)
        if self._stopping:  # a new call on a kept-alive connection while serve stops
            raise service_errors.stopping()
        if invocation_type == "DryRun":
            return web.Response(status=204, headers={"x-amzn-RequestId": str(uuid.uuid4())})
        request_id = str(uuid.uuid4())
        if invocation_type == "Event":
            self._track(asyncio.ensure_future(self._call(function, payload, payload_json, request_id)))
            return web.Response(status=202, headers={"x-amzn-RequestId": request_id})
        running: "asyncio.Future[None]" = asyncio.get_running_loop().create_future()
        self._calls.add(running)
        try:
            outcome: Optional[InvocationOutcome] = await self._call(function, payload, payload_json, request_id)
        except Exception:  # noqa: B902 - the pool refuses calls once serve has stopped it
            if self._grace_expired is None:
                raise
            outcome = None
        finally:
            self._calls.discard(running)
            running.set_result(None)
        if self._grace_expired is not None and (outcome is None or outcome.kind is not OutcomeKind.RETURNED):
            body, headers = shutdown_payload(request_id, self._grace_expired)
        else:
            assert outcome is not None
            body, headers = function_payload(outcome)
        headers.update({"X-Amz-Executed-Version": "$LATEST", "x-amzn-RequestId": request_id})
        if outcome is not None and request.headers.get("X-Amz-Log-Type") == "Tail":
            headers["X-Amz-Log-Result"] = tail_log(outcome, function.memory_mb)
        return web.Response(body=body, headers=headers, content_type="application/json")

    # -- pieces ----------------------------------------------------------------

    def _track(self, task: "asyncio.Future[Any]") -> None:
        self._calls.add(task)
        task.add_done_callback(self._calls.discard)

    async def _read_payload(self, request: web.Request) -> Tuple[Any, Optional[bytes]]:
        """The payload, and the body itself when the worker can take it as it is (ASCII JSON)."""
        try:
            if request.content.is_eof():  # the usual case: the body came with the headers
                body = await request.read()
            else:
                body = await asyncio.wait_for(request.read(), self.limits.body_timeout_s)
        except web.HTTPRequestEntityTooLarge:
            raise service_errors.too_large(MAX_PAYLOAD_BYTES) from None
        except asyncio.TimeoutError:
            raise service_errors.body_timeout(self.limits.body_timeout_s) from None
        if not body or body.isspace():
            return {}, None
        try:
            payload = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise service_errors.invalid_json(str(error)) from None
        except RecursionError:
            raise service_errors.too_deep() from None
        return payload, body if body.isascii() else None

    def _limit(self, function: FunctionSpec, action: Optional[Action]) -> Budget:
        """Cut a call at its function Timeout, and for a known action at the contract budget."""
        key = (function.logical_id, function.timeout_s, action)
        limit = self._limits.get(key)
        if limit is None:
            limit = self._limits[key] = self.budgets.call(action, function.timeout_s)
        return limit

    async def _call(
        self, function: FunctionSpec, payload: Any, payload_json: Optional[bytes], request_id: str
    ) -> InvocationOutcome:
        call = SeenCall.parse(payload)
        action = call.action
        limit = self._limit(function, action)
        outcome = await self.registry.pool(function).invoke(payload, limit.seconds, request_id, payload_json)
        notes: List[str] = []
        if outcome.kind is OutcomeKind.TIMED_OUT:
            breach = "contract breach: " if action is not None and limit.is_contract else ""
            notes.append(f"{breach}no answer within {limit.describe()}; the worker was killed and replaced")
        if self._grace_expired is not None and outcome.kind is not OutcomeKind.RETURNED:
            notes.append(f"serve is stopping: still running after the {self._grace_expired:g} s shutdown grace; answered with Runtime.ExitError")
        if action is Action.LIST and outcome.kind is OutcomeKind.RETURNED:
            outcome = self._stop_paging_loop(function, call, outcome, notes)
        if self.contract is ContractMode.STRICT and outcome.kind is OutcomeKind.RETURNED:
            review = (await self._late_parts()).review
            violations = review.check(call, outcome.result)
            asyncio.get_running_loop().call_soon(review.report, function, call, outcome, notes, limit, violations)
            errors = [v for v in violations if v.is_error]
            if errors:
                status_key = "hookStatus" if isinstance(outcome.result, dict) and "hookStatus" in outcome.result else "status"
                failed = {
                    status_key: "FAILED",
                    "errorCode": "InternalFailure",
                    "message": f"cfnrun --contract strict: the handler broke the contract: {errors[0].line()}",
                }
                return dataclasses.replace(outcome, result=failed)
            return outcome
        # Warn mode: nothing in the answer depends on the checks, so they run once it is on its way,
        # like Lambda's logs: the caller never waits on the checker or a terminal.
        parts = self._parts_if_loaded()
        if parts is not None:
            asyncio.get_running_loop().call_soon(parts.review.report, function, call, outcome, notes, limit)
        else:  # a call answered before they loaded: reviewed once they have, in the order answered
            reviewing = asyncio.ensure_future(self._review_when_loaded(function, call, outcome, notes, limit))
            self._reviews.add(reviewing)
            reviewing.add_done_callback(self._reviews.discard)
        return outcome

    def _parts_if_loaded(self) -> Optional[LateParts]:
        late = self.late
        return late.result() if late.done() and not late.cancelled() and late.exception() is None else None

    async def _late_parts(self) -> LateParts:
        try:
            return await asyncio.shield(self.late)
        except asyncio.CancelledError:
            if self.late.cancelled():  # serve stopped before they loaded: answered, not dropped
                raise service_errors.stopping("it stopped before its contract checks loaded") from None
            raise
        except CfnrunError as error:  # an unusable schema, found once serve listened: serve stops with it
            raise service_errors.ServiceError(500, "ServiceException", f"cfnrun cannot serve this project: {error}") from None

    async def _review_when_loaded(self, function: FunctionSpec, call: SeenCall, outcome: InvocationOutcome, notes: List[str], limit: Budget) -> None:
        try:
            parts = await asyncio.shield(self.late)
        except (Exception, asyncio.CancelledError):  # noqa: B902 - not coming: serve says why and stops
            return
        parts.review.report(function, call, outcome, notes, limit)

    def _stop_paging_loop(self, function: FunctionSpec, call: SeenCall, outcome: InvocationOutcome, notes: List[str]) -> InvocationOutcome:
        repeats = self.paging.repeats(function.logical_id, call.next_token, outcome.result)
        if not repeats:
            return outcome
        message = loop_message(call.next_token or "", repeats)
        strict = self.contract is ContractMode.STRICT
        if not strict and repeats < PAGING_LOOP_LIMIT:
            notes.append(f"LOOP? {message} (answered as is; cfnrun stops it at {PAGING_LOOP_LIMIT} in a row)")
            return outcome
        notes.append(f"LOOP stopped: answered FAILED. {message}")
        failed = {"status": "FAILED", "errorCode": "InternalFailure", "message": f"cfnrun stopped a paging loop: {message}"}
        return dataclasses.replace(outcome, result=failed)

    @web.middleware
    async def _service_errors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        self.connections.request_started(request)
        try:
            return await handler(request)
        except service_errors.ServiceError as error:
            return error.response(str(uuid.uuid4()))
        except web.HTTPException:
            raise
        except Exception as error:  # noqa: B902 - never a bare 500 with a traceback
            self.console.error(f"cfnrun failed serving {request.method} {request.path}:\n{traceback.format_exc()}")
            failure = service_errors.ServiceError(500, "ServiceException", f"cfnrun internal error: {type(error).__name__}")
            return failure.response(str(uuid.uuid4()))
        finally:
            self.connections.request_finished(request)
