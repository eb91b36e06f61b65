"""A function's zygote: one process with the provider's dependencies imported, forking new workers.

A fresh worker imports the provider's dependencies (boto3, the support library, ...) before
its own code: about the provider's whole import time. The zygote imports them once; each new
worker is a fork of it (a few milliseconds) that then imports only the provider's own modules.
Pools use it for replacements after a crash or kill, for scaling up under concurrency and for
reloads (``pool.py``).

A forked worker is a sandbox like a spawned one (``process.py``): its own session and process
group, its own channel, log pipe and lifeline (passed to the zygote with SCM_RIGHTS), its own
``CFNRUN_SANDBOX`` marker, and a parent-death signal. Its parent is the zygote, so its exit
status reaches cfnrun as a message from the zygote (``ForkedProcess``).

One zygote can serve several functions (``zygote_share.py``): those whose environments differ
only in the variables that name the function (``FUNCTION_VARIABLES``). It starts with the
environment of the function that needed it first, each of those variables padded to
``VARIABLE_ROOM`` bytes; each fork is sent its own function's values, which it takes before it
loads (``worker/fork_server.py`` says what /proc/PID/environ then shows).

Forking is unsafe where the zygote's process has more than one thread after importing the
dependencies (a lock held by another thread stays locked in the child), on macOS, and with a
debugger listening; there ``ForkUnavailable`` says why and the pool starts fresh processes.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
from typing import Dict, List, Mapping, Optional, Sequence

from cfnrun.runtime import spec as specs
from cfnrun.runtime.sandbox import MARKER, kill_group, kill_marked, kill_worker, new_marker

_PACKET = 65536
# The bytes each variable that names the function has in a zygote's environment block: a fork's own value,
# written there in place, must fit (Lambda's function names are at most 64 characters, its log groups 512).
VARIABLE_ROOM = 600


class ForkUnavailable(Exception):
    """Workers of this function cannot be forked from a zygote; the message says why."""


def fork_unsafe_reason(python: str, debug_port: Optional[int]) -> Optional[str]:
    """Why a zygote must not be used for these settings, before starting one; None where it may."""
    if not sys.platform.startswith("linux"):
        return f"forking a Python process is unsafe on {sys.platform}"
    if debug_port is not None:
        return "a debugger listens in each worker"
    if not os.path.exists(python):
        return f"{python} is not a file"
    return None


class ForkedProcess:
    """What ``WorkerProcess`` needs of its process, for a worker the zygote forked."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: Optional[int] = None
        self._exited: "asyncio.Future[int]" = asyncio.get_running_loop().create_future()

    def exited(self, returncode: int) -> None:
        if not self._exited.done():
            self.returncode = returncode
            self._exited.set_result(returncode)

    async def wait(self) -> int:
        return await asyncio.shield(self._exited)


class Zygote:
    def __init__(self, process: asyncio.subprocess.Process, control: socket.socket, marker: str) -> None:
        self._process = process
        self._control = control
        self._marker = marker
        self._loop = asyncio.get_running_loop()
        self._replies: "asyncio.Queue[Dict[str, object]]" = asyncio.Queue()
        self._children: Dict[int, ForkedProcess] = {}
        self._ended_unwatched: Dict[int, int] = {}  # forks whose end was reported before their "forked" reply was taken
        self._forking = asyncio.Lock()
        self._closing = False
        self._reader = asyncio.ensure_future(self._read())
        self.rooms: Dict[str, int] = {}  # the function variables a fork may carry its own values of, and their bytes

    @property
    def pid(self) -> int:
        return self._process.pid

    @classmethod
    async def start(
        cls,
        python: str,
        code_dir: str,
        cwd: str,
        env: Mapping[str, str],
        modules: List[str],
        timeout_s: float,
        function_variables: Sequence[str] = (),
    ) -> "Zygote":
        """Start a zygote and import ``modules`` in it; ForkUnavailable when it cannot fork safely.

        ``function_variables``: those of ``env`` that each fork may replace with its own value (``fork``).
        """
        parent_end, zygote_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        marker = new_marker()
        lengths = {name: len(os.fsencode(env[name])) for name in function_variables if name in env}
        padded = {name: env[name] + " " * (VARIABLE_ROOM - length) for name, length in lengths.items()}
        try:
            process = await asyncio.create_subprocess_exec(
                *specs.worker_launch(python), "--code-dir", code_dir, "--zygote",
                stdin=zygote_end.fileno(),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
                cwd=cwd,
                env={**env, **padded, MARKER: marker},
                start_new_session=True,
            )
        except BaseException:
            parent_end.close()
            raise
        finally:
            zygote_end.close()
        parent_end.setblocking(False)
        zygote = cls(process, parent_end, marker)
        zygote.rooms = {name: max(length, VARIABLE_ROOM) for name, length in lengths.items()}
        try:
            zygote._send({"type": "preload", "modules": modules, "variables": lengths})
            reply = await asyncio.wait_for(zygote._replies.get(), timeout_s)
        except BaseException:  # called off or out of time while importing: killed, not asked to leave (it reads nothing now)
            kill_group(process.pid)
            await zygote.close()
            raise
        if reply.get("type") != "preloaded":
            await zygote.close()
            raise ForkUnavailable("the zygote ended while importing the dependencies")
        threads = reply.get("threads")
        if threads != 1:
            await zygote.close()
            raise ForkUnavailable(f"importing the dependencies started {threads} threads, and a fork copies none of them")
        return zygote

    @property
    def alive(self) -> bool:
        return self._process.returncode is None and not self._closing

    async def fork(
        self, channel: int, log_write: int, lifeline_read: int, marker: str, env: Optional[Mapping[str, str]] = None
    ) -> ForkedProcess:
        """A new worker with these fds (sent, not closed here); it waits for its load frame.

        ``env``: the worker's environment, whose function variables (``rooms``) it carries instead of the zygote's.
        """
        if len(marker) != len(self._marker):
            raise ValueError("a forked worker's marker must be as long as the zygote's")  # overwritten in place
        own = {name: env[name] for name in self.rooms if name in env} if env is not None else {}
        if any(len(os.fsencode(value)) > self.rooms[name] for name, value in own.items()):
            raise ValueError("a forked worker's function variables must fit in the zygote's room for them")
        async with self._forking:
            if not self.alive:
                raise ForkUnavailable("the zygote has ended")
            message = json.dumps({"type": "fork", "marker": marker, "environment": own}).encode()
            socket.send_fds(self._control, [message], [channel, log_write, lifeline_read])
            # Once asked, the reply is taken and its child watched even if the caller is cancelled meanwhile: a reply
            # left in the queue would answer the next fork with another fork's process, whose end was reported already.
            taking = asyncio.ensure_future(self._take_forked())
            taking.add_done_callback(_retrieved)
            return await asyncio.shield(taking)

    async def _take_forked(self) -> ForkedProcess:
        reply = await self._replies.get()
        if reply.get("type") == "ended":
            self._replies.put_nowait(reply)  # for every reply still awaited
        if reply.get("type") != "forked":
            raise ForkUnavailable(f"the zygote did not fork: {reply.get('reason') or 'it has ended'}")
        child = ForkedProcess(int(str(reply["pid"])))
        returncode = self._ended_unwatched.pop(child.pid, None)
        if returncode is not None:  # it ended before its reply was taken (both read in one go)
            child.exited(returncode)
        elif self._reader.done():  # the zygote has gone (``_read``): no end of this fork will be reported
            kill_worker(child.pid)
            child.exited(-9)
        else:
            self._children[child.pid] = child
        return child

    async def close(self) -> None:
        """End the zygote once every worker it forked has ended (it is their parent)."""
        self._closing = True
        if self._children:
            await asyncio.gather(*(child.wait() for child in list(self._children.values())))
        with contextlib.suppress(OSError):
            self._control.shutdown(socket.SHUT_WR)  # EOF: the zygote leaves
        try:
            await asyncio.wait_for(self._process.wait(), 2.0)
        except asyncio.TimeoutError:
            pass
        kill_group(self._process.pid)
        await self._process.wait()
        try:
            await asyncio.wait_for(asyncio.shield(self._reader), 1.0)
        except asyncio.TimeoutError:
            self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        self._control.close()
        await self._loop.run_in_executor(None, kill_marked, self._marker)

    def _send(self, message: Dict[str, object]) -> None:
        self._control.send(json.dumps(message).encode())

    async def _read(self) -> None:
        try:
            while True:
                try:
                    packet = await self._loop.sock_recv(self._control, _PACKET)
                except OSError:
                    packet = b""
                if not packet:
                    break
                message = json.loads(packet)
                if message.get("type") == "exited":
                    pid, returncode = int(message["pid"]), int(message["returncode"])
                    child = self._children.pop(pid, None)
                    if child is not None:
                        child.exited(returncode)
                    else:  # its "forked" reply is still on its way to ``_take_forked``
                        self._ended_unwatched[pid] = returncode
                else:
                    self._replies.put_nowait(message)
        finally:
            # The zygote is gone: the kernel kills what it forked (parent-death signal); nobody reaps them now.
            self._closing = True
            for child in self._children.values():
                kill_worker(child.pid)
                child.exited(-9)
            self._children.clear()
            self._replies.put_nowait({"type": "ended"})


def _retrieved(taking: "asyncio.Future[ForkedProcess]") -> None:
    """A fork's reply taken for a caller that was cancelled: its error (the zygote ended) is nobody's to raise."""
    if not taking.cancelled():
        taking.exception()
