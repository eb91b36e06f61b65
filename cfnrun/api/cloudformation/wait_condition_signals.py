"""A WaitConditionHandle's URL on serve's port: ``PUT /cfnrun/wait-condition-signals/{token}`` takes a signal.

The service's handle is a presigned S3 URL that ``cfn-signal`` (or ``curl -T``) PUTs a JSON
signal to: ``{"Status": "SUCCESS" | "FAILURE", "UniqueId": "…", "Data": "…", "Reason": "…"}``
(the AWS user guide: "Create wait conditions in a CloudFormation template"). cfnrun serves that
URL itself so the pattern works offline: the query string (a presigned URL's) is ignored, the body
is checked (JSON, at most 4,096 bytes — inferred from the custom-resource limit —, Status one of
the two, UniqueId present) and answered as S3 answers a presigned PUT: 200 with an ETag. POST is
taken as well (a presigned S3 URL takes PUT only; cfnrun is lenient there, and about the
Content-Type that S3 would sign).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Optional, Protocol

from aiohttp import web

from cfnrun.api.cloudformation.custom_resource_responses import MAX_BODY_BYTES, s3_error

PATH = "/cfnrun/wait-condition-signals/{token}"
STATUSES = ("SUCCESS", "FAILURE")


@dataclass(frozen=True)
class HandleSignal:
    status: str
    unique_id: str
    reason: Optional[str] = None
    data: Optional[str] = None


class WaitConditionSignals(Protocol):
    """What collects the signals: the local stacks. False when no handle has ``token``."""

    async def signal_handle(self, token: str, signal: HandleSignal) -> bool: ...


class BadSignal(ValueError):
    pass


def parse_signal(body: bytes) -> HandleSignal:
    if len(body) > MAX_BODY_BYTES:
        raise BadSignal(f"The signal is too long ({len(body)} bytes; at most {MAX_BODY_BYTES})")
    try:
        document = json.loads(body)
    except (ValueError, RecursionError) as error:
        raise BadSignal(f"The signal is not valid JSON: {error}") from None
    if not isinstance(document, dict):
        raise BadSignal(f"The signal must be a JSON object, got {type(document).__name__}")
    status, unique_id = document.get("Status"), document.get("UniqueId")
    if status not in STATUSES:
        raise BadSignal(f"The signal's Status must be SUCCESS or FAILURE, got {status!r}")
    if not isinstance(unique_id, str) or not unique_id:
        raise BadSignal("The signal's UniqueId must be a non-empty string")
    reason, data = document.get("Reason"), document.get("Data")
    return HandleSignal(status, unique_id, None if reason is None else str(reason), None if data is None else str(data))


class WaitConditionSignalEndpoint:
    def __init__(self, signals: WaitConditionSignals) -> None:
        self.signals = signals

    def add_route(self, app: web.Application) -> None:
        app.router.add_route("*", PATH, self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        if request.method not in ("PUT", "POST"):
            return s3_error(405, "MethodNotAllowed", f"The specified method is not allowed against this resource: {request.method}; a wait condition handle takes PUT")
        body = await request.content.read(MAX_BODY_BYTES + 1)
        try:
            signal = parse_signal(body)
        except BadSignal as problem:
            return s3_error(400, "InvalidArgument", str(problem))
        token = request.match_info["token"]
        if not await self.signals.signal_handle(token, signal):
            return s3_error(404, "NoSuchKey", f"No wait condition handle has the token {token!r}: it was deleted, or never made by this serve")
        return web.Response(status=200, headers={"ETag": f'"{hashlib.md5(body, usedforsecurity=False).hexdigest()}"'})
