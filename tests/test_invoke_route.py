"""An Invoke call skips aiohttp's router (``LambdaService.requests``): the same function named, the same answer, byte for byte.

Two real servers on 127.0.0.1 in this process, one with serve's handler of requests and one routed only by the
application, are sent the same raw requests; their answers must not differ but for the Date header. The calls
themselves are answered by a stand-in for serve's call policy (this is the HTTP layer's test); real serve with boto3
calls a function by its ARN below.
"""
from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any, Callable, List, Tuple

import pytest

from cfnrun.api import service_errors
from cfnrun.api.lambda_api import LambdaAnswer, LambdaCall
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind

FIXED_ID = "00000000-0000-4000-8000-000000000000"
INVOKE = "/2015-03-31/functions/{}/invocations"


class _Spec:
    memory_mb = 128


class _Function:
    spec = _Spec()

    def __init__(self, name: str) -> None:
        self.name = name


class _StandInCalls:
    """Answers every call SUCCESS with a line of output; knows the functions in ``known``; remembers the names asked for."""

    def __init__(self, known: Tuple[str, ...]) -> None:
        self.known = known
        self.named: List[str] = []

    def function(self, name: str) -> Any:
        self.named.append(name)
        if name not in self.known:
            raise service_errors.function_not_found(name, list(self.known))
        return _Function(name)

    async def invoke(self, call: LambdaCall) -> LambdaAnswer:
        result = {"status": "SUCCESS", "echo": call.payload}
        return LambdaAnswer(InvocationOutcome(OutcomeKind.RETURNED, call.request_id, 1.25, logs="said hi\n", result=result))

    def invoke_event(self, call: LambdaCall) -> None:
        pass


def _request(method: str, path: str, body: bytes = b"", *headers: str) -> bytes:
    head = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


ARN = "arn%3Aaws%3Alambda%3Aus-east-1%3A123456789012%3Afunction%3ATypeFunction"
REQUESTS = [
    _request("POST", INVOKE.format("TypeFunction"), b'{"action": "LIST"}'),
    _request("POST", INVOKE.format("TypeFunction"), b'{"action": "LIST"}', "X-Amz-Log-Type: Tail"),
    _request("POST", INVOKE.format("TypeFunction"), b""),
    _request("POST", INVOKE.format(ARN), b"{}"),
    _request("POST", INVOKE.format("a%2Fb%25c%20d"), b"{}"),  # decoded as the router decodes it: "a/b%c d"
    _request("POST", INVOKE.format("Nobody"), b"{}"),
    _request("POST", INVOKE.format("TypeFunction"), b"{not json"),
    _request("POST", INVOKE.format("TypeFunction"), b"{}", "X-Amz-Invocation-Type: DryRun"),
    _request("POST", INVOKE.format("TypeFunction"), b"{}", "X-Amz-Invocation-Type: Event"),
    _request("POST", INVOKE.format("TypeFunction"), b"{}", "X-Amz-Invocation-Type: Sometimes"),
    _request("POST", INVOKE.format("TypeFunction") + "?Qualifier=%24LATEST", b"{}"),
    _request("POST", INVOKE.format("TypeFunction") + "/", b"{}"),
    _request("POST", "/2015-03-31/functions//invocations", b"{}"),
    _request("GET", INVOKE.format("TypeFunction")),
    _request("PUT", INVOKE.format("TypeFunction"), b"{}"),
]


async def _answers(install: bool, calls: _StandInCalls) -> List[bytes]:
    from aiohttp import web

    from cfnrun.api.connections import GuardedTCPSite
    from cfnrun.api.lambda_api import LambdaService

    service = LambdaService(calls, print)
    runner = web.AppRunner(service.app())
    await runner.setup()
    if install:
        assert runner.server is not None
        runner.server.request_handler = service.requests(runner.server.request_handler)
    site = GuardedTCPSite(runner, "127.0.0.1", 0, service.connections)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    answers = []
    try:
        for request in REQUESTS:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request)
            answers.append(await reader.read())
            writer.close()
    finally:
        await runner.cleanup()
    return answers


def _dateless(answer: bytes) -> bytes:
    return re.sub(rb"\r\nDate: [^\r]*", b"\r\nDate: -", answer)


def test_an_invoke_call_that_skips_the_router_names_the_same_function_and_is_answered_byte_for_byte_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("cfnrun.api.lambda_api.random_uuid", lambda: FIXED_ID)
    known = ("TypeFunction", "arn:aws:lambda:us-east-1:123456789012:function:TypeFunction", "a/b%c d")
    routed, direct = _StandInCalls(known), _StandInCalls(known)
    expected = asyncio.run(_answers(False, routed))
    answers = asyncio.run(_answers(True, direct))
    assert direct.named == routed.named and len(routed.named) >= 11
    assert "a/b%c d" in direct.named and known[1] in direct.named
    for request, before, after in zip(REQUESTS, expected, answers):
        assert _dateless(after) == _dateless(before), request
    assert answers[0].startswith(b"HTTP/1.1 200 OK") and b'"echo": {"action": "LIST"}' in answers[0]
    assert answers[1].count(b"X-Amz-Log-Result") == 1
    assert [a.split(b" ", 2)[1] for a in answers[5:10]] == [b"404", b"400", b"204", b"202", b"400"]


def test_serve_answers_boto3_calls_by_name_and_by_arn(serve: Callable[..., Any], sample: Callable[[str], Path]) -> None:
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config

    server = serve(sample("note"))
    client = boto3.client(
        "lambda", endpoint_url=server.url, region_name="us-east-1", config=Config(signature_version=UNSIGNED, retries={"max_attempts": 0})
    )
    arn = "arn:aws:lambda:us-east-1:123456789012:function:TypeFunction"
    answers = []
    for name in ("TypeFunction", arn):
        answer = client.invoke(FunctionName=name, Payload=json.dumps({"action": "LIST", "requestData": {}}).encode())
        assert answer["StatusCode"] == 200 and "FunctionError" not in answer, name
        answers.append(json.loads(answer["Payload"].read()))
    assert answers[0] == answers[1] and "status" in answers[0]  # the handler's ProgressEvent, the same by either name
    with pytest.raises(client.exceptions.ResourceNotFoundException):  # an unknown name: Lambda's error, as before
        client.invoke(FunctionName="Nobody", Payload=b"{}")
