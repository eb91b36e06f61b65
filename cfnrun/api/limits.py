"""The endpoint's connection limits, apart from the server so the command line can offer them cheaply."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout_s: float = 30.0  # first byte of a request to the end of its headers
    body_timeout_s: float = 60.0  # end of the headers to the end of the body
    idle_timeout_s: float = 75.0  # a kept-alive connection with no request is closed after this
    max_connections: int = 128  # served at once; more wait for a place (api/connections.py)
    header_grace_s: float = 0.5  # while callers wait, a connection still sending headers after this makes room
    queue_wait_s: float = 10.0  # a caller that waited this long for a place is answered 429 TooManyRequestsException
