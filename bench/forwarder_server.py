"""The floor of process isolation: an aiohttp Invoke endpoint that forwards each body to a
child process over a Unix socket pair, with nothing else.

Usage: python bench/forwarder_server.py PROJECT_DIR PORT [CHILDREN]

No deadlines, no log capture, no Lambda context, no error handling; CHILDREN (default 1)
children, each taking one call at a time, a call waiting for the first child free: what it
adds over bench/inprocess_server.py is the cost of the process hop itself on this machine,
which cfnrun serve cannot go below (in latency with one child, in throughput with as many
children as serve has workers).
"""
from __future__ import annotations

import asyncio
import json
import os
import socket
import struct
import sys
from pathlib import Path
from typing import List, Optional

from aiohttp import web

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cfnrun.model.project import load_project  # noqa: E402

HEADER = struct.Struct(">I")

CHILD = r"""
import importlib, json, os, socket, struct, sys
sys.path.insert(0, sys.argv[1])
module_name, _, attribute = sys.argv[2].rpartition(".")
handler = getattr(importlib.import_module(module_name), attribute)
header = struct.Struct(">I")
channel = socket.socket(fileno=0)
requests = channel.makefile("rb")
while True:
    size = requests.read(4)
    if len(size) < 4:
        break
    event = json.loads(requests.read(header.unpack(size)[0]))
    body = json.dumps(handler(event, None)).encode()
    channel.sendall(header.pack(len(body)) + body)
"""


class Child:
    """One child process's socket: a request written, its reply read straight from the socket."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self.sock = sock
        self.inbox = bytearray()
        self.waiting: "Optional[asyncio.Future[bytes]]" = None
        asyncio.get_running_loop().add_reader(sock.fileno(), self.on_readable)

    def take_reply(self) -> Optional[bytes]:
        try:
            self.inbox.extend(self.sock.recv(262144))
        except BlockingIOError:
            pass
        if len(self.inbox) >= HEADER.size:
            end = HEADER.size + HEADER.unpack_from(self.inbox)[0]
            if len(self.inbox) >= end:
                reply = bytes(self.inbox[HEADER.size:end])
                del self.inbox[:end]
                return reply
        return None

    def on_readable(self) -> None:
        reply = self.take_reply()
        if reply is not None and self.waiting is not None and not self.waiting.done():
            self.waiting.set_result(reply)

    async def call(self, body: bytes) -> bytes:
        self.sock.send(HEADER.pack(len(body)) + body)
        reply = self.take_reply()
        if reply is None:
            self.waiting = asyncio.get_running_loop().create_future()
            reply = await self.waiting
            self.waiting = None
        return reply


async def main() -> None:
    project = load_project(Path(sys.argv[1]))
    function = project.type_function()
    idle: "asyncio.Queue[Child]" = asyncio.Queue()
    processes: List[asyncio.subprocess.Process] = []
    for _ in range(int(sys.argv[3]) if len(sys.argv) > 3 else 1):
        parent_end, child_end = socket.socketpair()
        processes.append(await asyncio.create_subprocess_exec(
            sys.executable, "-c", CHILD, str(project.code_dir), function.handler,
            stdin=child_end.fileno(), cwd=str(project.root), env={**os.environ, **function.environment},
        ))
        child_end.close()
        idle.put_nowait(Child(parent_end))

    async def invoke(request: web.Request) -> web.Response:
        body = await request.read()
        json.loads(body)
        child = idle.get_nowait() if not idle.empty() else await idle.get()
        try:
            reply = await child.call(body)
        finally:
            idle.put_nowait(child)
        return web.Response(body=json.dumps(json.loads(reply)), content_type="application/json")

    app = web.Application()
    app.router.add_post("/2015-03-31/functions/{name}/invocations", invoke)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", int(sys.argv[2])).start()
    try:
        await processes[0].wait()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
