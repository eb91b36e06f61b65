"""The floor of process isolation: an aiohttp Invoke endpoint that forwards each body to one
child process over a Unix socket pair, with nothing else.

Usage: python bench/forwarder_server.py PROJECT_DIR PORT

No deadlines, no log capture, no Lambda context, no pool, no error handling, one call
at a time: what it adds over bench/inprocess_server.py is the cost of the process hop
itself on this machine, which cfnrun serve cannot go below.
"""
from __future__ import annotations

import asyncio
import json
import os
import socket
import struct
import sys
from pathlib import Path
from typing import Optional

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


async def main() -> None:
    project = load_project(Path(sys.argv[1]))
    function = project.type_function()
    parent_end, child_end = socket.socketpair()
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CHILD, str(project.code_dir), function.handler,
        stdin=child_end.fileno(), cwd=str(project.root), env={**os.environ, **function.environment},
    )
    child_end.close()
    parent_end.setblocking(False)
    loop = asyncio.get_running_loop()
    inbox = bytearray()
    waiting: "list[asyncio.Future[bytes]]" = []

    def take_reply() -> Optional[bytes]:
        try:
            inbox.extend(parent_end.recv(262144))
        except BlockingIOError:
            pass
        if len(inbox) >= HEADER.size:
            end = HEADER.size + HEADER.unpack_from(inbox)[0]
            if len(inbox) >= end:
                reply = bytes(inbox[HEADER.size:end])
                del inbox[:end]
                return reply
        return None

    def on_readable() -> None:
        reply = take_reply()
        if reply is not None and waiting and not waiting[0].done():
            waiting.pop().set_result(reply)

    loop.add_reader(parent_end.fileno(), on_readable)

    async def invoke(request: web.Request) -> web.Response:
        body = await request.read()
        json.loads(body)
        parent_end.send(HEADER.pack(len(body)) + body)
        reply = take_reply()
        if reply is None:
            waiting.append(loop.create_future())
            reply = await waiting[0]
        return web.Response(body=json.dumps(json.loads(reply)), content_type="application/json")

    app = web.Application()
    app.router.add_post("/2015-03-31/functions/{name}/invocations", invoke)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", int(sys.argv[2])).start()
    try:
        await child.wait()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
