"""Everything a worker starts belongs to its sandbox, and ends with it.

Each worker carries a marker in its environment (``CFNRUN_SANDBOX=<token>``) that every
process it starts inherits, even one that leaves the worker's process group (setsid) or
is re-parented (double fork). When a worker ends, its process group is killed and then
``/proc`` is swept for processes of this user that carry the marker. The token is random
per worker, so the sweep never touches a process this parent did not start.

Without ``/proc`` (macOS) only the process group is killed: a daemon that calls setsid
outlives its worker there.
"""
from __future__ import annotations

import os
import select
import signal
import time
from typing import List

from cfnrun.runtime.launch import MARKER, new_marker

__all__ = ["MARKER", "kill_group", "kill_marked", "kill_worker", "new_marker"]
_PROC = "/proc"
_SWEEP_ROUNDS = 10  # a process forking while it is swept is caught in a later round
_DEATH_WAIT_S = 1.0  # how long a SIGKILLed process may take to die before the sweep goes on


def kill_group(pgid: int) -> None:
    """SIGKILL a worker's process group; safe after the worker itself is gone.

    A pid is not reused while a process group of that number has members, so this
    reaches only what the worker left behind.
    """
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_worker(pid: int) -> None:
    """SIGKILL a worker that has not been reaped yet, and its process group.

    The worker itself is signalled by its pid first: a worker a zygote has just forked leads no
    group until its own setsid, so killing the group alone could miss it, and it would then wait
    for a request that never comes. (A fork's pid is reaped by the zygote, whose word of it may
    still be on its way; the pid is not reused in that moment in practice.)
    """
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    kill_group(pid)


def kill_marked(marker: str) -> int:
    """SIGKILL every process of this user that carries ``marker``; how many were killed."""
    if not os.path.isdir(_PROC):
        return 0
    needle = f"\0{MARKER}={marker}\0".encode()
    killed = 0
    for _ in range(_SWEEP_ROUNDS):
        found = _marked(needle)
        if not found:
            break
        for pid in found:
            killed += _kill(pid, needle)
    return killed


def _marked(needle: bytes) -> List[int]:
    uid = os.getuid()
    me = os.getpid()
    found = []
    for entry in os.scandir(_PROC):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            if needle in _environ(entry.name):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _environ(pid: str) -> bytes:
    with open(f"{_PROC}/{pid}/environ", "rb") as environ:
        return b"\0" + environ.read()


def _kill(pid: int, needle: bytes) -> int:
    """Kill ``pid`` if it still carries the marker (a pidfd pins it against pid reuse), and wait until it has died.

    SIGKILL is delivered asynchronously: without the wait, the crash answer could reach the
    caller while what the handler started still runs.
    """
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):
        handle = -1
    try:
        if handle >= 0 and needle not in _environ(str(pid)):
            return 0
        if handle >= 0:
            signal.pidfd_send_signal(handle, signal.SIGKILL)
            select.select([handle], [], [], _DEATH_WAIT_S)  # a pidfd is readable once its process has exited
        else:
            os.kill(pid, signal.SIGKILL)
            _wait_dead(pid)
        return 1
    except OSError:
        return 0
    finally:
        if handle >= 0:
            os.close(handle)


def _wait_dead(pid: int) -> None:
    """Without a pidfd: poll until ``pid`` is a zombie or gone (bounded by _DEATH_WAIT_S)."""
    deadline = time.monotonic() + _DEATH_WAIT_S
    while time.monotonic() < deadline:
        try:
            with open(f"{_PROC}/{pid}/stat", "rb") as stat:
                if stat.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    return
        except (OSError, IndexError):
            return
        time.sleep(0.001)
