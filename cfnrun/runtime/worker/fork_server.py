"""The zygote's side: a process with the provider's dependencies imported that forks new workers.

``--zygote``: fd 0 is a SOCK_SEQPACKET socket to the parent (``runtime/zygote.py``), one JSON
message per packet. The parent sends ``{"type": "preload", "modules": [...]}`` (answered
``{"type": "preloaded", "threads": N}``: forking is only safe while N is 1), then any number
of ``{"type": "fork", "marker": TOKEN}`` messages, each carrying three fds (the new worker's
channel socket, its log pipe's write end, its lifeline's read end). Each is answered
``{"type": "forked", "pid": P}``; when a forked worker ends, ``{"type": "exited", "pid": P,
"returncode": R}`` follows (the zygote is its parent, so only the zygote can reap it). EOF on
fd 0 ends the zygote; the kernel then kills the workers it forked (parent-death signal), as it
kills the zygote when cfnrun ends.
"""
from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import threading
import traceback
from typing import List

from .botocore_sessions import prepare_sessions
from .channel import take_over_fds
from .lifecycle import keep_loaded_objects_out_of_collections, preload, run
from .lifeline import die_with_parent, killed_with_parent
from .protocol import encode_json

ZYGOTE_FDS = 3
_PACKET = 65536


def serve_forks(code_dir: str) -> int:
    """Preload the dependencies, then fork a worker per request until the parent closes fd 0."""
    killed_with_parent()
    control = socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    request = json.loads(control.recv(_PACKET) or b"{}")
    if request.get("type") != "preload":
        return 0
    preload(request["modules"])
    prepare_sessions()  # the workers forked from here start with botocore's registration work done
    keep_loaded_objects_out_of_collections()
    control.send(encode_json({"type": "preloaded", "threads": _thread_count()}))
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)

    while True:
        ready, _, _ = select.select([control.fileno(), wake_read], [], [])
        if wake_read in ready:
            os.read(wake_read, 4096)
            _report_exits(control)
        if control.fileno() not in ready:
            continue
        message, fds, _, _ = socket.recv_fds(control, _PACKET, ZYGOTE_FDS)
        if not message:
            return 0
        fork = json.loads(message)
        if len(fds) != ZYGOTE_FDS:
            for fd in fds:
                os.close(fd)
            control.send(encode_json({"type": "refused", "reason": f"{len(fds)} fds came with the fork request"}))
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _become_worker(code_dir, fork["marker"], fds, [control.fileno(), wake_read, wake_write])
        for fd in fds:
            os.close(fd)
        control.send(encode_json({"type": "forked", "pid": pid}))


def _report_exits(control: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        control.send(encode_json({"type": "exited", "pid": pid, "returncode": os.waitstatus_to_exitcode(status)}))


def _thread_count() -> int:
    """Threads in this process, C-level ones included where /proc tells."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _become_worker(code_dir: str, marker: str, fds: List[int], zygote_fds: List[int]) -> None:
    """In a forked child: drop the zygote's fds, take the worker's, become a sandbox of its own; never returns."""
    status = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in zygote_fds:
            os.close(fd)
        os.setsid()  # its own session and process group, as a spawned worker has
        channel_fd, log_fd, lifeline = fds
        os.dup2(channel_fd, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.close(channel_fd)
        os.close(log_fd)
        _take_marker(marker)
        die_with_parent(lifeline)
        status = run(code_dir, take_over_fds())
    except BaseException:  # noqa: B902 - a forked child must never return into the zygote's loop
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)


def _take_marker(marker: str) -> None:
    """Carry ``marker`` as CFNRUN_SANDBOX instead of the zygote's, also where /proc/PID/environ shows it.

    /proc shows the environment block the process started with, which a fork copies: the
    zygote's marker is overwritten there in place (the parent makes both the same length),
    then set the usual way for the processes the handler starts.
    """
    name = "CFNRUN_SANDBOX"
    old = os.environ.get(name, "")
    if sys.platform.startswith("linux") and old and len(old) == len(marker):
        import ctypes

        try:
            environ = ctypes.POINTER(ctypes.c_void_p).in_dll(ctypes.CDLL(None), "environ")
            entry = f"{name}={old}".encode()
            index = 0
            while environ[index]:
                address = environ[index]
                if ctypes.string_at(address) == entry:
                    ctypes.memmove(address + len(name) + 1, marker.encode(), len(marker))
                    break
                index += 1
        except (OSError, ValueError):
            pass
    os.environ[name] = marker
