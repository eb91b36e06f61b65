"""What a worker is started with: its spec, the command and environment, the fds of its sandbox.

Light on purpose (no event loop, no worker module): ``app/early_start.py`` starts a one-shot
invoke's worker from here before the rest of cfnrun loads; ``process.py`` starts every
other worker the same way.
"""
from __future__ import annotations

import _socket
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, List, Mapping, Optional, Tuple

from cfnrun.model.faults import FaultRule
from cfnrun.model.template import FunctionSource, FunctionSpec
from cfnrun.runtime.environment import DEFAULT_ACCOUNT_ID, DEFAULT_REGION, lambda_environment
from cfnrun.runtime.sandbox import MARKER, new_marker

if TYPE_CHECKING:
    import socket

WORKER_SCRIPT = (Path(__file__).parent / "worker" / "start_worker.py").resolve()
# Runs the worker package from its cached bytecode (a script named on the command line is compiled afresh
# each time: ~10 ms of every worker's start), as a package of its own name, ``cfnrun_worker``, whose
# modules import each other relatively: the provider's interpreter may not have cfnrun installed, and
# none of the worker's module names can hide a provider's own. Drops the '' that -c put first on
# sys.path: the provider sees neither the current folder nor cfnrun's. The entry module's path, the
# argument after the code, is what names a worker (and a zygote) in ps and /proc/PID/cmdline.
_LAUNCH = (
    "import sys, os, importlib, importlib.util as u\n"
    "script = sys.argv[1]; folder = os.path.dirname(script)\n"
    "if sys.path and sys.path[0] == '': del sys.path[0]\n"  # not there under PYTHONSAFEPATH
    "init = os.path.join(folder, '__init__.py')\n"
    "spec = u.spec_from_file_location('cfnrun_worker', init, submodule_search_locations=[folder])\n"
    "sys.modules['cfnrun_worker'] = package = u.module_from_spec(spec); spec.loader.exec_module(package)\n"
    "worker = importlib.import_module('cfnrun_worker.' + os.path.basename(script)[:-3]); sys.exit(worker.main(sys.argv))"
)


def worker_launch(python: str) -> List[str]:
    """The start of a worker's (or a zygote's) command line: the interpreter running the worker package, unbuffered."""
    return [python, "-u", "-c", _LAUNCH, str(WORKER_SCRIPT)]


@dataclass(frozen=True)
class WorkerSpec:
    """Everything needed to start a sandbox for one function."""

    function_name: str
    handler: str
    code_dir: Path
    cwd: Path
    env: Mapping[str, str]
    memory_mb: int = 128
    python: str = sys.executable
    init_timeout_s: float = 30.0
    region: str = DEFAULT_REGION
    account_id: str = DEFAULT_ACCOUNT_ID
    debug_port: Optional[int] = None
    debug_wait: bool = False
    memory_limit: bool = True  # kill a worker whose real memory exceeds memory_mb

    @property
    def function_arn(self) -> str:
        from cfnrun.runtime.worker.lambda_context import function_arn  # the worker's: loaded once the worker is on its way

        return function_arn(self.region, self.account_id, self.function_name)


@dataclass(frozen=True)
class RuntimeSettings:
    region: str = DEFAULT_REGION
    account_id: str = DEFAULT_ACCOUNT_ID
    workers: int = 1
    log_level: str = "INFO"
    python: str = sys.executable
    standby: bool = False  # keep a spare worker with dependencies imported, for fast reloads and crash replacements
    debug_port: Optional[int] = None  # first debugpy port; one per function, in template order
    debug_wait: bool = False
    memory_limit: bool = True  # kill a worker over its function's MemorySize
    aws_endpoint: Optional[str] = None  # where the handlers' AWS calls go (--aws-endpoint, --moto)
    faults: Tuple[FaultRule, ...] = ()  # --inject: faults in the handlers' AWS calls


def worker_spec(project: FunctionSource, function: FunctionSpec, settings: RuntimeSettings) -> WorkerSpec:
    debug_port = None
    if settings.debug_port is not None:
        debug_port = settings.debug_port + list(project.functions).index(function.logical_id)
    return WorkerSpec(
        function_name=function.function_name or function.logical_id,
        handler=function.handler,
        code_dir=function.code_dir or project.code_dir,
        cwd=project.root,
        env=lambda_environment(
            project, function, settings.region, settings.log_level, aws_endpoint=settings.aws_endpoint, faults=settings.faults
        ),
        memory_mb=function.memory_mb,
        python=settings.python,
        region=settings.region,
        account_id=settings.account_id,
        debug_port=debug_port,
        debug_wait=settings.debug_wait,
        memory_limit=settings.memory_limit,
    )


class SandboxEnds:
    """The fds and marker of one new sandbox: the channel socket pair, the log pipe, the lifeline pipe.

    Nothing is inheritable: only the worker (given its ends explicitly) and this parent hold them. The pair is
    made with ``_socket``, and the parent's end becomes a ``socket.socket`` when first asked for: the early
    start spawns a worker before the ``socket`` module (its enums: ~15 M instructions) is imported.
    """

    def __init__(self) -> None:
        self._parent, self.worker_end = _socket.socketpair()
        self._parent_end: Optional["socket.socket"] = None
        self.log_read, self.log_write = os.pipe()
        self.lifeline_read, self.lifeline_write = os.pipe()
        self.marker = new_marker()

    @property
    def parent_end(self) -> "socket.socket":
        """The parent's end of the channel socket pair."""
        if self._parent_end is None:
            import socket

            self._parent_end = socket.socket(fileno=self._parent.detach())
        return self._parent_end

    def close_worker_ends(self) -> None:
        self.worker_end.close()
        os.close(self.log_write)
        os.close(self.lifeline_read)

    def close_parent_ends(self) -> None:
        (self._parent_end or self._parent).close()
        os.close(self.log_read)
        os.close(self.lifeline_write)


def worker_command(spec: WorkerSpec, ends: SandboxEnds) -> List[str]:
    """The worker's command line: the script, its code folder, its lifeline, a debugger if asked for."""
    arguments = worker_launch(spec.python) + ["--code-dir", str(spec.code_dir)]
    if spec.debug_port is not None:
        arguments += ["--debug-port", str(spec.debug_port)] + (["--debug-wait"] if spec.debug_wait else [])
    return arguments + ["--lifeline", str(ends.lifeline_read)]


def start_worker_process(spec: WorkerSpec, ends: SandboxEnds) -> "subprocess.Popen[bytes]":
    """Start the worker's process (its own session, ``ends``' worker side as its fds); it loads nothing yet."""
    return subprocess.Popen(
        worker_command(spec, ends),
        stdin=ends.worker_end.fileno(),
        stdout=ends.log_write,
        stderr=ends.log_write,
        pass_fds=(ends.lifeline_read,),
        cwd=str(spec.cwd),
        env={**spec.env, MARKER: ends.marker},
        start_new_session=True,
    )


def new_log_stream_name() -> str:
    return f"cfnrun/[$LATEST]{os.urandom(8).hex()}"


def load_frame(spec: WorkerSpec, log_stream_name: str) -> bytes:
    """The frame that tells a started worker to import its handler, with the identity its context reports."""
    from cfnrun.runtime.worker.lambda_context import sandbox_identity  # the worker's: loaded once the worker is on its way
    from cfnrun.runtime.worker.protocol import encode_frame

    identity = sandbox_identity(spec.function_name, spec.function_arn, spec.memory_mb, log_stream_name)
    return encode_frame({"type": "load", "handler": spec.handler, "identity": identity})
