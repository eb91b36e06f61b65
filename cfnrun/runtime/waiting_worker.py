"""A worker's interpreter started before cfnrun knows its function: ``cfnrun invoke``'s first step.

A one-shot invoke waits for the worker's interpreter to start and import the provider. The early
start (``app/early_start.py``) can spawn it only once it has read the command line and the
project, after cfnrun's own first imports (dataclasses, typing, subprocess, the settings: ~135 M
instructions). So ``cfnrun/__main__.py`` starts an interpreter first, before anything else loads
(``os.posix_spawn``: not even ``subprocess``), running the worker package with
``--await-sandbox``: it starts, imports the worker's modules, then waits on its channel for its
sandbox while cfnrun loads. The early start then either hands it the spec it computed (the
working folder, the whole environment and the worker's options, in one frame before the load
frame: ``worker/handed_sandbox.py``), or discards it: killed and reaped.

It is handed only a spec it fits (``fits``): the same interpreter, and the same value (or
absence) of every variable read as a process starts (``launch.read_at_start``: the interpreter's,
the locale's, the dynamic loader's...), since the interpreter started with the environment
cfnrun had plus what ``lambda_environment`` sets that it reads then; any other variable
(Lambda's, the template's ``Environment``) is set in ``os.environ`` before the worker imports
anything of the provider. The environment block the process started with, which
``/proc/PID/environ`` shows, carries the sandbox marker but not those later variables.
"""
from __future__ import annotations

import _signal
import os
import sys

from cfnrun.runtime.launch import MARKER, SandboxEnds, read_at_start, started_environment, worker_launch

TYPE_CHECKING = False  # typing's own would import typing; type checkers read this name alike
if TYPE_CHECKING:
    from cfnrun.runtime.spec import WorkerSpec

AWAIT_SANDBOX = "--await-sandbox"  # the worker's option (``worker/start_worker.py``)
# ``cfnrun invoke``'s options declared ``early=False`` (``app/settings/invoke.py``; tests/unit/test_waiting_worker.py keeps the two
# the same): given one, the early start starts no worker, so no interpreter is started to wait either; nor for --help.
NOT_EARLY = frozenset({"--handler", "--schema", "--code-dir", "--print-request", "--watch", "--in-process", "--moto", "--lambda-endpoint"})
_SIGKILL = 9  # signal.SIGKILL, without the signal module's enums
# What subprocess.Popen's restore_signals resets in a child: the signals Python itself ignores (from _signal, loaded already).
_IGNORED_BY_PYTHON = tuple(getattr(_signal, name) for name in ("SIGPIPE", "SIGXFZ", "SIGXFSZ") if hasattr(_signal, name))


def worth_starting(argv: list[str]) -> bool:
    """Could ``cfnrun invoke ARGV``'s early start use a waiting interpreter? False where it surely starts no worker."""
    return not any(word == "--" or word == "--help" or word.partition("=")[0] in NOT_EARLY for word in argv)


class SpawnedChild:
    """A child process by its pid, as much of ``subprocess.Popen`` as its callers use: ``pid``, ``wait``, ``kill``."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def wait(self) -> int:
        """Reap it (blocking); its exit status as ``Popen.returncode`` gives it."""
        if self.returncode is None:
            try:
                _, status = os.waitpid(self.pid, 0)
            except ChildProcessError:  # reaped by someone else: its status is lost
                self.returncode = -_SIGKILL
            else:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, _SIGKILL)
            except ProcessLookupError:
                pass


class WaitingWorker:
    """A worker's interpreter waiting for its sandbox; ``hand`` or ``discard`` it, once."""

    def __init__(self, python: str, process: SpawnedChild, ends: SandboxEnds, environment: dict[str, str], cwd: str) -> None:
        self.python = python
        self.process = process
        self.ends = ends
        self.environment = environment  # what it started with
        self.cwd = cwd

    @classmethod
    def start(cls, python: str = sys.executable) -> WaitingWorker | None:
        """Start ``python`` running the worker package, waiting for its sandbox; None where it cannot be started so."""
        spawn = getattr(os, "posix_spawn", None)
        if spawn is None or not python:
            return None
        ends = SandboxEnds()
        worker_fds = (ends.worker_end.fileno(), ends.log_write, ends.lifeline_read)
        environment = {**started_environment(dict(os.environ)), MARKER: ends.marker}
        try:
            if min(worker_fds) < 3:  # a standard stream was closed: the fds would collide; the early start spawns as before
                ends.close_parent_ends()
                return None
            cwd = os.getcwd()
            inherited = _inheritable_fds()
            if inherited is None:  # cannot tell which fds it would inherit: the early start spawns as before
                ends.close_parent_ends()
                return None
            os.set_inheritable(ends.lifeline_read, True)  # this copy closes below; no other thread runs yet
            arguments = worker_launch(python) + ["--lifeline", str(ends.lifeline_read), AWAIT_SANDBOX]
            # As subprocess.Popen starts a worker: only its own fds, and the signals Python ignores back at their defaults.
            actions: list[tuple[int, ...]] = [(os.POSIX_SPAWN_CLOSE, fd) for fd in inherited]
            actions += [(os.POSIX_SPAWN_DUP2, worker_fds[0], 0), (os.POSIX_SPAWN_DUP2, ends.log_write, 1), (os.POSIX_SPAWN_DUP2, ends.log_write, 2)]
            pid = spawn(python, arguments, environment, file_actions=actions, setsid=True, setsigdef=_IGNORED_BY_PYTHON)
        except (OSError, NotImplementedError):  # not an interpreter, no setsid here...: the early start spawns as before
            ends.close_parent_ends()
            return None
        finally:
            ends.close_worker_ends()
        return cls(python, SpawnedChild(pid), ends, environment, cwd)

    def fits(self, spec: WorkerSpec) -> bool:
        """Would this interpreter, started as it was, be the one ``spec``'s worker is started as?"""
        if spec.python != self.python:
            return False
        wanted = spec.env
        if any(read_at_start(name) and self.environment.get(name) != wanted.get(name) for name in {*self.environment, *wanted}):
            return False
        # The interpreter made its path's relative entries absolute against the folder it started in.
        path = wanted.get("PYTHONPATH") or ""
        relative = any(not os.path.isabs(entry) for entry in path.split(os.pathsep)) if path else False
        return not relative or os.path.realpath(spec.cwd) == os.path.realpath(self.cwd)

    def sandbox_frame(self, spec: WorkerSpec) -> bytes:
        """The frame that makes it ``spec``'s worker: its working folder, its environment (marker included), its options."""
        from cfnrun.runtime.spec import worker_options
        from cfnrun.runtime.worker.protocol import encode_frame

        environment = {**spec.env, MARKER: self.ends.marker}
        return encode_frame({"type": "sandbox", "cwd": str(spec.cwd), "environment": environment, "options": worker_options(spec)})

    def discard(self) -> None:
        """Kill it and reap it; close this side's ends."""
        self.process.kill()
        self.process.wait()
        self.ends.close_parent_ends()


def _inheritable_fds() -> list[int] | None:
    """The fds above 2 a child would inherit from this process (``subprocess.Popen`` closes them); None when unknown."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        inheritable = []
        for name in names:
            try:
                if int(name) > 2 and os.get_inheritable(int(name)):
                    inheritable.append(int(name))
            except (ValueError, OSError):  # the listing's own fd, closed by now
                continue
        return inheritable
    return None
