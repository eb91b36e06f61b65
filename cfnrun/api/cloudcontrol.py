"""The AWS Cloud Control API (JSON 1.0) on serve's port: ``POST /`` with ``X-Amz-Target``.

Operation names and shapes follow botocore's ``cloudcontrol/2021-09-30/service-2.json``:
boto3's ``cloudcontrol`` client, its ``resource_request_success`` waiter and
``aws cloudcontrol`` work unchanged. This module is the wire only: it parses and checks
the input, calls a ``ResourceRequests`` implementation, and writes the output or the
modelled error (``__type``, ``message``) botocore raises as an exception.
"""
from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, List, Optional, Protocol, Tuple

from aiohttp import web

from cfnrun.model.json_depth import MAX_NESTING, too_deep
from cfnrun.model.errors import not_json, unreadable

TARGET_PREFIX = "CloudApiService."
CONTENT_TYPE = "application/x-amz-json-1.0"
OPERATIONS = ("CREATE", "DELETE", "UPDATE")
OPERATION_STATUSES = ("PENDING", "IN_PROGRESS", "SUCCESS", "FAILED", "CANCEL_IN_PROGRESS", "CANCEL_COMPLETE")
MAX_RESULTS = 100


class CloudControlError(Exception):
    """A modelled Cloud Control error; botocore raises it as ``client.exceptions.<code>``."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status

    def response(self) -> web.Response:
        return _json({"__type": self.code, "message": self.message}, self.status)


def validation_error(message: str) -> CloudControlError:
    return CloudControlError("ValidationException", message)


@dataclass
class HookProgress:
    """One hook's invocation on a request, as ``GetResourceRequestStatus``'s HooksProgressEvent lists it."""

    hook_type_name: str
    hook_type_arn: str
    status: str  # HOOK_IN_PROGRESS, HOOK_COMPLETE_SUCCEEDED, HOOK_COMPLETE_FAILED or HOOK_FAILED
    failure_mode: str  # FAIL or WARN
    event_time: float  # seconds since the epoch
    message: Optional[str] = None
    type_version_id: str = "00000001"

    def wire(self) -> Dict[str, Any]:
        event: Dict[str, Any] = {
            "HookTypeName": self.hook_type_name,
            "HookTypeVersionId": self.type_version_id,
            "HookTypeArn": self.hook_type_arn,
            "InvocationPoint": "PRE_PROVISION",
            "HookStatus": self.status,
            "HookEventTime": self.event_time,
            "FailureMode": self.failure_mode,
        }
        if self.message is not None:
            event["HookStatusMessage"] = self.message
        return event


@dataclass
class CloudProgress:
    """One resource operation request as ``GetResourceRequestStatus`` shows it."""

    type_name: str
    request_token: str
    operation: str  # CREATE, UPDATE, DELETE
    status: str  # one of OPERATION_STATUSES
    event_time: float  # seconds since the epoch
    identifier: Optional[str] = None
    resource_model: Optional[Dict[str, Any]] = None
    status_message: Optional[str] = None
    error_code: Optional[str] = None
    retry_after: Optional[float] = None
    hooks_request_token: Optional[str] = None  # set when hooks judged the request: their results' TargetId (ListHookResults)
    hooks: Dict[str, HookProgress] = field(default_factory=dict)  # each hook invocation on it, by invocation id, in order

    def wire(self) -> Dict[str, Any]:
        event: Dict[str, Any] = {
            "TypeName": self.type_name,
            "RequestToken": self.request_token,
            "Operation": self.operation,
            "OperationStatus": self.status,
            "EventTime": self.event_time,
        }
        optional = {
            "Identifier": self.identifier,
            "ResourceModel": json.dumps(self.resource_model) if self.resource_model is not None else None,
            "StatusMessage": self.status_message,
            "ErrorCode": self.error_code,
            "RetryAfter": self.retry_after,
            "HooksRequestToken": self.hooks_request_token,
        }
        event.update({key: value for key, value in optional.items() if value is not None})
        return event


@dataclass
class ResourceDescription:
    identifier: str
    properties: Dict[str, Any]

    def wire(self) -> Dict[str, Any]:
        return {"Identifier": self.identifier, "Properties": json.dumps(self.properties)}


class ResourceRequests(Protocol):
    """What serves the operations: serve's request store and the invoker behind it (``app/late_parts.py``'s
    ``CloudControlRequests``, which waits for the store while serve loads it)."""

    async def create_resource(self, type_name: str, desired: Dict[str, Any], client_token: Optional[str]) -> CloudProgress: ...

    async def update_resource(
        self, type_name: str, identifier: str, patch: List[Dict[str, Any]], client_token: Optional[str]
    ) -> CloudProgress: ...

    async def delete_resource(self, type_name: str, identifier: str, client_token: Optional[str]) -> CloudProgress: ...

    async def get_resource(self, type_name: str, identifier: str) -> ResourceDescription: ...

    async def list_resources(self, type_name: str, resource_model: Optional[Dict[str, Any]]) -> List[ResourceDescription]: ...

    async def request_status(self, request_token: str) -> CloudProgress: ...

    async def list_requests(self) -> List[CloudProgress]: ...

    async def cancel_request(self, request_token: str) -> CloudProgress: ...


def _json(body: Dict[str, Any], status: int = 200) -> web.Response:
    return web.Response(
        status=status,
        body=json.dumps(body),
        content_type=CONTENT_TYPE,
        headers={"x-amzn-RequestId": str(uuid.uuid4())},
    )


def _string(params: Dict[str, Any], name: str, required: bool = True) -> Optional[str]:
    value = params.get(name)
    if value is None:
        if required:
            raise validation_error(f"1 validation error detected: Value null at '{name}' failed to satisfy constraint: Member must not be null")
        return None
    if not isinstance(value, str) or not value:
        raise validation_error(f"'{name}' must be a non-empty string")
    return value


def _json_param(params: Dict[str, Any], name: str, expected: type, required: bool = True) -> Any:
    text = _string(params, name, required)
    if text is None:
        return None
    deep = validation_error(f"{name} nests more than {MAX_NESTING} levels deep; no resource model needs that many")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise validation_error(f"{name} is {not_json(error)}") from None
    except ValueError as error:  # a number too long to read
        raise validation_error(f"{name} is not valid JSON: {unreadable(error)}") from None
    except RecursionError:
        raise deep from None
    if too_deep(value):
        raise deep
    if not isinstance(value, expected):
        kind = "object" if expected is dict else "array"
        raise validation_error(f"{name} must be a JSON {kind}, got {type(value).__name__}")
    return value


def _max_results(params: Dict[str, Any]) -> int:
    value = params.get("MaxResults", MAX_RESULTS)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_RESULTS:
        raise validation_error(f"MaxResults must be an integer from 1 to {MAX_RESULTS}, got {value!r}")
    return value


def _page(items: List[Any], params: Dict[str, Any]) -> Tuple[List[Any], Optional[str]]:
    """One page of ``items`` by MaxResults, and the NextToken of the next page (an opaque offset)."""
    start = 0
    token = _string(params, "NextToken", required=False)
    if token is not None:
        try:
            decoded = base64.b64decode(token.encode("ascii"), validate=True).decode("ascii")
            start = int(decoded[len("offset:"):]) if decoded.startswith("offset:") else -1
        except (ValueError, UnicodeError):
            start = -1
        if start < 0:
            raise validation_error(f"NextToken {token!r} is not one this endpoint issued")
    end = start + _max_results(params)
    following = base64.b64encode(f"offset:{end}".encode("ascii")).decode("ascii") if end < len(items) else None
    return items[start:end], following


def _choices(values: Any, allowed: Tuple[str, ...], name: str) -> List[str]:
    if values is None:
        return []
    if not isinstance(values, list) or any(value not in allowed for value in values):
        raise validation_error(f"{name} must be a list of {', '.join(allowed)}; got {values!r}")
    return values


class CloudControlApi:
    def __init__(self, requests: ResourceRequests) -> None:
        self.requests = requests
        self._operations: Dict[str, Callable[[Dict[str, Any]], Awaitable[Dict[str, Any]]]] = {
            "CreateResource": self.create_resource,
            "UpdateResource": self.update_resource,
            "DeleteResource": self.delete_resource,
            "GetResource": self.get_resource,
            "ListResources": self.list_resources,
            "GetResourceRequestStatus": self.get_resource_request_status,
            "ListResourceRequests": self.list_resource_requests,
            "CancelResourceRequest": self.cancel_resource_request,
        }

    @staticmethod
    def accepts(request: web.Request) -> bool:
        return request.headers.get("X-Amz-Target", "").startswith(TARGET_PREFIX)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        name = request.headers.get("X-Amz-Target", "")[len(TARGET_PREFIX):]
        try:
            operation = self._operations.get(name)
            if operation is None:
                raise CloudControlError(
                    "UnknownOperationException", f"Cloud Control has no operation {name!r}; cfnrun serves {', '.join(self._operations)}"
                )
            try:
                params = json.loads(await request.read() or b"{}")
            except ValueError as error:  # not UTF-8, not JSON, or a number too long to read
                raise CloudControlError("SerializationException", f"the request body is not JSON: {unreadable(error)}") from None
            except RecursionError:
                raise CloudControlError("SerializationException", "the request body is nested too deeply to parse") from None
            if not isinstance(params, dict):
                raise CloudControlError("SerializationException", "the request body must be a JSON object")
            return _json(await operation(params))
        except CloudControlError as error:
            return error.response()

    # -- operations ---------------------------------------------------------------

    async def create_resource(self, params: Dict[str, Any]) -> Dict[str, Any]:
        type_name = _string(params, "TypeName")
        desired = _json_param(params, "DesiredState", dict)
        progress = await self.requests.create_resource(str(type_name), desired, _string(params, "ClientToken", False))
        return {"ProgressEvent": progress.wire()}

    async def update_resource(self, params: Dict[str, Any]) -> Dict[str, Any]:
        type_name, identifier = _string(params, "TypeName"), _string(params, "Identifier")
        patch = _json_param(params, "PatchDocument", list)
        progress = await self.requests.update_resource(
            str(type_name), str(identifier), patch, _string(params, "ClientToken", False)
        )
        return {"ProgressEvent": progress.wire()}

    async def delete_resource(self, params: Dict[str, Any]) -> Dict[str, Any]:
        type_name, identifier = _string(params, "TypeName"), _string(params, "Identifier")
        progress = await self.requests.delete_resource(str(type_name), str(identifier), _string(params, "ClientToken", False))
        return {"ProgressEvent": progress.wire()}

    async def get_resource(self, params: Dict[str, Any]) -> Dict[str, Any]:
        type_name, identifier = str(_string(params, "TypeName")), str(_string(params, "Identifier"))
        description = await self.requests.get_resource(type_name, identifier)
        return {"TypeName": type_name, "ResourceDescription": description.wire()}

    async def list_resources(self, params: Dict[str, Any]) -> Dict[str, Any]:
        type_name = str(_string(params, "TypeName"))
        model = _json_param(params, "ResourceModel", dict, required=False)
        _max_results(params)  # a bad value fails before the handler runs
        descriptions = await self.requests.list_resources(type_name, model)
        page, following = _page(descriptions, params)
        body: Dict[str, Any] = {"TypeName": type_name, "ResourceDescriptions": [d.wire() for d in page]}
        if following:
            body["NextToken"] = following
        return body

    async def get_resource_request_status(self, params: Dict[str, Any]) -> Dict[str, Any]:
        progress = await self.requests.request_status(str(_string(params, "RequestToken")))
        answer: Dict[str, Any] = {"ProgressEvent": progress.wire()}
        if progress.hooks:  # the hooks that judged it (the API's HooksProgressEvent)
            answer["HooksProgressEvent"] = [hook.wire() for hook in progress.hooks.values()]
        return answer

    async def list_resource_requests(self, params: Dict[str, Any]) -> Dict[str, Any]:
        status_filter = params.get("ResourceRequestStatusFilter") or {}
        if not isinstance(status_filter, dict):
            raise validation_error("ResourceRequestStatusFilter must be an object")
        operations = _choices(status_filter.get("Operations"), OPERATIONS, "Operations")
        statuses = _choices(status_filter.get("OperationStatuses"), OPERATION_STATUSES, "OperationStatuses")
        matching = [
            progress
            for progress in await self.requests.list_requests()
            if (not operations or progress.operation in operations) and (not statuses or progress.status in statuses)
        ]
        page, following = _page(matching, params)
        body: Dict[str, Any] = {"ResourceRequestStatusSummaries": [p.wire() for p in page]}
        if following:
            body["NextToken"] = following
        return body

    async def cancel_resource_request(self, params: Dict[str, Any]) -> Dict[str, Any]:
        return {"ProgressEvent": (await self.requests.cancel_request(str(_string(params, "RequestToken")))).wire()}
