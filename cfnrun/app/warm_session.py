"""Operations from synchronous code (the pytest plugin) on warm workers shared per project and function.

One event loop runs in a background thread for the whole session; every worker it starts is
stopped by ``close``.
"""
from __future__ import annotations

import asyncio
import io
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from cfnrun.app.invoke import PreparedInvoke, ProviderLoadError, make_target, prepare, run_operation
from cfnrun.app.settings.invoke import InvokeSettings
from cfnrun.contract.checker import ContractMode
from cfnrun.events.operation import InvocationCompleted, OperationEvent, OperationResult
from cfnrun.invoker.request_files import OperationInput
from cfnrun.model.protocol import Action
from cfnrun.runtime.process import WorkerInitError
from cfnrun.runtime.target import FunctionTarget
from cfnrun.ui.timeline import TimelineRenderer


@dataclass(frozen=True)
class ViolationSeen:
    rule: str
    severity: str  # "error" (a MUST) or "warning" (a SHOULD)
    pointer: Optional[str]
    message: str


@dataclass
class OperationOutcome:
    """What one operation ended with, for assertions."""

    action: str
    status: str
    error_code: Optional[str]
    message: str
    model: Optional[Dict[str, Any]]
    models: Optional[List[Dict[str, Any]]]
    invocations: int
    violations: List[ViolationSeen]
    logs: str
    timeline: str  # what cfnrun invoke would have printed

    @property
    def succeeded(self) -> bool:
        return self.status == "SUCCESS"


@dataclass(frozen=True)
class ProviderOptions:
    virtual_clock: bool = False
    contract: ContractMode = ContractMode.WARN
    region: Optional[str] = None
    type_configuration: Optional[Dict[str, Any]] = None
    env: Tuple[Tuple[str, str], ...] = ()  # extra environment variables for the workers
    credentials: bool = False  # pass local AWS credentials to the handler
    time_scale: float = 1.0
    log_level: str = "INFO"
    python: str = sys.executable


class _Collector:
    """Logs of every invocation, and the timeline as text."""

    def __init__(self, renderer: TimelineRenderer) -> None:
        self.renderer = renderer
        self.logs: List[str] = []

    def __call__(self, event: OperationEvent) -> None:
        if isinstance(event, InvocationCompleted):
            self.logs.append(event.outcome.logs)
        self.renderer(event)


@dataclass
class WarmSession:
    _targets: Dict[Tuple[Any, ...], FunctionTarget] = field(default_factory=dict)
    _loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    _thread: Optional[threading.Thread] = None

    def _run(self, coroutine: Any) -> Any:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop.run_forever, name="cfnrun-warm-session", daemon=True)
            self._thread.start()
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def run(self, project_dir: Path, options: ProviderOptions, action: Action, request: OperationInput) -> OperationOutcome:
        settings = InvokeSettings(
            action=action,
            request=request,
            project_dir=project_dir,
            region=options.region,
            credentials=options.credentials,
            time_scale=options.time_scale,
            virtual_clock=options.virtual_clock,
            log_level=options.log_level,
            python=options.python,
            contract=options.contract,
        )
        prepared = prepare(settings)
        text = io.StringIO()
        collector = _Collector(TimelineRenderer(text, prepared.project.schema, color=False))
        result: OperationResult = self._run(self._operation(prepared, options, collector))
        return OperationOutcome(
            action=action.value,
            status=result.status.value,
            error_code=result.error_code,
            message=result.message,
            model=result.resource_model,
            models=result.resource_models,
            invocations=result.invocations,
            violations=[ViolationSeen(v.rule.id, v.rule.severity.value, v.pointer, v.message) for v in result.violations],
            logs="".join(collector.logs),
            timeline=text.getvalue(),
        )

    async def _operation(self, prepared: PreparedInvoke, options: ProviderOptions, collector: _Collector) -> OperationResult:
        key = (str(prepared.project.root), prepared.function.logical_id, prepared.request.region, options.python, options.log_level, options.env)
        target = self._targets.get(key)
        if target is None:
            target = make_target(prepared, standby=False, env=dict(options.env))
            try:
                await target.warm()
            except WorkerInitError as error:
                await target.close()
                raise ProviderLoadError(error) from None
            self._targets[key] = target
        return await run_operation(prepared, target, [collector])

    def close(self) -> None:
        """Stop every worker and the loop; nothing is left running."""
        if self._thread is None:
            return
        self._run(self._close_targets())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
        self._thread = None

    async def _close_targets(self) -> None:
        targets, self._targets = list(self._targets.values()), {}
        for target in targets:
            await target.close()
