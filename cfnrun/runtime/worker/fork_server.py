"""The zygote's side: a process with the provider's dependencies imported that forks new workers.

``--zygote``: fd 0 is a SOCK_SEQPACKET socket to the parent (``runtime/zygote.py``), one JSON
message per packet. The parent sends ``{"type": "preload", "modules": [...], "variables": {NAME:
LENGTH}}`` (answered ``{"type": "preloaded", "threads": N}``: forking is only safe while N is 1),
then any number of ``{"type": "fork", "marker": TOKEN, "environment": {NAME: VALUE}}`` messages,
each carrying three fds (the new worker's channel socket, its log pipe's write end, its
lifeline's read end). Each is answered
``{"type": "forked", "pid": P}``; when a forked worker ends, ``{"type": "exited", "pid": P,
"returncode": R}`` follows (the zygote is its parent, so only the zygote can reap it). EOF on
fd 0 ends the zygote; the kernel then kills the workers it forked (parent-death signal), as it
kills the zygote when cfnrun ends.

One zygote may fork the workers of several functions of one code folder, whose environments
differ only in the variables that name the function (``AWS_LAMBDA_FUNCTION_NAME``, ``_HANDLER``,
...): a fork request carries the worker's own values, and the child takes them before it loads.
The parent started the zygote with each of those values padded with spaces to a fixed room
(``variables`` gives their real lengths); the zygote cuts each back to its length before
importing anything, so the dependencies it imports see the values of the function it was
started for, never the padding.
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
from typing import Dict, List, Mapping, Tuple

from .botocore_sessions import prepare_sessions
from .channel import take_over_fds
from .lifecycle import keep_loaded_objects_out_of_collections, no_collections_while_loading, preload, run
from .lifeline import die_with_parent, killed_with_parent
from .protocol import encode_json

ZYGOTE_FDS = 3
_PACKET = 65536
_MARKER = "CFNRUN_SANDBOX"  # runtime/sandbox.py's MARKER (this package cannot import cfnrun)
# Where a variable's value sits in the environment block this process started with: its address, and its room in bytes.
Slots = Dict[str, Tuple[int, int]]


def serve_forks(code_dir: str) -> int:
    """Preload the dependencies, then fork a worker per request until the parent closes fd 0."""
    no_collections_while_loading()
    killed_with_parent()
    control = socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    request = json.loads(control.recv(_PACKET) or b"{}")
    if request.get("type") != "preload":
        return 0
    slots = _environment_slots(dict(request.get("variables") or {}))
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
            environment = {**dict(fork.get("environment") or {}), _MARKER: fork["marker"]}
            _become_worker(code_dir, environment, slots, fds, [control.fileno(), wake_read, wake_write])
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


def _become_worker(code_dir: str, environment: Mapping[str, str], slots: Slots, fds: List[int], zygote_fds: List[int]) -> None:
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
        _take_environment(environment, slots)
        die_with_parent(lifeline)
        status = run(code_dir, take_over_fds())
    except SystemExit as leaving:  # the handler's sys.exit(n): the status n, as a spawned worker's interpreter ends
        status = exit_status(leaving.code)
    except BaseException:  # noqa: B902 - a forked child must never return into the zygote's loop
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)


def _environment_slots(lengths: Mapping[str, int]) -> Slots:
    """Where the sandbox marker and the padded variables ``lengths`` sit in this process's first environment block.

    Each padded value is cut back to its real length (in bytes), both in that block (the padding
    becomes NULs) and in ``os.environ``. The marker's room is its own length: a fork's marker is
    as long as the zygote's. Empty where the block cannot be reached (not Linux, no libc).
    """
    slots: Slots = {}
    if not sys.platform.startswith("linux"):
        return slots
    import ctypes

    wanted = {_MARKER, *lengths}
    try:
        environ = ctypes.POINTER(ctypes.c_void_p).in_dll(ctypes.CDLL(None), "environ")
        index = 0
        while environ[index] and len(slots) < len(wanted):
            address = int(environ[index])
            entry, _, value = ctypes.string_at(address).partition(b"=")
            key = os.fsdecode(entry)
            if key in wanted and key not in slots:
                slots[key] = (address + len(entry) + 1, len(value))
            index += 1
    except (OSError, ValueError):
        return {}
    for name, length in lengths.items():
        if name in slots and 0 <= length <= slots[name][1]:
            address, room = slots[name]
            real = ctypes.string_at(address, length)
            ctypes.memset(address + length, 0, room - length)
            os.environ[name] = os.fsdecode(real)
    return slots


def _take_environment(values: Mapping[str, str], slots: Slots) -> None:
    """Carry ``values`` (the worker's marker, and the variables that name its function) instead of the zygote's.

    ``os.environ`` (and so the C library's, and the processes the handler starts) gets them the
    usual way. /proc/PID/environ shows the environment block the process started with, which a
    fork copies; each value is also written there in place, in the room the zygote's own has
    (``_environment_slots``), so a fork's /proc/PID/environ reads ``NAME=its own value``, then
    NUL bytes up to that room, and every other variable as the zygote had it (the same as the
    function's own: the zygote is shared only between such functions). A value longer than its
    room (the parent never sends one) leaves the zygote's value in /proc, the marker's too.
    """
    for name, value in values.items():
        raw = os.fsencode(value)
        if name in slots and len(raw) <= slots[name][1]:
            import ctypes

            address, room = slots[name]
            ctypes.memmove(address, raw + bytes(room - len(raw)), room)
        os.environ[name] = value


def exit_status(code: object) -> int:
    """The status Python's interpreter ends with for ``sys.exit(code)``: None is 0, an int itself, anything else is
    written to stderr and ends with 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
