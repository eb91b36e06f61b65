"""The AWS Lambda Invoke API over a project's functions, as aiohttp handlers.

Clients that speak to Lambda — boto3, the aws CLI, ``cfn invoke``, ``cfn test`` — use it
unchanged: ``POST /2015-03-31/functions/{FunctionName}/invocations``.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import traceback
import uuid
from typing import Any, Awaitable, Callable, Dict, Optional, Set, Tuple

from aiohttp import web

from cfnrun.contract.checker import ContractMode, check_call
from cfnrun.contract.shape import ShapeValidator
from cfnrun.model.budgets import Budget, Budgets
from cfnrun.model.protocol import Action
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.registry import FunctionRegistry
from cfnrun.api import service_errors
from cfnrun.ui.console import Console
from cfnrun.api.function_responses import function_payload, tail_log
from cfnrun.api.sts_standin import StsStandIn
from cfnrun.api.cloudcontrol import CloudControlApi
from cfnrun.model.template import FunctionSpec

MAX_PAYLOAD_BYTES = 6 * 1024 * 1024
LAMBDA_MAX_TIMEOUT_S = 900.0
INVOKE_PATH = "/2015-03-31/functions/{name}/invocations"
INVOCATION_TYPES = ("RequestResponse", "Event", "DryRun")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def payload_action(payload: Any) -> Optional[Action]:
    """The action of a HandlerRequest or sam-tests event, when the payload is one."""
    if isinstance(payload, dict) and isinstance(payload.get("action"), str):
        return Action.__members__.get(payload["action"])
    return None


class LambdaService:
    def __init__(
        self,
        registry: FunctionRegistry,
        budgets: Budgets,
        console: Console,
        sts: Optional[StsStandIn] = None,
        contract: ContractMode = ContractMode.WARN,
        cloud_control: Optional[CloudControlApi] = None,
    ) -> None:
        self.registry = registry
        self.budgets = budgets
        self.console = console
        self.sts = sts
        self.contract = contract
        self.cloud_control = cloud_control
        self._shape: Optional[ShapeValidator] = None
        self._limits: Dict[Tuple[str, Optional[float], Optional[Action]], Budget] = {}
        self._background: Set["asyncio.Task[InvocationOutcome]"] = set()

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_PAYLOAD_BYTES, middlewares=[self._service_errors])
        app.router.add_route("*", INVOKE_PATH, self.invoke)
        if self.sts is not None or self.cloud_control is not None:
            app.router.add_post("/", self.root)
        app.router.add_route("*", "/{path:.*}", self.unknown)
        return app

    async def drain(self, timeout_s: float) -> None:
        """Wait (bounded) for Event invocations still running in the background."""
        if self._background:
            await asyncio.wait(set(self._background), timeout=timeout_s)

    # -- routes --------------------------------------------------------------

    async def unknown(self, request: web.Request) -> web.StreamResponse:
        raise service_errors.unknown_operation(request.method, request.path)

    async def root(self, request: web.Request) -> web.StreamResponse:
        """POST /: Cloud Control (JSON 1.0, by X-Amz-Target) or the STS stand-in (a form)."""
        if self.cloud_control is not None and self.cloud_control.accepts(request):
            return await self.cloud_control.handle(request)
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
        if invocation_type == "DryRun":
            return web.Response(status=204, headers={"x-amzn-RequestId": str(uuid.uuid4())})
        request_id = str(uuid.uuid4())
        call = self._call(function, payload, payload_json, request_id)
        if invocation_type == "Event":
            task = asyncio.ensure_future(call)
            self._background.add(task)
            task.add_done_callback(self._background.discard)
            return web.Response(status=202, headers={"x-amzn-RequestId": request_id})
        outcome = await call
        body, headers = function_payload(outcome)
        headers.update({"X-Amz-Executed-Version": "$LATEST", "x-amzn-RequestId": request_id})
        if request.headers.get("X-Amz-Log-Type") == "Tail":
            headers["X-Amz-Log-Result"] = tail_log(outcome, function.memory_mb)
        return web.Response(body=body, headers=headers, content_type="application/json")

    # -- pieces ----------------------------------------------------------------

    async def _read_payload(self, request: web.Request) -> Tuple[Any, Optional[bytes]]:
        """The payload, and the body itself when the worker can take it as it is (ASCII JSON)."""
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise service_errors.too_large(MAX_PAYLOAD_BYTES) from None
        if not body or body.isspace():
            return {}, None
        try:
            payload = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise service_errors.invalid_json(str(error)) from None
        return payload, body if body.isascii() else None

    def _limit(self, function: FunctionSpec, action: Optional[Action]) -> Budget:
        """Cut a call at its function Timeout, and for a known action at the contract budget."""
        key = (function.logical_id, function.timeout_s, action)
        if key not in self._limits:
            self._limits[key] = self._compute_limit(function, action)
        return self._limits[key]

    def _shape_validator(self) -> ShapeValidator:
        schema = self.registry.project.schema  # a reload may have brought a new one
        if self._shape is None or self._shape.schema is not schema:
            self._shape = ShapeValidator(schema)
        return self._shape

    def _compute_limit(self, function: FunctionSpec, action: Optional[Action]) -> Budget:
        timeout = function.timeout_s if function.timeout_s is not None else LAMBDA_MAX_TIMEOUT_S
        if action is not None:
            return self.budgets.invocation(action, timeout)
        if self.budgets.invocation_timeout_s is not None:
            return Budget(self.budgets.invocation_timeout_s, "--invocation-timeout")
        return Budget(timeout * self.budgets.time_scale, "the function's Timeout in template.yml")

    async def _call(
        self, function: FunctionSpec, payload: Any, payload_json: Optional[bytes], request_id: str
    ) -> InvocationOutcome:
        action = payload_action(payload)
        limit = self._limit(function, action)
        outcome = await self.registry.pool(function).invoke(payload, limit.seconds, request_id, payload_json)
        notes = []
        if outcome.kind is OutcomeKind.TIMED_OUT:
            breach = "contract breach: " if action is not None and "contract" in limit.source else ""
            notes.append(f"{breach}no answer within {limit.describe()}; the worker was killed and replaced")
        violations = []
        if self.contract is not ContractMode.OFF and outcome.kind is OutcomeKind.RETURNED:
            violations = check_call(self._shape_validator(), payload, outcome.result)
            notes += [f"contract {'✗' if v.is_error else '!'} {v.line()}" for v in violations]
        # Printed once the response is on its way, like Lambda's logs: the caller never waits on a terminal.
        asyncio.get_running_loop().call_soon(self.console.call, function.logical_id, action.value if action else None, outcome, notes)
        errors = [v for v in violations if v.is_error]
        if self.contract is ContractMode.STRICT and errors:
            failed = {
                "status": "FAILED",
                "errorCode": "InternalFailure",
                "message": f"cfnrun --contract strict: the handler broke the contract: {errors[0].line()}",
            }
            return dataclasses.replace(outcome, result=failed)
        return outcome

    @web.middleware
    async def _service_errors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except service_errors.ServiceError as error:
            return error.response(str(uuid.uuid4()))
        except web.HTTPException:
            raise
        except Exception as error:  # noqa: B902 - never a bare 500 with a traceback
            self.console.error(f"cfnrun failed serving {request.method} {request.path}:\n{traceback.format_exc()}")
            failure = service_errors.ServiceError(500, "ServiceException", f"cfnrun internal error: {type(error).__name__}: {error}")
            return failure.response(str(uuid.uuid4()))
