"""Small pieces the benchmark scripts share."""
from __future__ import annotations

import socket
from typing import Any, Dict

NOTE_LIST_REQUEST: Dict[str, Any] = {
    "action": "LIST",
    "awsAccountId": "123456789012",
    "bearerToken": "bench",
    "region": "us-east-1",
    "resourceType": "Cfnrun::Sample::Note",
    "requestData": {"resourceProperties": {}},
}


class StubContext:
    """The Lambda context fields the support library reads, for in-process baselines."""

    function_name = "TypeFunction"
    aws_request_id = "bench"

    def get_remaining_time_in_millis(self) -> int:
        return 60000


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
