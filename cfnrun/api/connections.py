"""Connection limits for the endpoint: a header deadline and a cap on open connections.

aiohttp waits forever for a request's headers, so a client that opens connections and
sends a byte now and then (slow-loris) would hold them open for good. Each connection is
given ``header_timeout_s`` from its first byte to the end of a request's headers, and no
more than ``max_connections`` are open at once; beyond that, new ones are closed at once.
A call's own run time is not limited here: once its headers are in, it may take as long
as its function allows.
"""
from __future__ import annotations

import asyncio
from typing import Dict, Optional

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from cfnrun.api.limits import ConnectionLimits as ConnectionLimits  # its home is light, for the command line


class _GuardedConnection(asyncio.Protocol):
    """Passes everything to aiohttp's protocol; closes the connection at a missed header deadline."""

    def __init__(self, guard: "ConnectionGuard", inner: RequestHandler) -> None:
        self.guard = guard
        self.inner = inner
        self.transport: Optional[asyncio.Transport] = None
        self._deadline: Optional[asyncio.TimerHandle] = None
        self._in_request = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        if len(self.guard.open) >= self.guard.limits.max_connections:
            self.guard.refused += 1
            transport.abort()
            return
        self.transport = transport
        self.guard.open[self.inner] = self
        self._arm()
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._deadline is None and not self._in_request:
            self._arm()  # the first bytes of the next request on a kept-alive connection
        self.inner.data_received(data)

    def eof_received(self) -> None:
        if self.transport is not None:
            self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if self.transport is None:
            return  # refused: aiohttp never saw it
        self._disarm()
        self.guard.open.pop(self.inner, None)
        self.inner.connection_lost(exc)

    def request_started(self) -> None:
        self._in_request = True
        self._disarm()

    def request_finished(self) -> None:
        self._in_request = False

    def _arm(self) -> None:
        self._deadline = asyncio.get_running_loop().call_later(self.guard.limits.header_timeout_s, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        self.guard.timed_out += 1
        if self.transport is not None:
            self.transport.abort()


class ConnectionGuard:
    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.open: Dict[RequestHandler, _GuardedConnection] = {}
        self.refused = 0
        self.timed_out = 0

    def protocol_factory(self, server: web.Server) -> "asyncio.Protocol":
        return _GuardedConnection(self, server())

    def request_started(self, request: web.BaseRequest) -> None:
        connection = self.open.get(request.protocol)
        if connection is not None:
            connection.request_started()

    def request_finished(self, request: web.BaseRequest) -> None:
        connection = self.open.get(request.protocol)
        if connection is not None:
            connection.request_finished()


class GuardedTCPSite(web.BaseSite):
    """aiohttp's TCP site, with every connection under a ``ConnectionGuard``."""

    __slots__ = ("_host", "_port", "_guard")

    def __init__(self, runner: web.BaseRunner, host: str, port: int, guard: ConnectionGuard) -> None:
        super().__init__(runner)
        self._host = host
        self._port = port
        self._guard = guard

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None
        self._server = await asyncio.get_running_loop().create_server(
            lambda: self._guard.protocol_factory(server), self._host, self._port, backlog=self._backlog
        )
