"""The payload URL of a STACK or CHANGE_SET hook invocation: ``GET /cfnrun/hook-payloads/{token}``.

The service does not put a stack's template or a change set's changes in the hook's request: it
puts them in S3 and sends a presigned URL in ``requestData.payload``, which the support library
downloads (a plain GET, retried) into ``targetModel``. cfnrun serves that URL itself on serve's
port, for as long as the hook invocation runs, so a hook project works unchanged offline.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Protocol

from aiohttp import web

from cfnrun.api.cloudformation.custom_resource_responses import s3_error

PATH = "/cfnrun/hook-payloads/{token}"


def payload_url(base_url: str, token: str) -> str:
    """The ``payload`` to put in a hook's request (``base_url``: serve's, e.g. http://127.0.0.1:3001)."""
    return base_url.rstrip("/") + PATH.format(token=token)


class HookPayloads(Protocol):
    async def payload(self, token: str) -> Optional[Dict[str, Any]]:
        """The document behind ``token``, or None once its invocation has ended (or it never was)."""


class HookPayloadEndpoint:
    """The payload route; answers as S3 answers a presigned GET (the JSON object, or an XML error)."""

    def __init__(self, payloads: HookPayloads) -> None:
        self.payloads = payloads

    def add_route(self, app: web.Application) -> None:
        app.router.add_route("*", PATH, self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        if request.method != "GET":
            return s3_error(405, "MethodNotAllowed", f"The specified method is not allowed against this resource: {request.method}; a hook payload URL takes GET")
        token = request.match_info["token"]
        document = await self.payloads.payload(token)
        if document is None:
            return s3_error(404, "NoSuchKey", f"No hook invocation runs with payload {token!r}: it ended, or never was")
        return web.json_response(document)
