"""Run the handler inside the cfnrun process, so breakpoint(), pdb and IDE debuggers just work.

No isolation and no way to cut a call short: a call over its budget is reported
after it returns, unless a debugger was involved, in which case budgets are
suspended and the outcome says so. The handler's stdout goes to stderr, so
``--json`` output stays clean.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import time
import uuid
from typing import Any, Callable, Optional

from cfnrun.model.project import Project
from cfnrun.runtime import worker as sandbox
from cfnrun.runtime.environment import lambda_environment
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.process import WorkerInitError
from cfnrun.model.template import FunctionSpec

IDE_DEBUGGERS = ("pydevd", "debugpy")


class _DebuggerWatch:
    """Notices a debugger: an IDE's tracer, or breakpoint() called by the handler."""

    def __init__(self) -> None:
        self.breakpoint_called = False
        original = sys.breakpointhook

        def hook(*args: Any, **kwargs: Any) -> Any:
            self.breakpoint_called = True
            return original(*args, **kwargs)

        sys.breakpointhook = hook

    def present(self) -> bool:
        return self.breakpoint_called or sys.gettrace() is not None or any(name in sys.modules for name in IDE_DEBUGGERS)


class InProcessFunction:
    def __init__(self, project: Project, function: FunctionSpec, region: str, account_id: str, log_level: str) -> None:
        self.function = function
        name = function.function_name or function.logical_id
        arn = f"arn:aws:lambda:{region}:{account_id}:function:{name}"
        self._identity = sandbox.sandbox_identity(name, arn, function.memory_mb, "cfnrun/in-process")
        os.environ.update(lambda_environment(project, function, region, log_level, base={}))
        os.chdir(project.root)
        if str(project.code_dir) not in sys.path:
            sys.path.insert(0, str(project.code_dir))
        logging.basicConfig(stream=sys.stderr, level=log_level, format="[%(levelname)s] %(name)s: %(message)s")
        self._handler: Optional[Callable[..., Any]] = None
        self._code_dir = str(project.code_dir)
        self._debugger = _DebuggerWatch()

    async def warm(self) -> None:
        self.load()

    async def reload(self) -> Optional[WorkerInitError]:
        """Forget the provider's modules and import them again from disk."""
        for name, module in list(sys.modules.items()):
            if (getattr(module, "__file__", None) or "").startswith(self._code_dir + os.sep):
                del sys.modules[name]
        self._handler = None
        try:
            self.load()
        except WorkerInitError as error:
            return error
        return None

    async def close(self) -> None:
        pass

    def load(self) -> None:
        """Import the handler; raises WorkerInitError like a worker would report it."""
        try:
            self._handler = sandbox.load_handler(self.function.handler, self._code_dir)
        except sandbox._InitError as error:  # noqa: SLF001 - the worker's own error shape
            raise WorkerInitError(error.details, "") from None
        sandbox.watch_support_library_serialization(self._handler)

    async def invoke(self, event: Any, timeout_s: float, request_id: Optional[str] = None) -> InvocationOutcome:
        request_id = request_id or str(uuid.uuid4())
        if self._handler is None:
            try:
                self.load()
            except WorkerInitError as failed:
                return InvocationOutcome(OutcomeKind.INIT_ERROR, request_id, 0.0, error=failed.error)
        assert self._handler is not None
        context = sandbox.LambdaContext(self._identity, request_id, sandbox.deadline_ms(timeout_s))
        self._debugger.breakpoint_called = False
        debugger_before = self._debugger.present()
        started = time.perf_counter()
        result: Any = None
        error = None
        try:
            with contextlib.redirect_stdout(sys.stderr):
                returned = self._handler(event, context)
        except Exception as raised:  # noqa: B902 - reported like Lambda does
            error = sandbox._function_error(raised)  # noqa: SLF001
        else:
            try:
                result = json.loads(json.dumps(returned))
            except (TypeError, ValueError) as marshal:
                error = {"errorType": "Runtime.MarshalError", "errorMessage": f"Unable to marshal response: {marshal}", "stackTrace": []}
        duration = (time.perf_counter() - started) * 1000.0
        debugger = debugger_before or self._debugger.present()
        note = "debugger attached: time budgets are suspended" if debugger else None
        if duration > timeout_s * 1000 and not debugger:
            return InvocationOutcome(OutcomeKind.TIMED_OUT, request_id, duration, timeout_s=timeout_s)
        if error is not None:
            return InvocationOutcome(OutcomeKind.FUNCTION_ERROR, request_id, duration, error=error, note=note)
        return InvocationOutcome(OutcomeKind.RETURNED, request_id, duration, result=result, note=note)
