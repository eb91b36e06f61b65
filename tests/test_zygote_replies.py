"""A zygote's replies and exit reports matched to the forks that asked, whatever order they are read in; a fork
torn down the moment it is made.

The zygote's side of the control socket is played by the test (a SOCK_SEQPACKET pair, as the real one is), so it
can send what a busy machine produces: a fork's "forked" reply and its "exited" report read in one go, and a reply
that arrives after the fork that asked for it was cancelled. The zygote's process is a real child that leaves at
EOF on its stdin (the control socket), as the real one does, but never reads it.
"""
from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from typing import Awaitable, Callable, List, Tuple

from cfnrun.runtime.process import WorkerProcess
from cfnrun.runtime.sandbox import new_marker
from cfnrun.runtime.environment import FUNCTION_VARIABLES
from cfnrun.runtime.zygote import Zygote
from conftest import PATIENCE_S, pid_alive
from test_runtime import spec_for


EOF_WAIT = "import select; p = select.poll(); p.register(0, select.POLLRDHUP); p.poll()"


async def _with_zygote(test: Callable[[Zygote, socket.socket], Awaitable[None]]) -> None:
    parent_end, zygote_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    # It waits for the end of the control socket without reading it: a read would take the fork requests meant for
    # the test (both ends read the one socket, and whichever waits first gets a message).
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", EOF_WAIT, stdin=os.dup(zygote_end.fileno()), start_new_session=True
    )
    parent_end.setblocking(False)
    zygote = Zygote(process, parent_end, new_marker())
    try:
        await test(zygote, zygote_end)
    finally:
        zygote_end.close()
        await asyncio.wait_for(zygote.close(), PATIENCE_S)


async def _fork_request(zygote_end: socket.socket) -> dict:
    """The zygote's side: the next fork request (its three fds closed)."""
    message, fds, _, _ = await asyncio.to_thread(socket.recv_fds, zygote_end, 65536, 3)
    for fd in fds:
        os.close(fd)
    return dict(json.loads(message))


def _fds() -> Tuple[List[int], Callable[[], None]]:
    pipes = [os.pipe(), os.pipe()]
    fds = [pipes[0][0], pipes[0][1], pipes[1][0]]

    def close() -> None:
        for read, write in pipes:
            os.close(read)
            os.close(write)

    return fds, close


def test_a_fork_that_ended_before_its_reply_was_taken_is_seen_ended() -> None:
    async def test(zygote: Zygote, zygote_end: socket.socket) -> None:
        fds, close = _fds()
        forking = asyncio.ensure_future(zygote.fork(*fds, marker=new_marker()))
        assert (await _fork_request(zygote_end))["type"] == "fork"
        # Both in the socket before cfnrun reads either: the fork died at once (its lifeline closed, say).
        zygote_end.send(json.dumps({"type": "forked", "pid": 4242}).encode())
        zygote_end.send(json.dumps({"type": "exited", "pid": 4242, "returncode": -9}).encode())
        child = await asyncio.wait_for(forking, PATIENCE_S)
        close()
        assert child.pid == 4242
        assert await asyncio.wait_for(child.wait(), PATIENCE_S) == -9  # never waited for forever (serve's stop hung on it)

    asyncio.run(_with_zygote(test))


def test_the_reply_of_a_cancelled_fork_is_not_the_next_forks() -> None:
    async def test(zygote: Zygote, zygote_end: socket.socket) -> None:
        first_fds, close_first = _fds()
        cancelled = asyncio.ensure_future(zygote.fork(*first_fds, marker=new_marker()))
        await _fork_request(zygote_end)
        cancelled.cancel()  # a spare's start cancelled while the zygote forks it
        zygote_end.send(json.dumps({"type": "forked", "pid": 1111}).encode())
        second_fds, close_second = _fds()
        forking = asyncio.ensure_future(zygote.fork(*second_fds, marker=new_marker()))
        await _fork_request(zygote_end)
        zygote_end.send(json.dumps({"type": "forked", "pid": 2222}).encode())
        child = await asyncio.wait_for(forking, PATIENCE_S)
        close_first()
        close_second()
        assert cancelled.cancelled()
        assert child.pid == 2222
        for pid in (1111, 2222):  # both watched: the zygote's close waits for the end of each
            zygote_end.send(json.dumps({"type": "exited", "pid": pid, "returncode": 0}).encode())
        assert await asyncio.wait_for(child.wait(), PATIENCE_S) == 0

    asyncio.run(_with_zygote(test))


def test_a_worker_killed_the_moment_it_is_forked_ends_before_it_leads_its_own_group() -> None:
    # A real zygote. Serve's stop (or a reload) can tear down a worker whose fork was just answered, before the child
    # has called setsid: its process group is not yet its own, so killing the group alone missed it, and the child
    # waited for its load frame while the teardown waited for its end (serve's stop hung on it, 2026-11-28 CI).
    async def run() -> None:
        spec = spec_for("behaviours.handler")
        zygote = await Zygote.start(spec.python, str(spec.code_dir), str(spec.cwd), spec.env, ["json"], PATIENCE_S, FUNCTION_VARIABLES)
        try:
            for _ in range(20):  # each one a chance for the race; without the fix nearly every one lost it
                worker = await WorkerProcess.fork(spec, zygote)
                await asyncio.wait_for(worker.kill(), PATIENCE_S)
                assert worker.process.returncode == -9 and not pid_alive(worker.pid)
        finally:
            await asyncio.wait_for(zygote.close(), PATIENCE_S)

    asyncio.run(run())
