"""The CloudFormation API on serve's port: ``POST /`` with a form body, told apart from its neighbours there.

Three APIs share ``POST /``: Cloud Control (an ``X-Amz-Target`` header), the STS stand-in and
CloudFormation (both forms). A form is CloudFormation's when its SigV4 credential scope names
the ``cloudformation`` service, when its ``Version`` is 2010-05-15, or, with no Version or
another one, when its ``Action`` is a CloudFormation operation (so a wrong Version is answered by
CloudFormation's error rather than STS's). The engine behind ``StackService`` sees checked
parameters and answers a result dict or a ``StackApiError``.
"""
from __future__ import annotations

import re
import uuid
from typing import Any, Dict, FrozenSet, Optional, Protocol

from aiohttp import web

from cfnrun.api.cloudformation.answer import response_body
from cfnrun.api.cloudformation.errors import (
    StackApiError,
    invalid_action,
    invalid_version,
    missing_action,
    not_supported,
)
from cfnrun.api.cloudformation.query import read_form, read_input
from cfnrun.api.cloudformation.service_model import API_VERSION, SERVICE, operation_model, operation_names

_SCOPE = re.compile(r"Credential=[^/,\s]*/\d{8}/[^/,\s]*/([^/,\s]+)/aws4_request")


class StackService(Protocol):
    """What runs the operations: the stack engine. ``params`` is shaped as the operation's input shape
    (botocore's model), the result as its output shape; raise ``StackApiError`` to answer an error."""

    async def call(self, operation: str, params: Dict[str, Any]) -> Dict[str, Any]: ...

    def operations(self) -> FrozenSet[str]:
        """The operations ``call`` implements; others are answered as not supported by cfnrun."""
        ...


def signed_service(request: web.Request) -> Optional[str]:
    """The service a SigV4 ``Authorization`` header's credential scope names, if the request is signed."""
    found = _SCOPE.search(request.headers.get("Authorization", ""))
    return found.group(1) if found else None


class CloudFormationApi:
    def __init__(self, stacks: StackService) -> None:
        self.stacks = stacks

    @staticmethod
    async def accepts(request: web.Request) -> bool:
        """Whether a ``POST /`` request is CloudFormation's (not Cloud Control's, not STS's)."""
        if "X-Amz-Target" in request.headers:
            return False
        service = signed_service(request)
        if service is not None:
            return service == SERVICE
        try:
            form = read_form(await request.read())
        except StackApiError:
            return False
        version = form.get("Version")
        return version == API_VERSION or form.get("Action", "") in operation_names()

    async def handle(self, request: web.Request) -> web.Response:
        request_id = str(uuid.uuid4())
        try:
            form = read_form(await request.read())
            action = form.get("Action")
            if not action:
                raise missing_action()
            version = form.get("Version", "")
            if version != API_VERSION:
                raise invalid_version(version, API_VERSION)
            operation = operation_model(action)
            if operation is None:
                raise invalid_action(action, version)
            if action not in self.stacks.operations():
                raise not_supported(action, self.stacks.operations())
            params = read_input(operation, form)
            result = await self.stacks.call(action, params)
            body = response_body(operation, result, request_id)
        except StackApiError as error:
            return error.response(request_id)
        return web.Response(text=body, content_type="text/xml", headers={"x-amzn-RequestId": request_id})
