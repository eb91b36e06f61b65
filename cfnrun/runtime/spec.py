"""What a worker is started with: its spec, the command and environment, the fds of its sandbox.

Light on purpose (no event loop, no worker module): ``app/early_start.py`` starts a worker from
here (or hands its spec to the interpreter ``launch.py``'s ``WaitingWorker`` started even earlier)
before the rest of cfnrun loads; ``process.py`` starts every other worker the same way.
"""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List, Mapping, Optional, Tuple

from cfnrun.model.faults import FaultRule
from cfnrun.model.template import FunctionSource, FunctionSpec
from cfnrun.runtime.environment import DEFAULT_ACCOUNT_ID, DEFAULT_REGION, lambda_environment
from cfnrun.runtime.launch import MARKER, SandboxEnds, worker_launch


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


def worker_options(spec: WorkerSpec) -> List[str]:
    """The worker's own options: its code folder, a debugger if asked for (its lifeline aside)."""
    arguments = ["--code-dir", str(spec.code_dir)]
    if spec.debug_port is not None:
        arguments += ["--debug-port", str(spec.debug_port)] + (["--debug-wait"] if spec.debug_wait else [])
    return arguments


def worker_command(spec: WorkerSpec, ends: SandboxEnds) -> List[str]:
    """The worker's command line: the script, its code folder, its lifeline, a debugger if asked for."""
    return worker_launch(spec.python) + worker_options(spec) + ["--lifeline", str(ends.lifeline_read)]


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
