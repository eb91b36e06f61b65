"""The worker's loop over a real socket pair: each call answered in order, and the process id asked once per call."""
from __future__ import annotations

import os
import socket
import struct
from typing import Any, Dict, List, Tuple

import pytest

from cfnrun.runtime.worker.channel import Channel
from cfnrun.runtime.worker.lambda_context import LambdaContext
from cfnrun.runtime.worker.loop import Worker
from cfnrun.runtime.worker.protocol import decode_frame, encode_call

IDENTITY = {
    "function_name": "F",
    "invoked_function_arn": "arn:aws:lambda:us-east-1:123456789012:function:F",
    "memory_limit_in_mb": 128,
    "log_group_name": "/aws/lambda/F",
    "log_stream_name": "stream",
}


class EchoHost:
    """What the loop needs of a ``HandlerHost``: the handler answers with the event and the request id."""

    dependencies: List[str] = []

    def call(self, event: Any, context: LambdaContext) -> Tuple[str, bytes]:
        return "result", f'{{"event":{event["n"]},"request_id":"{context.aws_request_id}"}}'.encode()

    def fired_faults(self) -> List[Dict[str, Any]]:
        return []


def _replies(data: bytes) -> List[Dict[str, Any]]:
    frames = []
    while data:
        (size,) = struct.unpack_from(">I", data)
        frames.append(decode_frame(data[4 : 4 + size]))
        data = data[4 + size :]
    return frames


def _serve(calls: int, monkeypatch: pytest.MonkeyPatch) -> Tuple[List[Dict[str, Any]], int]:
    """Serve ``calls`` calls sent ahead, then EOF: the replies, and how often the loop asked for its process id."""
    worker_end, parent_end = socket.socketpair()
    try:
        channel = Channel(worker_end)
        for n in range(calls):
            parent_end.sendall(encode_call(n + 1, f"request-{n}", 2**41, f'{{"n":{n}}}'.encode()))
        parent_end.shutdown(socket.SHUT_WR)
        worker = Worker(EchoHost(), IDENTITY, channel)  # type: ignore[arg-type]
        worker.sessions_share_work = True  # botocore is not this test's business
        asked = [0]
        real_getpid = os.getpid

        def getpid() -> int:
            asked[0] += 1
            return real_getpid()

        with monkeypatch.context() as patch:
            patch.setattr(os, "getpid", getpid)
            worker.serve()
        parent_end.setblocking(False)  # every reply was written before serve() returned
        received = b""
        try:
            while True:
                chunk = parent_end.recv(65536)
                if not chunk:
                    break
                received += chunk
        except BlockingIOError:
            pass
        return _replies(received), asked[0]
    finally:
        worker_end.close()
        parent_end.close()


def test_each_call_is_answered_in_order_and_asks_for_the_process_id_once(monkeypatch: pytest.MonkeyPatch) -> None:
    one, asked_for_one = _serve(1, monkeypatch)
    four, asked_for_four = _serve(4, monkeypatch)
    assert one[0]["type"] == "ready" and four[0]["type"] == "ready"
    assert [(r["id"], r["result"]) for r in four[1:]] == [
        (n + 1, {"event": n, "request_id": f"request-{n}"}) for n in range(4)
    ]
    assert (asked_for_four - asked_for_one) / 3 == 1  # the fork check after the handler; not again to write or read
