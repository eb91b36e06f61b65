"""The Lambda API's function management on serve's port, as aiohttp handlers: the wire only.

botocore's ``lambda`` model (rest-json) says where each operation is and what it answers:
CreateFunction ``POST /2015-03-31/functions`` (201), GetFunction ``GET …/functions/{FunctionName}``,
GetFunctionConfiguration ``GET …/{FunctionName}/configuration``, ListFunctions ``GET …/functions``
(Marker, MaxItems in the query), DeleteFunction ``DELETE …/{FunctionName}`` (204, as the service's API
reference says; botocore reads any 2xx) and UpdateFunctionCode ``PUT …/{FunctionName}/code``. This
module reads each request (a JSON body whose ``ZipFile`` is base64, as botocore writes a blob), hands it to a
``FunctionManagement`` (``app/lambda_functions.py``: what a function is made of and where it runs) and
writes the answer back. Errors are ``service_errors.ServiceError``, answered as Lambda answers them.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any, Dict, List, Optional, Protocol

from aiohttp import web

from cfnrun.api import service_errors
from cfnrun.model.errors import unreadable

FUNCTIONS_PATH = "/2015-03-31/functions"
# any Lambda API path about one function, whatever the operation's API version: …/functions/{FunctionName}[/…]
_FUNCTION_PATH = re.compile(r"/\d{4}-\d{2}-\d{2}/functions/(?P<name>[^/]+)(?:/.*)?")
MAX_CODE_REQUEST_BYTES = 69905067  # the service's limit of a CreateFunction/UpdateFunctionCode request (a 50 MB zip, base64)
DEFAULT_MAX_ITEMS = 50
MAX_ITEMS = 10000


class FunctionManagement(Protocol):
    """What makes, shows, changes and removes functions; each may raise ``service_errors.ServiceError``.

    A request is the operation's JSON members with every ``ZipFile`` decoded to bytes."""

    async def create(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """CreateFunction: the new function's FunctionConfiguration."""

    def get(self, name: str) -> Dict[str, Any]:
        """GetFunction: ``{Configuration, Code[, Tags]}``."""

    def configuration(self, name: str) -> Dict[str, Any]:
        """GetFunctionConfiguration."""

    def listed(self) -> List[Dict[str, Any]]:
        """Every function's FunctionConfiguration, by name."""

    async def delete(self, name: str) -> None: ...

    async def update_code(self, name: str, request: Dict[str, Any]) -> Dict[str, Any]:
        """UpdateFunctionCode: the FunctionConfiguration with the new code."""


class FunctionRoutes:
    """The management operations' routes, added to the Lambda service's application before its catch-all."""

    def __init__(self, functions: FunctionManagement) -> None:
        self.functions = functions

    def knows(self, name: str) -> bool:
        """Is ``name`` a function serve serves or made?"""
        try:
            self.functions.configuration(name)
        except service_errors.ServiceError:
            return False
        return True

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post(FUNCTIONS_PATH, self.create)
        app.router.add_get(FUNCTIONS_PATH, self.list)
        app.router.add_get(FUNCTIONS_PATH + "/", self.list)
        app.router.add_get(FUNCTIONS_PATH + "/{name}", self.get)
        app.router.add_delete(FUNCTIONS_PATH + "/{name}", self.delete)
        app.router.add_get(FUNCTIONS_PATH + "/{name}/configuration", self.configuration)
        app.router.add_put(FUNCTIONS_PATH + "/{name}/code", self.update_code)

    async def create(self, request: web.Request) -> web.StreamResponse:
        body = await _code_request(request, "CreateFunction")
        code = body.get("Code")
        if isinstance(code, dict) and "ZipFile" in code:
            body["Code"] = dict(code, ZipFile=_blob(code["ZipFile"], "Code.ZipFile"))
        return _json(await self.functions.create(body), 201)

    async def get(self, request: web.Request) -> web.StreamResponse:
        refuse_qualifier(request)
        return _json(self.functions.get(request.match_info["name"]))

    async def configuration(self, request: web.Request) -> web.StreamResponse:
        refuse_qualifier(request)
        return _json(self.functions.configuration(request.match_info["name"]))

    async def list(self, request: web.Request) -> web.StreamResponse:
        try:
            most = int(request.query.get("MaxItems", DEFAULT_MAX_ITEMS))
        except ValueError:
            raise _invalid(f"MaxItems {request.query['MaxItems']!r} is not a number") from None
        if not 1 <= most <= MAX_ITEMS:
            raise _invalid(f"MaxItems {most} is not between 1 and {MAX_ITEMS}")
        functions = self.functions.listed()
        marker = request.query.get("Marker")
        start = next((i for i, f in enumerate(functions) if f["FunctionName"] > marker), len(functions)) if marker else 0
        page = functions[start:start + most]
        answer: Dict[str, Any] = {"Functions": page}
        if start + most < len(functions):
            answer["NextMarker"] = page[-1]["FunctionName"]
        return _json(answer)

    async def delete(self, request: web.Request) -> web.StreamResponse:
        refuse_qualifier(request)
        await self.functions.delete(request.match_info["name"])
        return web.Response(status=204)

    async def update_code(self, request: web.Request) -> web.StreamResponse:
        body = await _code_request(request, "UpdateFunctionCode")
        if "ZipFile" in body:
            body["ZipFile"] = _blob(body["ZipFile"], "ZipFile")
        return _json(await self.functions.update_code(request.match_info["name"], body))


def _invalid(message: str) -> service_errors.ServiceError:
    return service_errors.ServiceError(400, "InvalidParameterValueException", message)


def refuse_qualifier(request: web.Request) -> None:
    """A Qualifier other than $LATEST, refused: serve keeps no versions or aliases of a function."""
    qualifier = request.query.get("Qualifier")
    if qualifier not in (None, "$LATEST"):
        raise _invalid(f"Qualifier {qualifier}: cfnrun serve keeps no versions or aliases of a function, only $LATEST")


async def _code_request(request: web.Request, operation: str) -> Dict[str, Any]:
    """The JSON body of a request that may carry a zip: read up to the service's limit (more than other requests may carry)."""
    chunks: List[bytes] = []
    size = 0
    while True:
        chunk = await request.content.read(1 << 20)
        if not chunk:
            break
        size += len(chunk)
        if size > MAX_CODE_REQUEST_BYTES:
            raise service_errors.ServiceError(
                413, "RequestEntityTooLargeException", f"Request must be smaller than {MAX_CODE_REQUEST_BYTES} bytes for the {operation} operation",
                close_connection=True,
            )
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks) or b"{}")
    except ValueError as error:  # not UTF-8, not JSON, or a number too long to read
        raise service_errors.invalid_json(unreadable(error)) from None
    if not isinstance(body, dict):
        raise service_errors.invalid_json("the body is not a JSON object")
    return body


def _blob(value: Any, member: str) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        raise _invalid(f"{member} is not base64 (botocore and the aws CLI encode it; send the zip's bytes that way)") from None


def _json(answer: Optional[Dict[str, Any]], status: int = 200) -> web.Response:
    return web.Response(status=status, body=json.dumps(answer or {}), content_type="application/json")


def function_in_path(path: str) -> Optional[str]:
    """The function a Lambda API path is about (None: a path about no one function, ListFunctions' say)."""
    found = _FUNCTION_PATH.fullmatch(path)
    return found.group("name") if found else None
