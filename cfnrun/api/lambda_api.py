"""The AWS Lambda Invoke API over the served functions, as aiohttp handlers: the wire only.

Clients that speak to Lambda — boto3, the aws CLI, ``cfn invoke``, ``cfn test`` — use it
unchanged: ``POST /2015-03-31/functions/{FunctionName}/invocations``. This module reads
the request (function name, invocation type, payload), hands a typed ``LambdaCall`` to a
``LambdaCalls`` implementation (``app/lambda_calls.py``: what a call runs with and what
is done with its answer) and writes the ``LambdaAnswer`` back as Lambda would. On the same
port, ``POST /`` goes to the Cloud Control API, the CloudFormation API or the STS stand-in, and
``PUT /cfnrun/custom-resource-responses/{token}`` takes custom resources' answers, also wire only;
CreateFunction and the other function management operations are ``lambda_functions.py``'s.
"""
from __future__ import annotations

import asyncio
import functools
import json
import re
import sys
import traceback
from typing import Any, Awaitable, Callable, NamedTuple, Optional, Protocol, Tuple

from aiohttp import hdrs, web

from cfnrun.api import service_errors
from cfnrun.api.cloudcontrol import CloudControlApi
from cfnrun.api.cloudformation.custom_resource_responses import CustomResourceResponseEndpoint
from cfnrun.api.cloudformation.wait_condition_signals import WaitConditionSignalEndpoint
from cfnrun.api.cloudformation.hook_payloads import HookPayloadEndpoint
from cfnrun.api.cloudformation.errors import StackApiError
from cfnrun.api.cloudformation.service import CloudFormationApi
from cfnrun.api.forwarding import Forwarder, signed_service
from cfnrun.api.connections import ConnectionGuard, ConnectionLimits
from cfnrun.api.function_responses import function_payload, shutdown_payload, tail_log
from cfnrun.api.lambda_functions import FunctionManagement, FunctionRoutes, function_in_path, refuse_qualifier
from cfnrun.api.sts_standin import StsStandIn
from cfnrun.runtime.outcome import InvocationOutcome
from cfnrun.model.errors import unreadable
from cfnrun.model.json_text import read_json
from cfnrun.model.random_ids import random_uuid
from cfnrun.runtime.registry import ServedFunction

MAX_PAYLOAD_BYTES = 6 * 1024 * 1024
INVOKE_PATH = "/2015-03-31/functions/{name}/invocations"
# INVOKE_PATH as aiohttp's router matches it (a variable part is anything but "{", "}" and "/"), for ``LambdaService.requests``.
_INVOKE_MATCH = re.compile(r"/2015-03-31/functions/(?P<name>[^{}/]+)/invocations")
INVOCATION_TYPES = ("RequestResponse", "Event", "DryRun")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
ServerHandler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]  # what aiohttp's server calls with each request


class _Deadline:
    """``_within``'s timer: once it fires, the task waiting is cancelled and the wait says it timed out."""

    __slots__ = ("task", "expired")

    def __init__(self, task: "asyncio.Task[Any]") -> None:
        self.task = task
        self.expired = False

    def expire(self) -> None:
        self.expired = True
        self.task.cancel()


async def _within(awaitable: Awaitable[bytes], seconds: float, task: "asyncio.Task[Any]") -> bytes:
    """``awaitable``'s result, or asyncio.TimeoutError after ``seconds``: a timer on ``task``, the one awaiting, as
    ``asyncio.timeout`` (Python 3.11) sets one, where ``asyncio.wait_for`` (before Python 3.12) runs it as a task of
    its own, one more turn of the loop for each body that comes after its headers (boto3 sends them apart).

    Given the task and its loop rather than looking them up as ``asyncio.timeout`` does three times (on Python 3.11
    each lookup of the running loop is a getpid() system call), with no async context manager's two coroutines. A
    cancellation of the task from elsewhere (serve stopping) is told apart as ``asyncio.timeout`` tells it."""
    loop = task.get_loop()
    deadline = _Deadline(task)
    cancelling = task.cancelling() if _COUNTS_CANCELS else 0  # type: ignore[attr-defined]  # Python 3.11's, as below
    timer = loop.call_at(loop.time() + seconds, deadline.expire)
    try:
        return await awaitable
    except asyncio.CancelledError:
        if deadline.expired and (not _COUNTS_CANCELS or _uncancel(task, deadline) <= cancelling):
            raise asyncio.TimeoutError from None
        raise
    finally:
        timer.cancel()
        if deadline.expired and _COUNTS_CANCELS:
            _uncancel(task, deadline)


_COUNTS_CANCELS = sys.version_info >= (3, 11)  # Task.cancelling() and uncancel(): the cancel requests a task has had


def _uncancel(task: "asyncio.Task[Any]", deadline: _Deadline) -> int:
    """The deadline's cancel request taken back, once; the requests left."""
    if deadline.expired:
        deadline.expired = False
        return task.uncancel()  # type: ignore[attr-defined, no-any-return]
    return task.cancelling()  # type: ignore[attr-defined, no-any-return]


class LambdaCall(NamedTuple):
    """One Invoke call as it came over the wire."""

    function: ServedFunction
    payload: Any
    payload_json: Optional[bytes]  # the body itself when the worker can take it as it is (ASCII JSON)
    request_id: str


class LambdaAnswer(NamedTuple):
    """What to answer a RequestResponse call with."""

    outcome: Optional[InvocationOutcome]  # None: the call was cut by serve's stop before its worker answered
    shutdown_grace_s: Optional[float] = None  # set: serve stopped the call after this grace (answered Runtime.ExitError)


class LambdaCalls(Protocol):
    """What runs the calls the Invoke API takes. May raise ``service_errors.ServiceError`` to answer with one."""

    def function(self, name: str) -> ServedFunction:
        """The function a call names; a ``ResourceNotFoundException`` ServiceError when it names none, or several."""

    async def invoke(self, call: LambdaCall) -> LambdaAnswer: ...

    def invoke_event(self, call: LambdaCall) -> None:
        """An Event call: answered 202 at once, run in the background."""


class PageRoutes(Protocol):
    """More GET routes on serve's port (the console): added before the catch-all, after the APIs' own."""

    def add_route(self, app: web.Application) -> None: ...


class LambdaService:
    """The endpoint on serve's port: the Invoke API; on ``POST /`` Cloud Control, CloudFormation or the STS
    stand-in; the ResponseURL of custom resources."""

    def __init__(
        self,
        calls: LambdaCalls,
        on_failure: Callable[[str], None],
        limits: ConnectionLimits = ConnectionLimits(),
        sts: Optional[StsStandIn] = None,
        cloud_control: Optional[CloudControlApi] = None,
        cloudformation: Optional[CloudFormationApi] = None,
        custom_resource_responses: Optional[CustomResourceResponseEndpoint] = None,
        hook_payloads: Optional[HookPayloadEndpoint] = None,
        wait_condition_signals: Optional[WaitConditionSignalEndpoint] = None,
        pages: Optional[PageRoutes] = None,
        functions: Optional[FunctionManagement] = None,
        forwarder: Optional[Forwarder] = None,
    ) -> None:
        self.calls = calls
        self.limits = limits
        self.on_failure = on_failure  # says how cfnrun itself failed a request (it is answered with a 500)
        self.sts = sts
        self.cloud_control = cloud_control
        self.cloudformation = cloudformation
        self.custom_resource_responses = custom_resource_responses
        self.hook_payloads = hook_payloads
        self.wait_condition_signals = wait_condition_signals  # the URLs of wait condition handles
        self.pages = pages
        self.functions = FunctionRoutes(functions) if functions is not None else None  # CreateFunction and the rest
        self.forwarder = forwarder  # the calls of other services (S3, SQS…): to the AWS endpoint (``forwarding.py``)
        self.connections = ConnectionGuard(limits)
        self._stopping = False

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_PAYLOAD_BYTES, middlewares=[self._service_errors])
        app.router.add_route("*", INVOKE_PATH, self.invoke)
        if self.functions is not None:
            self.functions.add_routes(app)
        if self.sts is not None or self.cloud_control is not None or self.cloudformation is not None:
            app.router.add_post("/", self.root)
        if self.custom_resource_responses is not None:
            self.custom_resource_responses.add_route(app)
        if self.hook_payloads is not None:
            self.hook_payloads.add_route(app)
        if self.wait_condition_signals is not None:
            self.wait_condition_signals.add_route(app)
        if self.pages is not None:
            self.pages.add_route(app)
        app.router.add_route("*", "/{path:.*}", self.unknown)
        return app

    def requests(self, routed: ServerHandler) -> ServerHandler:
        """The handler of every request on serve's port: an Invoke call (POST on INVOKE_PATH) goes straight to the
        Invoke API, through the same service errors middleware; every other request to ``routed``, the application's
        own handler (``app()``'s router and middleware).

        Every warm call is an Invoke, and the router's search, its match object and aiohttp's own middleware cost
        about a tenth of what the bare HTTP layer costs per call (docs/performance.md). The name is read from the
        path as the router reads it (``_invoked_name``); the answer is the handler's, byte for byte. A request that
        asks ``Expect: 100-continue`` takes the routed way, whose answer to that is aiohttp's.
        """

        forwarder = self.forwarder

        def requests(request: web.BaseRequest) -> Awaitable[web.StreamResponse]:  # not a coroutine of its own: one frame less each time a call resumes
            if request.method == "POST" and hdrs.EXPECT not in request.headers:
                name = _invoked_name(request.rel_url.path_safe)
                if name is not None:
                    assert isinstance(request, web.Request), "made by the application's request factory"
                    return self._service_errors(request, functools.partial(self._invoke, name=name))
            if forwarder is not None and (forwarder.wants(request) or self._elsewhere(request)):  # before the router: S3's GET / is not the console's
                assert isinstance(request, web.Request), "made by the application's request factory"
                return self._service_errors(request, self._forward)
            return routed(request)

        return requests

    def refuse_new_calls(self) -> None:
        """From now on a new call (on a kept-alive connection) is answered "serve is stopping"."""
        self._stopping = True

    # -- routes --------------------------------------------------------------

    async def unknown(self, request: web.Request) -> web.StreamResponse:
        raise service_errors.unknown_operation(request.method, request.path)

    def _elsewhere(self, request: web.BaseRequest) -> bool:
        """A Lambda call about a function serve neither serves nor made, with an AWS endpoint to pass it to: a local stack's
        AWS::Lambda::Function lives there (``cdk deploy --hotswap`` changes its code so). Invoke is never passed on: a
        function serve does not know is answered with the names of those it serves."""
        routes = self.functions
        if routes is None or self.forwarder is None or self.forwarder.endpoint_url is None or signed_service(request) != "lambda":
            return False
        name = function_in_path(request.rel_url.path)
        if name is None or routes.knows(name):
            return False
        try:
            self.calls.function(name)
        except service_errors.ServiceError:
            return True  # neither served nor made here
        return False

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        """Another service's call, passed on to the AWS endpoint (``forwarding.py``); refused as the others are while serve stops."""
        if self._stopping or self.forwarder is None:
            raise service_errors.stopping()
        return await self.forwarder.forward(request)

    async def root(self, request: web.Request) -> web.StreamResponse:
        """POST /: Cloud Control (JSON 1.0, by X-Amz-Target), CloudFormation or the STS stand-in (forms)."""
        if self._stopping:  # a new request on a kept-alive connection while serve stops
            raise service_errors.stopping()
        if self.cloud_control is not None and CloudControlApi.accepts(request):
            return await self.cloud_control.handle(request)
        if self.cloudformation is not None and await CloudFormationApi.accepts(request):
            return await self.cloudformation.handle(request)
        if self.sts is not None:
            return await self.sts.handle(request)
        if self.cloudformation is not None:  # a form that is no one's: CloudFormation's error says what is wrong
            return await self.cloudformation.handle(request)
        raise service_errors.unknown_operation(request.method, request.path)

    async def invoke(self, request: web.Request) -> web.StreamResponse:
        return await self._invoke(request, request.match_info["name"])

    async def _invoke(self, request: web.Request, name: str) -> web.StreamResponse:
        if request.method != "POST":
            raise service_errors.method_not_allowed(request.method, request.path)
        function = self.calls.function(name)
        if request.query_string:  # a Qualifier; the usual call has no query to parse
            refuse_qualifier(request)
        invocation_type = request.headers.get("X-Amz-Invocation-Type", "RequestResponse")
        if invocation_type not in INVOCATION_TYPES:
            raise service_errors.bad_invocation_type(invocation_type)
        content = request.content
        if content.is_eof():  # the usual case: the whole body is in, taken as it is (no read loop, no copy to a bytearray)
            body = content.read_nowait()
            if len(body) > MAX_PAYLOAD_BYTES:  # as the application's client_max_size has request.read() refuse it
                raise service_errors.too_large(MAX_PAYLOAD_BYTES)
        else:
            body = await self._read_body(request)
        payload, payload_json = _payload(body)
        if self._stopping:  # a new call on a kept-alive connection while serve stops
            raise service_errors.stopping()
        if invocation_type == "DryRun":
            return web.Response(status=204, headers={"x-amzn-RequestId": random_uuid()})
        call = LambdaCall(function, payload, payload_json, random_uuid())
        if invocation_type == "Event":
            self.calls.invoke_event(call)
            return web.Response(status=202, headers={"x-amzn-RequestId": call.request_id})
        answer = await self.calls.invoke(call)
        outcome = answer.outcome
        if answer.shutdown_grace_s is not None:
            body, headers = shutdown_payload(call.request_id, answer.shutdown_grace_s)
        else:
            assert outcome is not None
            body, headers = function_payload(outcome)
        headers["X-Amz-Executed-Version"] = "$LATEST"
        headers["x-amzn-RequestId"] = call.request_id
        if outcome is not None and request.headers.get("X-Amz-Log-Type") == "Tail":
            headers["X-Amz-Log-Result"] = tail_log(outcome, function.spec.memory_mb)
        return web.Response(body=body, headers=headers, content_type="application/json")

    # -- pieces ----------------------------------------------------------------

    async def _read_body(self, request: web.Request) -> bytes:
        """A body that is not all in yet, read within the body timeout."""
        try:
            return await _within(request.read(), self.limits.body_timeout_s, request.task)
        except web.HTTPRequestEntityTooLarge:
            raise service_errors.too_large(MAX_PAYLOAD_BYTES) from None
        except asyncio.TimeoutError:
            raise service_errors.body_timeout(self.limits.body_timeout_s) from None

    async def _error_response(self, request: web.Request, error: service_errors.ServiceError) -> web.Response:
        """``error`` as Lambda answers it, or for a CloudFormation request in the shape botocore's query parser reads."""
        request_id = random_uuid()
        if self.cloudformation is not None and request.method == "POST" and request.path == "/":
            try:
                cloudformation = await asyncio.wait_for(CloudFormationApi.accepts(request), self.limits.body_timeout_s)
            except (web.HTTPException, ConnectionError, asyncio.TimeoutError):  # a body too large, or that never came
                cloudformation = False
            if cloudformation:
                as_stack_error = StackApiError(error.error_type, error.message, error.status)
                return as_stack_error.response(request_id, error.close_connection)
        return error.response(request_id)

    @web.middleware
    async def _service_errors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        throttled = self.connections.request_started(request)
        try:
            try:  # in this coroutine rather than one of its own: every frame between the loop and a call is resumed with it
                if throttled:
                    raise service_errors.throttled(self.limits.queue_wait_s)
                response = await handler(request)
            except service_errors.ServiceError as error:
                response = await self._error_response(request, error)
            except web.HTTPException:
                raise
            except ConnectionResetError:  # the caller closed its connection before its body was all in: not cfnrun's failure
                response = await self._error_response(request, service_errors.body_cut_off())
            except Exception as error:  # noqa: B902 - never a bare 500 with a traceback
                self.on_failure(f"cfnrun failed serving {request.method} {request.path}:\n{traceback.format_exc()}")
                failure = service_errors.ServiceError(500, "ServiceException", f"cfnrun internal error: {type(error).__name__}")
                response = await self._error_response(request, failure)
        finally:
            self.connections.request_finished(request)
        return response


def _payload(body: bytes) -> Tuple[Any, Optional[bytes]]:
    """The payload, and the body itself when the worker can take it as it is (ASCII JSON).

    An ASCII body is read as text: json.loads would look for its encoding first (in Python, each call), and finds
    UTF-8 for any ASCII body whose first two bytes are no NUL (those it may read as UTF-16 or UTF-32: they take
    its way, and such a body is not handed to the worker as it is)."""
    if not body or body.isspace():
        return {}, None
    is_ascii = body.isascii() and body[1:2] != b"\x00" and body[0] != 0  # else no UTF-8: the worker is handed the payload
    try:
        payload = read_json(body.decode("ascii")) if is_ascii else json.loads(body)
    except ValueError as error:  # not UTF-8, not JSON, or a number too long to read
        raise service_errors.invalid_json(unreadable(error)) from None
    except RecursionError:
        raise service_errors.too_deep() from None
    return payload, body if is_ascii else None


def _invoked_name(path: str) -> Optional[str]:
    """The function an Invoke call's path names, decoded as aiohttp's router decodes a variable part; None: no Invoke path."""
    match = _INVOKE_MATCH.fullmatch(path)
    if match is None:
        return None
    name = match.group("name")
    return name.replace("%2F", "/").replace("%25", "%") if "%" in name else name
