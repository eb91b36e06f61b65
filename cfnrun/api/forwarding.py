"""AWS calls for services serve does not answer, passed on to the AWS endpoint (``--moto``'s or ``--aws-endpoint``).

With one endpoint for everything (``AWS_ENDPOINT_URL=http://127.0.0.1:3001``), a tool that talks to several
services — ``cfn submit`` uploading to S3 before it calls RegisterType, ``aws cloudformation deploy
--s3-bucket``, a test listing the bucket a stack made — reaches the same world the stacks' AWS::* resources
live in. A request belongs to the service its SigV4 signature names (the credential scope of its
``Authorization`` header, or a presigned URL's ``X-Amz-Credential``); one signed for a service serve does not
answer itself goes to the endpoint as it came (method, path, query, headers, body streamed both ways, the
signature untouched: moto does not check it), and its answer comes back as the endpoint gave it. Without an
endpoint such a request is refused saying where it would have gone; it is never sent to AWS itself.
"""
from __future__ import annotations

import re
from typing import Optional
from xml.sax.saxutils import escape

from aiohttp import ClientError, ClientSession, ClientTimeout, web

# Headers of one connection, not of the request or answer (RFC 9110 7.6.1), and those the hop sets itself.
_NOT_PASSED = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "host",
})
_SCOPE = re.compile(r"Credential=[^/,\s]+/\d{8}/[^/,\s]+/([a-z0-9-]+)/aws4_request")
_PRESIGNED_SCOPE = re.compile(r"^[^/]+/\d{8}/[^/]+/([a-z0-9-]+)/aws4_request$")
CHUNK = 64 * 1024


def refusal(request: web.BaseRequest, status: int, code: str, message: str) -> web.Response:
    """An error the caller's SDK reads: JSON for the JSON protocols (an ``X-Amz-Target`` call), XML for the others
    (the query protocol's ``ErrorResponse``, which botocore's REST-XML parser reads too)."""
    if "X-Amz-Target" in request.headers:
        return web.json_response({"__type": code, "message": message}, status=status, headers={"x-amzn-ErrorType": code})
    body = (
        f"<ErrorResponse><Error><Type>Sender</Type><Code>{code}</Code><Message>{escape(message)}</Message></Error>"
        "<RequestId>cfnrun</RequestId></ErrorResponse>"
    )
    return web.Response(status=status, text=body, content_type="text/xml")


def signed_service(request: web.BaseRequest) -> Optional[str]:
    """The service a SigV4-signed request is for (``s3``, ``sqs``…), or None for a request signed otherwise or not at all."""
    authorization = request.headers.get("Authorization")
    if authorization is not None:
        found = _SCOPE.search(authorization)
        return found.group(1) if found else None
    credential = request.query.get("X-Amz-Credential")
    if credential is not None:
        found = _PRESIGNED_SCOPE.match(credential)
        return found.group(1) if found else None
    return None


class Forwarder:
    """Passes a request on to ``endpoint_url`` (None: refuses it, naming the service and how to give an endpoint)."""

    def __init__(self, endpoint_url: Optional[str], own_services: "frozenset[str]") -> None:
        self.endpoint_url = endpoint_url.rstrip("/") if endpoint_url else None
        self.own_services = own_services
        self._session: Optional[ClientSession] = None

    def wants(self, request: web.BaseRequest) -> bool:
        """Is ``request`` signed for a service serve does not answer itself?"""
        service = signed_service(request)
        return service is not None and service not in self.own_services

    async def forward(self, request: web.Request) -> web.StreamResponse:
        service = signed_service(request) or "another service"
        if self.endpoint_url is None:
            return refusal(request, 400, "NoAwsEndpoint", (
                f"cfnrun serve answers Lambda, CloudFormation, Cloud Control and STS calls; this {service} call "
                f"({request.method} {request.path}) goes to an AWS endpoint, and none is set: start serve with --moto or --aws-endpoint URL"
            ))
        if self._session is None:
            # no total limit (an upload may be large and slow), no cookies, the endpoint's compression passed on as it is
            self._session = ClientSession(timeout=ClientTimeout(total=None, sock_connect=10), auto_decompress=False)
        headers = {name: value for name, value in request.headers.items() if name.lower() not in _NOT_PASSED}
        body = request.content if request.body_exists else None
        response: Optional[web.StreamResponse] = None
        try:
            async with self._session.request(
                request.method, self.endpoint_url + request.rel_url.raw_path_qs, headers=headers, data=body, allow_redirects=False,
            ) as upstream:
                response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
                for name, value in upstream.headers.items():
                    if name.lower() not in _NOT_PASSED:
                        response.headers.add(name, value)
                await response.prepare(request)
                async for chunk in upstream.content.iter_chunked(CHUNK):
                    await response.write(chunk)
                await response.write_eof()
                return response
        except ClientError as error:
            if response is not None and response.prepared:  # cut off mid-answer: the caller sees its answer end short
                response.force_close()
                return response
            return refusal(request, 502, "AwsEndpointFailed", f"the AWS endpoint {self.endpoint_url} did not answer this {service} call: {error}")

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
