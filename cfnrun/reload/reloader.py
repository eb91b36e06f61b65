"""Saved files → new code live in the server's workers, with the console saying what happened."""
from __future__ import annotations

import asyncio
import time
from typing import Optional

from cfnrun.errors import CfnrunError
from cfnrun.project import load_project
from cfnrun.reload.watcher import ProjectChange, describe_change, watch_changes
from cfnrun.runtime.registry import FunctionRegistry
from cfnrun.server.console import Console


class Reloader:
    def __init__(self, registry: FunctionRegistry, console: Console) -> None:
        self.registry = registry
        self.console = console
        self.reloads = 0

    async def run(self, stop: Optional[asyncio.Event] = None) -> None:
        async for change in watch_changes(self.registry.project, stop):
            await self.apply(change)

    async def apply(self, change: ProjectChange) -> None:
        self.console.info(f"reload: {describe_change(change, self.registry.project.root)}")
        started = time.perf_counter()
        before = set(self.registry.project.functions)
        project = None
        if change.config:
            try:
                project = load_project(root)
            except CfnrunError as error:
                self.console.error(f"reload: {error}; still serving the previous configuration")
                return
        results = await self.registry.reload(project)
        self.reloads += 1
        elapsed = (time.perf_counter() - started) * 1000
        added = sorted(set(results) - before)
        removed = sorted(before - set(results))
        if added or removed:
            self.console.info(
                "reload: functions" + (f" added: {', '.join(added)}" if added else "") + (f" removed: {', '.join(removed)}" if removed else "")
            )
        live = [name for name, error in results.items() if error is None]
        for name, error in results.items():
            if error is not None:
                self.console.error(f"reload: {name} does not load: {error.error.get('errorType')}: {error}")
                self.console.info("    calls answer with this error until a save fixes it")
        if live:
            self.console.info(f"reload: new code live in {elapsed:.0f} ms: {', '.join(live)}")
