"""The AWS Lambda Invoke API over a project's functions, as aiohttp handlers.

Clients that speak to Lambda — boto3, the aws CLI, ``cfn invoke``, ``cfn test`` — use it
unchanged: ``POST /2015-03-31/functions/{FunctionName}/invocations``.
"""
from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import traceback
import uuid
from typing import Any, Awaitable, Callable, Dict, List, Optional, Set, Tuple

from aiohttp import web

from cfnrun.api import service_errors
from cfnrun.api.connections import ConnectionGuard, ConnectionLimits
from cfnrun.api.function_responses import function_payload, shutdown_payload, tail_log
from cfnrun.api.paging import PagingWatch, loop_message
from cfnrun.api.sts_standin import StsStandIn
from cfnrun.contract.checker import ContractMode, check_call
from cfnrun.contract.shape import ShapeValidator
from cfnrun.contract.violations import Violation
from cfnrun.history.recorder import CallRecorder
from cfnrun.invoker.request_files import request_file_hint
from cfnrun.model.budgets import Budget, Budgets
from cfnrun.model.hook_targets import target_schemas
from cfnrun.model.project import Project
from cfnrun.model.protocol import Action
from cfnrun.model.seen_call import SeenCall
from cfnrun.model.template import FunctionSpec
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.registry import FunctionRegistry
from cfnrun.ui.console import Console
from cfnrun.api.cloudcontrol import CloudControlApi

MAX_PAYLOAD_BYTES = 6 * 1024 * 1024
INVOKE_PATH = "/2015-03-31/functions/{name}/invocations"
INVOCATION_TYPES = ("RequestResponse", "Event", "DryRun")
PAGING_LOOP_LIMIT = 3  # --contract warn: answers handing back their own nextToken before serve stops the loop

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class LambdaService:
    def __init__(
        self,
        registry: FunctionRegistry,
        budgets: Budgets,
        console: Console,
        sts: Optional[StsStandIn] = None,
        contract: ContractMode = ContractMode.WARN,
        limits: ConnectionLimits = ConnectionLimits(),
        cloud_control: Optional[CloudControlApi] = None,
    ) -> None:
        self.registry = registry
        self.budgets = budgets
        self.console = console
        self.sts = sts
        self.contract = contract
        self.limits = limits
        self.connections = ConnectionGuard(limits)
        self.paging = PagingWatch()
        self.violations_seen: "collections.Counter[str]" = collections.Counter()  # violation lines, for a summary
        self.cloud_control = cloud_control
        self._shape: Optional[ShapeValidator] = None
        self._targets: Optional[Tuple[Project, Dict[str, Dict[str, Any]]]] = None  # a hook project's target schemas
        self._limits: Dict[Tuple[str, Optional[float], Optional[Action]], Budget] = {}
        self._calls: Set["asyncio.Future[Any]"] = set()  # calls running: one future each, Event calls their task
        self._grace_expired: Optional[float] = None  # the shutdown grace, once it has run out
        self._stopping = False
        self.history: Optional[CallRecorder] = None  # serve sets it unless recording is off

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_PAYLOAD_BYTES, middlewares=[self._service_errors])
        app.router.add_route("*", INVOKE_PATH, self.invoke)
        if self.sts is not None or self.cloud_control is not None:
            app.router.add_post("/", self.root)
        app.router.add_route("*", "/{path:.*}", self.unknown)
        return app

    async def finish_calls(self, grace_s: float) -> int:
        """Let the calls in flight finish, for up to ``grace_s``; how many are still running.

        Those still running are then answered with a shutdown error as soon as their worker
        is stopped (``FunctionRegistry.close``), instead of having their connection dropped.
        """
        self._stopping = True
        if self._calls:
            await asyncio.wait(set(self._calls), timeout=grace_s)
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

    def _shape_validator(self) -> ShapeValidator:
        schema = self.registry.project.schema  # a reload may have brought a new one
        if self._shape is None or self._shape.schema is not schema:
            self._shape = ShapeValidator(schema)
        return self._shape

    def _target_schemas(self) -> Dict[str, Dict[str, Any]]:
        project = self.registry.project  # a reload may have brought new target schemas
        if not project.is_hook:
            return {}
        if self._targets is None or self._targets[0] is not project:
            self._targets = (project, target_schemas(project.root))
        return self._targets[1]

    def _check(self, call: SeenCall, result: Any) -> List[Violation]:
        return check_call(self._shape_validator(), call, result, self._target_schemas())

    async def _call(
        self, function: FunctionSpec, payload: Any, payload_json: Optional[bytes], request_id: str
    ) -> InvocationOutcome:
        call = SeenCall.parse(payload)
        action = call.action
        limit = self._limit(function, action)
        outcome = await self.registry.pool(function).invoke(payload, limit.seconds, request_id, payload_json)
        notes = [hint for hint in [request_file_hint(payload)] if hint]
        if outcome.kind is OutcomeKind.TIMED_OUT:
            breach = "contract breach: " if action is not None and limit.is_contract else ""
            notes.append(f"{breach}no answer within {limit.describe()}; the worker was killed and replaced")
        if self._grace_expired is not None and outcome.kind is not OutcomeKind.RETURNED:
            notes.append(f"serve is stopping: still running after the {self._grace_expired:g} s shutdown grace; answered with Runtime.ExitError")
        if action is Action.LIST and outcome.kind is OutcomeKind.RETURNED:
            outcome = self._stop_paging_loop(function, call, outcome, notes)
        loop = asyncio.get_running_loop()
        if self.contract is ContractMode.STRICT and outcome.kind is OutcomeKind.RETURNED:
            violations = self._check(call, outcome.result)
            loop.call_soon(self._report, function, call, outcome, notes, violations)
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
        loop.call_soon(self._report, function, call, outcome, notes, None)
        return outcome

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

    def _report(
        self,
        function: FunctionSpec,
        call: SeenCall,
        outcome: InvocationOutcome,
        notes: List[str],
        violations: Optional[List[Violation]],
    ) -> None:
        action = call.action
        if violations is None and self.contract is not ContractMode.OFF and outcome.kind is OutcomeKind.RETURNED:
            violations = self._check(call, outcome.result)
        lines = [f"contract {'✗' if v.is_error else '!'} [{v.rule.id}]" for v in violations or []]
        self.violations_seen.update(lines)
        notes = notes + [f"contract {'✗' if v.is_error else '!'} {v.line()}" for v in violations or []]
        if self.history is not None and action is not None:
            budgets = (self._limit(function, action), self.budgets.operation(action, self.registry.project.schema))
            self.history.call(function.logical_id, action, call, outcome, violations or [], budgets)
        self.console.call(function.logical_id, action.value if action else None, outcome, notes)

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
