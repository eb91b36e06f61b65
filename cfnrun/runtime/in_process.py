"""Run the handler inside the cfnrun process, so breakpoint(), pdb and IDE debuggers just work.

The handler is loaded and called through the worker's own ``HandlerHost``, so init errors,
function errors, marshalling and the log format are a worker's. What differs: no isolation
and no way to cut a call short. A call over its budget is reported after it returns, unless
a debugger was involved, in which case budgets are suspended and the outcome says so. The
handler's stdout goes to stderr, so ``--json`` output stays clean.

Everything this mode changes in cfnrun's own process for the handler (environment, working
folder, sys.path, the root logger, sys.breakpointhook, the provider's modules) is put back
by ``close``.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import time
import uuid
from typing import Any, Callable, List, Optional, Sequence

from cfnrun.model.faults import FaultRule
from cfnrun.model.project import Project
from cfnrun.model.template import FunctionSpec
from cfnrun.runtime.environment import lambda_environment
from cfnrun.runtime.lambda_error import LambdaError
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.process import WorkerInitError
from cfnrun.runtime.worker.host import HandlerHost
from cfnrun.runtime.worker.lambda_context import LambdaContext, deadline_ms, function_arn, sandbox_identity
from cfnrun.runtime.worker.loading import InitError

IDE_DEBUGGERS = ("pydevd", "debugpy")


class _ProcessState:
    """The parts of this process in-process mode changes, as they were before it did."""

    def __init__(self) -> None:
        root = logging.getLogger()
        self._environ = dict(os.environ)
        self._cwd = os.getcwd()
        self._path = list(sys.path)
        self._log_handlers: List[logging.Handler] = list(root.handlers)
        self._log_level = root.level
        self._breakpointhook: Callable[..., Any] = sys.breakpointhook

    def restore(self) -> None:
        os.environ.clear()
        os.environ.update(self._environ)
        os.chdir(self._cwd)
        sys.path[:] = self._path
        root = logging.getLogger()
        root.handlers[:] = self._log_handlers
        root.setLevel(self._log_level)
        sys.breakpointhook = self._breakpointhook


class _DebuggerWatch:
    """Notices a debugger: an IDE's tracer, or breakpoint() called by the handler.

    breakpoint() with the standard hook opens pdb in the frame that called it, the
    handler's, rather than in this hook's.
    """

    def __init__(self) -> None:
        self.breakpoint_called = False
        self._previous = sys.breakpointhook

    def hook(self, *args: Any, **kwargs: Any) -> Any:
        self.breakpoint_called = True
        if self._previous is sys.__breakpointhook__ and not os.environ.get("PYTHONBREAKPOINT"):
            import pdb

            pdb.Pdb().set_trace(sys._getframe(1))
            return None
        return self._previous(*args, **kwargs)

    def present(self) -> bool:
        return self.breakpoint_called or sys.gettrace() is not None or any(name in sys.modules for name in IDE_DEBUGGERS)


def _exit_error(exited: SystemExit) -> LambdaError:
    """What a worker's exit would report, for a handler that called sys.exit here."""
    code = exited.code
    status = code if isinstance(code, int) else (0 if code is None else 1)
    return LambdaError("Runtime.ExitError", f"handler called sys.exit({code!r}) (exit status {status})")


class InProcessFunction:
    def __init__(
        self, project: Project, function: FunctionSpec, region: str, account_id: str, log_level: str,
        aws_endpoint: Optional[str] = None, faults: Sequence[FaultRule] = (),
    ) -> None:
        self.function = function
        name = function.function_name or function.logical_id
        arn = function_arn(region, account_id, name)
        self._identity = sandbox_identity(name, arn, function.memory_mb, "cfnrun/in-process")
        self._saved: Optional[_ProcessState] = _ProcessState()
        os.environ.update(lambda_environment(project, function, region, log_level, base={}, aws_endpoint=aws_endpoint, faults=faults))
        os.chdir(project.root)
        if str(project.code_dir) not in sys.path:
            sys.path.insert(0, str(project.code_dir))
        self._host = HandlerHost(str(project.code_dir), log_level, sys.stderr)
        self._debugger = _DebuggerWatch()
        sys.breakpointhook = self._debugger.hook

    async def warm(self) -> None:
        self.load()

    async def reload(self) -> Optional[WorkerInitError]:
        """Forget the provider's modules and import them again from disk."""
        self._host.unload()
        try:
            self.load()
        except WorkerInitError as error:
            return error
        return None

    async def close(self) -> None:
        """Unload the provider and put back what this mode changed in the process."""
        if self._saved is None:
            return
        self._host.release()
        self._saved.restore()
        self._saved = None

    def load(self) -> None:
        """Import the handler; raises WorkerInitError like a worker would report it."""
        try:
            self._host.load(self.function.handler)
        except InitError as error:
            raise WorkerInitError(LambdaError.from_wire(error.details), "") from None

    async def invoke(self, event: Any, timeout_s: float, request_id: Optional[str] = None) -> InvocationOutcome:
        request_id = request_id or str(uuid.uuid4())
        if self._host.handler is None:
            try:
                self.load()
            except WorkerInitError as failed:
                return InvocationOutcome(OutcomeKind.INIT_ERROR, request_id, 0.0, error=failed.error)
        context = LambdaContext(self._identity, request_id, deadline_ms(timeout_s))
        self._debugger.breakpoint_called = False
        debugger_before = self._debugger.present()
        started = time.perf_counter()
        exited: Optional[SystemExit] = None
        kind, body = "", b""
        try:
            with contextlib.redirect_stdout(sys.stderr):
                kind, body = self._host.call(event, context)
        except SystemExit as raised:  # a worker process would have ended here
            exited = raised
        duration = (time.perf_counter() - started) * 1000.0
        debugger = debugger_before or self._debugger.present()
        note = "debugger attached: time budgets are suspended" if debugger else None
        if duration > timeout_s * 1000 and not debugger:
            return InvocationOutcome(OutcomeKind.TIMED_OUT, request_id, duration, timeout_s=timeout_s)
        if exited is not None:
            return InvocationOutcome(OutcomeKind.WORKER_DIED, request_id, duration, error=_exit_error(exited), note=note)
        faults = self._host.fired_faults()
        if kind == "error":
            return InvocationOutcome(OutcomeKind.FUNCTION_ERROR, request_id, duration, error=LambdaError.from_wire(json.loads(body)), note=note, faults=faults)
        return InvocationOutcome(OutcomeKind.RETURNED, request_id, duration, result=json.loads(body), note=note, faults=faults)
