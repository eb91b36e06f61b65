"""Saved files → new code live in the server's workers, with the console saying what happened.

One reloader per served source (a provider project, a ``--functions`` template): each watches its own files.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from cfnrun.model.errors import CfnrunError
from cfnrun.app.watcher import ChangeFeed, ProjectChange, WatchFailed, describe_change
from cfnrun.runtime.registry import FunctionRegistry
from cfnrun.ui.console import Console


@dataclass(frozen=True)
class ReloadOutcome:
    """What the last reload did: the save it followed, the functions live on new code, and what failed (each function's
    load error, a syntax error with its file:line; or ``error``: the configuration could not be read, nothing changed)."""

    change: str
    at: float = field(default_factory=time.time)
    live: Tuple[str, ...] = ()
    failures: Dict[str, str] = field(default_factory=dict)
    error: Optional[str] = None


class Reloader:
    def __init__(self, registry: "FunctionRegistry[Any]", console: Console) -> None:
        self.registry = registry
        self.console = console
        self.feed = ChangeFeed(registry.project)
        self.last: Optional[ReloadOutcome] = None  # for serve's console page

    async def start(self, saved_since: Optional[float] = None) -> None:
        """Begin watching; changes from now on (or from ``saved_since``) will be applied by ``run``."""
        await self.feed.start(saved_since)

    async def run(self) -> None:
        """Apply each change until cancelled; then the watch stops too."""
        try:
            while True:
                try:
                    change = await self.feed.next()
                except WatchFailed as error:
                    self.console.error(f"reload: {error}; saves are no longer seen (restart serve to reload again)")
                    return
                try:
                    await self.apply(change)
                except Exception as error:  # noqa: B902 - a failed reload must not end reloading
                    self.console.error(f"reload failed; still watching:\n{traceback.format_exc()}")
                    self.last = ReloadOutcome(describe_change(change, self.registry.project.root), error=f"{type(error).__name__}: {error}")
        finally:
            self.feed.stop()

    async def apply(self, change: ProjectChange) -> None:
        described = describe_change(change, self.registry.project.root)
        self.console.info(f"reload: {described}")
        started = time.perf_counter()
        before = set(self.registry.project.functions)
        project = None
        if change.config:
            try:
                project = self.registry.project.read_again()
            except CfnrunError as error:
                self.console.error(f"reload: {error}; still serving the previous configuration")
                self.last = ReloadOutcome(described, error=f"{error}; still serving the previous configuration")
                return
        results = await self.registry.reload(project)
        elapsed = (time.perf_counter() - started) * 1000
        added = sorted(set(results) - before)
        removed = sorted(before - set(results))
        if added or removed:
            self.console.info(
                "reload: functions" + (f" added: {', '.join(added)}" if added else "") + (f" removed: {', '.join(removed)}" if removed else "")
            )
        live = [name for name, failure in results.items() if failure is None]
        failures = {name: f"{failure.error.error_type}: {failure}" for name, failure in results.items() if failure is not None}
        self.last = ReloadOutcome(described, live=tuple(live), failures=failures)
        for name, failure in results.items():
            if failure is not None:
                self.console.error(f"reload: {name} does not load: {failure.error.error_type}: {failure}")
                self.console.info("    calls answer with this error until a save fixes it")
        if live:
            self.console.info(f"reload: new code live in {elapsed:.0f} ms: {', '.join(live)}")
