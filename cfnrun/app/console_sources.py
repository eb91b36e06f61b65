"""What serve's console reads (``cfnrun/console``), from what serve serves now and its late parts."""
from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from cfnrun.console.sources import FunctionView, SourceView

if TYPE_CHECKING:
    from cfnrun.app.late_parts import LateLoading
    from cfnrun.app.served import Served
    from cfnrun.app.reloader import ReloadOutcome, Reloader
    from cfnrun.history.store import HistoryStore
    from cfnrun.stacks.drift import ResourceDrift
    from cfnrun.stacks.hook_results import HookResult
    from cfnrun.runtime.registry import FunctionRegistry
    from cfnrun.stacks.store import StackStore


class ServedToConsole:
    """``ConsoleSources`` over one serve: each registry as its project is now, the stacks once loaded."""

    def __init__(self, served: "Served", late: "LateLoading") -> None:
        self.served = served
        self.late = late
        self.reloaders: List["Reloader"] = []  # the running server's: one per watched source, once its watch is in place

    def sources(self) -> List[SourceView]:
        shown: List[SourceView] = []
        for registry in self.served.providers:
            project = registry.project
            kind = "hook" if project.is_hook else "resource type"
            shown.append(SourceView(project.type_name, kind, str(project.root), project.schema, self._functions(registry), *self._reload(registry)))
        for functions in self.served.templates:
            template = functions.project
            shown.append(SourceView(str(template.path), "functions", str(template.root), None, self._functions(functions), *self._reload(functions)))
        return shown

    def _reload(self, registry: "FunctionRegistry[Any]") -> Tuple[bool, Optional["ReloadOutcome"]]:
        reloader = next((r for r in self.reloaders if r.registry is registry), None)
        return (reloader is not None, reloader.last if reloader is not None else None)

    def _functions(self, registry: "FunctionRegistry[Any]") -> Tuple[FunctionView, ...]:
        return tuple(
            FunctionView(self.served.shown_name(registry, name), spec.handler, spec.timeout_s, registry.workers(name), registry.idle_workers(name))
            for name, spec in registry.project.functions.items()
        )

    def stack_store(self) -> Optional["StackStore"]:
        parts = self.late.parts
        return parts.stacks.store if parts is not None else None

    def hook_results(self, stack_id: str) -> List["HookResult"]:
        parts = self.late.parts
        results = parts.stacks.hooks.results.results if parts is not None else []
        return [r for r in results if r.target.stack.stack_id == stack_id]

    def drift_results(self, stack_id: str) -> List["ResourceDrift"]:
        parts = self.late.parts
        return list(parts.stacks.drift.latest.get(stack_id, {}).values()) if parts is not None else []

    def histories(self) -> Dict[str, "HistoryStore"]:
        parts = self.late.parts
        return dict(parts.histories) if parts is not None else {}

    def timeline(self, type_name: str, operation_id: int) -> str:
        from cfnrun.app.history import FUZZ_SOURCE, show_operation
        from cfnrun.ui.timeline import TimelineRenderer

        shown = io.StringIO()
        schema = self.served.provider(type_name).project.schema
        store = self.histories()[type_name]
        recorded = store.get(operation_id)
        if recorded.source == FUZZ_SOURCE:  # a case cfnrun fuzz found: its steps and problems, as history show prints it
            from cfnrun.fuzz.steps import Finding

            return "\n".join(Finding.recorded(recorded.request).lines(schema))
        show_operation(store, operation_id, [TimelineRenderer(shown, schema, color=False)])
        return shown.getvalue()
