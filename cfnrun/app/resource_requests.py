"""Cloud Control resource requests: validated, then run in the background by the one invoker.

Each CreateResource, UpdateResource and DeleteResource becomes a request with a token;
its operation runs through ``cfnrun.invoker.operation.Operation`` exactly as
``cfnrun invoke`` runs one (IN_PROGRESS replay after CallbackDelaySeconds, the response
budgets, timeoutInMinutes, contract checks), and its progress is kept for
GetResourceRequestStatus for the life of the server. GetResource and ListResources run
READ and LIST the same way and answer when they end. One store serves every resource type
serve serves (``app/served.py``): each request runs on its type's provider, against its schema,
and is recorded in that provider's history.

Hooks whose configuration targets CLOUD_CONTROL run before each CreateResource, UpdateResource and
DeleteResource (stack filters do not apply, as in the service): one in FAIL mode that fails makes
the request FAILED with its message before the handler is invoked; in WARN mode it goes on.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from cfnrun.api.cloudcontrol import CloudControlError, CloudProgress, HookProgress, ResourceDescription, validation_error
from cfnrun.contract.request_rules import service_problems
from cfnrun.invoker.cancellable_clock import CancelRequested, CancellableClock
from cfnrun.invoker.clock import RealClock
from cfnrun.app.served import UnknownType
from cfnrun.app.type_operations import TypeOperations
from cfnrun.events.operation import InvocationCompleted, OperationEvent, OperationResult
from cfnrun.invoker.operation import Operation
from cfnrun.model.endings import EndReason
from cfnrun.model.project import Project
from cfnrun.model.identifiers import IdentifierError, identifier_model, identifier_of
from cfnrun.model.json_patch import PatchError, apply_patch, parse_pointer, touched_paths, validate_patch
from cfnrun.model.protocol import Action, OperationStatus
from cfnrun.model.schema import ResourceSchema, pointer_to_path
from cfnrun.runtime.registry import FunctionRegistry
from cfnrun.stacks.hook_results import hook_type_arn
from cfnrun.stacks.hooks import HookGate, HookReport, HookedOperation, with_reasons
from cfnrun.stacks.provisioning import StackContext

MAX_QUOTED = 300  # characters of a validation message quoted back to the caller
UNFINISHED = ("PENDING", "IN_PROGRESS", "CANCEL_IN_PROGRESS")
# A handler's FAILED errorCode → the exception Cloud Control raises for GetResource / ListResources.
HANDLER_ERRORS = {
    "NotFound": "ResourceNotFoundException",
    "AlreadyExists": "AlreadyExistsException",
    "NotUpdatable": "NotUpdatableException",
    "InvalidRequest": "InvalidRequestException",
    "InvalidCredentials": "InvalidCredentialsException",
    "AccessDenied": "InvalidCredentialsException",
    "Throttling": "ThrottlingException",
    "ServiceLimitExceeded": "ServiceLimitExceededException",
    "NotStabilized": "NotStabilizedException",
    "GeneralServiceException": "GeneralServiceException",
    "ServiceInternalError": "ServiceInternalErrorException",
    "NetworkFailure": "NetworkFailureException",
    "ResourceConflict": "ResourceConflictException",
    "InternalFailure": "HandlerInternalFailureException",
}
# Endings the invoker decides itself, as the ErrorCode a request reports.
# The ErrorCode of a request its hooks refused: HandlerErrorCode has no hook code, and the guide names none.
HOOK_REFUSAL_ERROR_CODE = "GeneralServiceException"
ENDING_ERROR_CODES = {
    EndReason.INVOCATION_BUDGET: "ServiceTimeout",
    EndReason.OPERATION_TIMEOUT: "NotStabilized",
}


@dataclass
class ResourceRequest:
    registry: "FunctionRegistry[Project]"  # its type's provider
    progress: CloudProgress
    fingerprint: str  # a digest of the input, for ClientToken idempotency (no property values are kept)
    clock: CancellableClock
    task: "Optional[asyncio.Task[None]]" = field(default=None, repr=False)


def _fingerprint(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()


def _model_validation_failed(schema: ResourceSchema, action: Action, desired: Dict[str, Any], previous: Optional[Dict[str, Any]]) -> None:
    """Refuse a model the schema refuses, as the service words it (``contract/service_wording.py``: no value shown)."""
    lines = service_problems(schema, desired) if action in (Action.CREATE, Action.UPDATE) else []
    if action is Action.CREATE:
        lines += [f"#{p.replace('/properties', '', 1)}: readOnly property {p} cannot be set" for p in schema.read_only_properties
                  if schema.has_value(desired, p)]
    if lines:
        raise validation_error(f"Model validation failed ({'; '.join(_quoted(line) for line in lines)})")


def _quoted(text: str) -> str:
    """A line as the error quotes it: a huge key is not echoed whole."""
    return text if len(text) <= MAX_QUOTED else f"{text[:MAX_QUOTED]}… ({len(text)} characters)"


def _touches(patch_path: str, property_pointer: str) -> bool:
    """Does a patch at ``patch_path`` change the value a schema property pointer names?"""
    patched, named = parse_pointer(patch_path), pointer_to_path(property_pointer)
    return all(a == b or b == "*" for a, b in zip(patched, named))


class ResourceRequestStore:
    """The resource requests of one ``cfnrun serve``, for every resource type it serves, served to the Cloud Control API."""

    def __init__(self, operations: TypeOperations, hooks: Optional[HookGate] = None) -> None:
        self.operations = operations  # the one way a served type's operation runs (and is recorded in its provider's history)
        self.hooks = hooks  # asked before each create, update and delete (CLOUD_CONTROL targets)
        self.served = operations.served
        self.console = operations.console
        self._requests: Dict[str, ResourceRequest] = {}
        self._client_tokens: Dict[str, str] = {}

    # -- the providers ----------------------------------------------------------------

    def _provider(self, type_name: str) -> "FunctionRegistry[Project]":
        """The registry of the provider serving resource type ``type_name``; TypeNotFoundException naming the served ones."""
        try:
            registry = self.served.provider(type_name)
        except UnknownType as error:
            raise CloudControlError("TypeNotFoundException", str(error)) from None
        if registry.project.is_hook:
            served = ", ".join(self.served.type_names())
            raise CloudControlError("TypeNotFoundException", f"The type '{type_name}' is a hook, not a resource type: this endpoint serves {served}")
        return registry

    @staticmethod
    def _identifier_model(schema: ResourceSchema, identifier: str) -> Dict[str, Any]:
        try:
            return identifier_model(schema, identifier)
        except IdentifierError as error:
            raise validation_error(f"Invalid identifier {identifier!r}: {error}") from None

    # -- mutating requests --------------------------------------------------------------

    def _known(self, client_token: Optional[str], fingerprint: str) -> Optional[CloudProgress]:
        """The request already made with this ClientToken, if it was made with the same input."""
        if client_token is None or client_token not in self._client_tokens:
            return None
        existing = self._requests[self._client_tokens[client_token]]
        if existing.fingerprint != fingerprint:
            raise CloudControlError(
                "ClientTokenConflictException",
                f"ClientToken {client_token} was already used for request {existing.progress.request_token} with different input",
            )
        return existing.progress

    def _check_no_concurrent(self, identifier: str) -> None:
        for request in self._requests.values():
            if request.progress.identifier == identifier and request.progress.status in UNFINISHED:
                raise CloudControlError(
                    "ConcurrentOperationException",
                    f"request {request.progress.request_token} ({request.progress.operation}) is still "
                    f"{request.progress.status} on {identifier}",
                )

    async def create_resource(self, type_name: str, desired: Dict[str, Any], client_token: Optional[str]) -> CloudProgress:
        registry = self._provider(type_name)
        fingerprint = _fingerprint("CREATE", type_name, desired)
        known = self._known(client_token, fingerprint)
        if known is not None:
            return known
        _model_validation_failed(registry.project.schema, Action.CREATE, desired, None)
        return self._start(registry, Action.CREATE, desired, None, None, client_token, fingerprint)

    async def update_resource(
        self, type_name: str, identifier: str, patch: List[Dict[str, Any]], client_token: Optional[str]
    ) -> CloudProgress:
        registry = self._provider(type_name)
        fingerprint = _fingerprint("UPDATE", type_name, identifier, patch)
        known = self._known(client_token, fingerprint)
        if known is not None:
            return known
        try:
            operations = validate_patch(patch)
        except PatchError as error:
            raise validation_error(f"Invalid patch document: {error}") from None
        schema = registry.project.schema
        for path in touched_paths(operations):
            if any(_touches(path, p) for p in schema.read_only_properties):
                raise validation_error(f"Invalid patch update: readOnly property {path} cannot be updated")
            if any(_touches(path, p) for p in schema.create_only_properties):
                raise CloudControlError("NotUpdatableException", f"Invalid patch update: createOnly property {path} cannot be updated")
        key = self._identifier_model(schema, identifier)
        identifier = identifier_of(schema, key) or identifier
        self._check_no_concurrent(identifier)
        current = (await self._read(registry, key)).resource_model or {}
        try:
            patched = apply_patch(current, operations)
        except PatchError as error:
            raise validation_error(f"Invalid patch document: {error}") from None
        if not isinstance(patched, dict):
            raise validation_error("Invalid patch document: the patched resource model is not a JSON object")
        _model_validation_failed(schema, Action.UPDATE, patched, current)
        return self._start(registry, Action.UPDATE, patched, current, identifier, client_token, fingerprint)

    async def delete_resource(self, type_name: str, identifier: str, client_token: Optional[str]) -> CloudProgress:
        registry = self._provider(type_name)
        fingerprint = _fingerprint("DELETE", type_name, identifier)
        known = self._known(client_token, fingerprint)
        if known is not None:
            return known
        schema = registry.project.schema
        key = self._identifier_model(schema, identifier)
        identifier = identifier_of(schema, key) or identifier
        self._check_no_concurrent(identifier)
        return self._start(registry, Action.DELETE, key, None, identifier, client_token, fingerprint)

    def _start(
        self,
        registry: "FunctionRegistry[Project]",
        action: Action,
        desired: Dict[str, Any],
        previous: Optional[Dict[str, Any]],
        identifier: Optional[str],
        client_token: Optional[str],
        fingerprint: str,
    ) -> CloudProgress:
        token = str(uuid.uuid4())
        progress = CloudProgress(registry.project.type_name, token, action.value, "IN_PROGRESS", time.time(), identifier=identifier)
        request = ResourceRequest(registry, progress, fingerprint, CancellableClock(self.operations.new_clock()))
        self._requests[token] = request
        if client_token is not None:
            self._client_tokens[client_token] = token
        target = f"{progress.type_name} {identifier}" if identifier else progress.type_name
        self.console.info(f"Cloud Control {action.value} {target} → request {token}")
        request.task = asyncio.ensure_future(self._run(request, action, desired, previous))
        return progress

    async def _run(self, request: ResourceRequest, action: Action, desired: Dict[str, Any], previous: Optional[Dict[str, Any]]) -> None:
        progress = request.progress
        try:
            refused = await self._hooks(progress, action, desired, previous)
            if refused is not None:
                self._update(progress, "FAILED", refused, HOOK_REFUSAL_ERROR_CODE)
                self.console.info(f"Cloud Control request {progress.request_token}: {progress.status} (refused by its hooks)")
                return
            result = await self._operation(request.registry, action, desired, previous, request.clock, progress).run()
        except CancelRequested:
            self._update(progress, "CANCEL_COMPLETE", "cancelled: no further invocations were made")
            self.console.info(f"Cloud Control request {progress.request_token}: {progress.status}")
            return
        except Exception as error:  # noqa: B902 - a request never stays IN_PROGRESS because cfnrun failed
            self._update(progress, "FAILED", f"cfnrun failed running the request: {type(error).__name__}: {error}", "InternalFailure")
            self.console.error(f"Cloud Control request {progress.request_token}: {progress.status_message}")
            return
        if progress.status == "CANCEL_IN_PROGRESS":
            self._update(progress, "CANCEL_COMPLETE", f"cancelled; the invocation in flight ended the operation with {result.status.value}")
        elif result.succeeded:
            if action is Action.DELETE:
                progress.resource_model = None
            self._update(progress, "SUCCESS", result.message or None)
        else:
            code = result.error_code or ENDING_ERROR_CODES.get(result.reason, "InternalFailure")
            self._update(progress, "FAILED", result.message, code)
        self.console.info(f"Cloud Control request {progress.request_token}: {progress.status}")

    async def _hooks(self, progress: CloudProgress, action: Action, desired: Dict[str, Any], previous: Optional[Dict[str, Any]]) -> Optional[str]:
        """The CLOUD_CONTROL hooks of this request; why they refuse it, or None.

        There is no stack (its id is empty, stack filters are ignored); the target's logical id is the
        request's token, and its hook results are found by the HooksRequestToken the request then shows."""
        if self.hooks is None:
            return None
        context = StackContext("", "", self.served.region, self.served.account_id)
        hooks_token = str(uuid.uuid4())
        target = HookedOperation(
            context, action.value, progress.request_token, progress.type_name, desired, previous, operation="CLOUD_CONTROL", target_id=hooks_token
        )
        reports: List[HookReport] = []

        def report(hooked: HookReport) -> None:
            reports.append(hooked)
            progress.hooks_request_token = hooks_token
            arn = hook_type_arn(self.served.region, self.served.account_id, hooked.hook_type)
            progress.hooks[hooked.invocation_id or hooked.hook_type] = HookProgress(
                hooked.hook_type, arn, hooked.status, hooked.failure_mode, time.time(), hooked.reason
            )
            if hooked.status != "HOOK_IN_PROGRESS":
                said = f"{hooked.reason} " if hooked.reason else ""
                self.console.info(f"Cloud Control request {progress.request_token}: hook {hooked.hook_type} {hooked.status} {said}(FailureMode {hooked.failure_mode})")

        refused = await self.hooks.before(target, report)
        return with_reasons(refused, reports) if refused is not None else None

    @staticmethod
    def _update(progress: CloudProgress, status: str, message: Optional[str], error_code: Optional[str] = None) -> None:
        progress.status = status
        progress.status_message = message
        progress.error_code = error_code
        progress.retry_after = None
        progress.event_time = time.time()

    def _operation(
        self,
        registry: "FunctionRegistry[Project]",
        action: Action,
        desired: Dict[str, Any],
        previous: Optional[Dict[str, Any]],
        clock: RealClock,
        progress: Optional[CloudProgress] = None,
    ) -> Operation:
        schema = registry.project.schema
        label = f"Cloud Control {progress.request_token[:8]}" if progress else f"Cloud Control {action.value}"

        def observe(event: OperationEvent) -> None:
            if isinstance(event, InvocationCompleted) and progress is not None and event.progress is not None:
                self._record_event(progress, event, schema)

        return self.operations.operation(
            registry.project.type_name,
            action,
            desired,
            previous,
            label=label,
            clock=clock,
            client_request_token=progress.request_token if progress else None,
            observers=[observe],
        )

    @staticmethod
    def _record_event(progress: CloudProgress, event: InvocationCompleted, schema: ResourceSchema) -> None:
        handler_event = event.progress
        assert handler_event is not None
        if handler_event.resourceModel is not None:
            progress.resource_model = schema.without_write_only(handler_event.resourceModel)
            progress.identifier = progress.identifier or identifier_of(schema, handler_event.resourceModel)
        if progress.status == "CANCEL_IN_PROGRESS":
            return
        progress.status_message = handler_event.message or None
        progress.event_time = time.time()
        if handler_event.status is OperationStatus.IN_PROGRESS:
            progress.retry_after = time.time() + max(0, handler_event.callbackDelaySeconds or 0)

    # -- READ and LIST ------------------------------------------------------------------

    async def _read(self, registry: "FunctionRegistry[Project]", key: Dict[str, Any]) -> OperationResult:
        result = await self._operation(registry, Action.READ, key, None, RealClock()).run()
        self._raise_if_failed(result)
        return result

    @staticmethod
    def _raise_if_failed(result: OperationResult) -> None:
        if result.succeeded:
            return
        if result.reason is EndReason.HANDLER and result.error_code:
            raise CloudControlError(HANDLER_ERRORS.get(result.error_code, "HandlerFailureException"), result.message or result.error_code)
        raise CloudControlError("HandlerInternalFailureException", result.message)

    async def get_resource(self, type_name: str, identifier: str) -> ResourceDescription:
        registry = self._provider(type_name)
        result = await self._read(registry, self._identifier_model(registry.project.schema, identifier))
        schema = registry.project.schema
        model = schema.without_write_only(result.resource_model or {})
        return ResourceDescription(identifier_of(schema, model) or identifier, model)

    async def list_resources(self, type_name: str, resource_model: Optional[Dict[str, Any]]) -> List[ResourceDescription]:
        registry = self._provider(type_name)
        result = await self._operation(registry, Action.LIST, resource_model or {}, None, RealClock()).run()
        self._raise_if_failed(result)
        schema = registry.project.schema
        descriptions = []
        for model in result.resource_models or []:
            shown = schema.without_write_only(model)
            descriptions.append(ResourceDescription(identifier_of(schema, shown) or "", shown))
        return descriptions

    # -- request status -----------------------------------------------------------------

    def _request(self, request_token: str) -> ResourceRequest:
        request = self._requests.get(request_token)
        if request is None:
            raise CloudControlError("RequestTokenNotFoundException", f"No resource request with token {request_token}")
        return request

    def request_status(self, request_token: str) -> CloudProgress:
        return self._request(request_token).progress

    def list_requests(self) -> List[CloudProgress]:
        return sorted((r.progress for r in self._requests.values()), key=lambda p: p.event_time, reverse=True)

    def cancel_request(self, request_token: str) -> CloudProgress:
        request = self._request(request_token)
        progress = request.progress
        if progress.status not in ("PENDING", "IN_PROGRESS"):
            raise validation_error(f"Request {request_token} is {progress.status}: only PENDING or IN_PROGRESS requests can be cancelled")
        self._update(progress, "CANCEL_IN_PROGRESS", "cancelling: the invocation in flight, if any, finishes first")
        request.clock.cancel("CancelResourceRequest")
        self.console.info(f"Cloud Control request {request_token}: cancel requested")
        return progress

    async def close(self, timeout_s: float) -> None:
        """On stop: no new invocations; calls in flight finish (bounded), then requests end cancelled."""
        running = [r for r in self._requests.values() if r.task is not None and not r.task.done()]
        for request in running:
            if request.progress.status in ("PENDING", "IN_PROGRESS"):
                self._update(request.progress, "CANCEL_IN_PROGRESS", "the server is stopping")
            request.clock.cancel("cfnrun serve stopping")
        tasks = [r.task for r in running if r.task is not None]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=timeout_s)
            for task in pending:
                task.cancel()
