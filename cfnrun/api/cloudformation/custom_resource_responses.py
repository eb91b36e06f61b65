"""The ResponseURL a custom resource's function answers on: ``PUT /cfnrun/custom-resource-responses/{token}``.

The service gives each custom-resource request a presigned S3 URL; the standard ``cfn-response``
module (and crhelper, and hand-written code) PUTs a JSON body there with an empty content type,
and the service reads it from S3. cfnrun serves that URL itself on serve's port, so the pattern
works offline: a query string (as a presigned URL has) is ignored, the body is checked as the
service checks it (JSON, at most 4,096 bytes, Status SUCCESS or FAILED, the ids present) and
handed to ``CustomResourceResponses``. A body the service would refuse is reported to the engine
too, so the resource fails at once with the reason instead of waiting out the hour. A body over
the limit is read only as far as the limit (the rest is dropped unread, up to 64 MB), so one of any
length fails its resource the same way.
"""
from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Protocol, Tuple

from aiohttp import web

from cfnrun.api.cloudformation.xml_text import escaped
from cfnrun.model.errors import not_json, unreadable

PATH = "/cfnrun/custom-resource-responses/{token}"
MAX_BODY_BYTES = 4096  # the service refuses a longer response object
DRAINED_BYTES = 64 * 1024 * 1024  # of a longer body, read and dropped before the answer; past that the connection closes
DRAIN_CHUNK_BYTES = 256 * 1024
STATUSES = ("SUCCESS", "FAILED")
REQUIRED_IDS = ("StackId", "RequestId", "LogicalResourceId", "PhysicalResourceId")


def response_url(base_url: str, token: str) -> str:
    """The ResponseURL to put in a custom-resource request (``base_url``: serve's, e.g. http://127.0.0.1:3001)."""
    return base_url.rstrip("/") + PATH.format(token=token)


@dataclass(frozen=True)
class CustomResourceResponse:
    """A function's answer to one custom-resource request, as cfn-response sends it."""

    status: str  # SUCCESS or FAILED
    stack_id: str
    request_id: str
    logical_resource_id: str
    physical_resource_id: str
    reason: Optional[str] = None
    no_echo: bool = False  # Data is masked wherever it would be shown
    data: Dict[str, Any] = field(default_factory=dict)


class CustomResourceResponses(Protocol):
    """What waits for the answers: the stack engine. Each returns False when no request waits on ``token``."""

    async def respond(self, token: str, response: CustomResourceResponse) -> bool: ...

    async def reject(self, token: str, reason: str) -> bool:
        """The body was not a response the service takes; the resource fails with ``reason``."""
        ...


class BadResponse(ValueError):
    pass


def parse_response(body: bytes) -> CustomResourceResponse:
    """The response in ``body``, or ``BadResponse`` saying what is wrong with it."""
    if len(body) > MAX_BODY_BYTES:
        raise BadResponse(_too_long(len(body)))
    try:
        document = json.loads(body)
    except json.JSONDecodeError as error:
        raise BadResponse(f"Invalid response object: {not_json(error)}") from None
    except ValueError as error:  # not UTF-8, or a number too long to read
        raise BadResponse(f"Invalid response object: {unreadable(error)}") from None
    except (UnicodeDecodeError, RecursionError) as error:
        raise BadResponse(f"Invalid response object: not valid JSON ({type(error).__name__})") from None
    if not isinstance(document, dict):
        raise BadResponse(f"Invalid response object: a JSON object is expected, got {type(document).__name__}")
    status = document.get("Status")
    if status not in STATUSES:
        raise BadResponse(f"Invalid response object: Status must be SUCCESS or FAILED, got {status!r}")
    for name in REQUIRED_IDS:
        if not isinstance(document.get(name), str) or not document[name]:
            raise BadResponse(f"Invalid response object: {name} must be a non-empty string")
    reason, no_echo, data = document.get("Reason"), document.get("NoEcho", False), document.get("Data")
    if reason is not None and not isinstance(reason, str):
        raise BadResponse("Invalid response object: Reason must be a string")
    if not isinstance(no_echo, bool):
        no_echo = str(no_echo).lower() == "true"  # some functions send "true"; the service reads it so
    if data is not None and not isinstance(data, dict):
        raise BadResponse(f"Invalid response object: Data must be a JSON object, got {type(data).__name__}")
    return CustomResourceResponse(
        status,
        document["StackId"],
        document["RequestId"],
        document["LogicalResourceId"],
        document["PhysicalResourceId"],
        reason,
        no_echo,
        data or {},
    )


def s3_error(status: int, code: str, message: str) -> web.Response:
    request_id = uuid.uuid4().hex[:16].upper()
    body = f"<Error><Code>{code}</Code><Message>{escaped(message)}</Message><RequestId>{request_id}</RequestId></Error>"
    return web.Response(status=status, text=body, content_type="application/xml", headers={"x-amz-request-id": request_id})


class CustomResourceResponseEndpoint:
    """The ResponseURL route; answers as S3 answers a presigned PUT (200 with an ETag)."""

    def __init__(self, responses: CustomResourceResponses) -> None:
        self.responses = responses

    def add_route(self, app: web.Application) -> None:
        app.router.add_route("*", PATH, self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        if request.method != "PUT":
            return s3_error(405, "MethodNotAllowed", f"The specified method is not allowed against this resource: {request.method}; the ResponseURL takes PUT")
        token = request.match_info["token"]
        body, length = await _bounded_body(request)
        try:
            if length > MAX_BODY_BYTES:
                raise BadResponse(_too_long(length))
            response = parse_response(body)
        except BadResponse as problem:
            if not await self.responses.reject(token, str(problem)):
                return _unknown(token)
            return s3_error(400, "InvalidArgument", str(problem))
        if not await self.responses.respond(token, response):
            return _unknown(token)
        return web.Response(status=200, headers={"ETag": f'"{hashlib.md5(body, usedforsecurity=False).hexdigest()}"'})


async def _bounded_body(request: web.Request) -> Tuple[bytes, int]:
    """The body as far as the limit and one byte more, and its whole length (counted up to ``DRAINED_BYTES``).

    The rest of a longer body is read and dropped, so a function that sends it all gets the answer
    rather than a reset connection; the connection closes past ``DRAINED_BYTES``.
    """
    body = bytearray()
    while len(body) <= MAX_BODY_BYTES:
        chunk = await request.content.read(MAX_BODY_BYTES + 1 - len(body))
        if not chunk:
            return bytes(body), len(body)
        body += chunk
    length = len(body)
    while length < DRAINED_BYTES:
        chunk = await request.content.read(DRAIN_CHUNK_BYTES)
        if not chunk:
            break
        length += len(chunk)
    return bytes(body), length


def _too_long(length: int) -> str:
    size = f"{length} bytes" if length < DRAINED_BYTES else f"over {DRAINED_BYTES} bytes"
    # The service's reason is the first sentence (as users report it; the docs give the limit): the rest is cfnrun's.
    return f"Response object is too long. ({size}; the service takes at most {MAX_BODY_BYTES})"


def _unknown(token: str) -> web.Response:
    return s3_error(404, "NoSuchUpload", f"No custom-resource request waits for a response at token {token!r}: it was answered already, timed out, or never issued")
