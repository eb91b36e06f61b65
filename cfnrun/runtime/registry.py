"""The project's functions, each with its own pool of warm workers, created on first use."""
from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from typing import Dict, Optional

from cfnrun.project import Project
from cfnrun.runtime.environment import lambda_environment
from cfnrun.runtime.pool import FunctionPool
from cfnrun.runtime.process import WorkerInitError, WorkerSpec
from cfnrun.template import FunctionSpec

DEFAULT_REGION = "us-east-1"
DEFAULT_ACCOUNT_ID = "123456789012"


@dataclass(frozen=True)
class RuntimeSettings:
    region: str = DEFAULT_REGION
    account_id: str = DEFAULT_ACCOUNT_ID
    workers: int = 1
    log_level: str = "INFO"
    python: str = sys.executable


def worker_spec(project: Project, function: FunctionSpec, settings: RuntimeSettings) -> WorkerSpec:
    return WorkerSpec(
        function_name=function.function_name or function.logical_id,
        handler=function.handler,
        code_dir=project.code_dir,
        cwd=project.root,
        env=lambda_environment(project, function, settings.region, settings.log_level),
        memory_mb=function.memory_mb,
        python=settings.python,
        region=settings.region,
        account_id=settings.account_id,
    )


class FunctionRegistry:
    def __init__(self, project: Project, settings: RuntimeSettings) -> None:
        self.project = project
        self.settings = settings
        self._pools: Dict[str, FunctionPool] = {}

    def resolve(self, name: str) -> Optional[FunctionSpec]:
        return self.project.find_function(name)

    def pool(self, function: FunctionSpec) -> FunctionPool:
        pool = self._pools.get(function.logical_id)
        if pool is None:
            pool = FunctionPool(worker_spec(self.project, function, self.settings), self.settings.workers)
            self._pools[function.logical_id] = pool
        return pool

    async def warm_all(self) -> Dict[str, Optional[WorkerInitError]]:
        """Start one worker per function; the init error of each that fails to load."""
        functions = list(self.project.functions.values())

        async def warm(function: FunctionSpec) -> Optional[WorkerInitError]:
            try:
                await self.pool(function).warm()
            except WorkerInitError as error:
                return error
            return None

        errors = await asyncio.gather(*(warm(f) for f in functions))
        return {f.logical_id: e for f, e in zip(functions, errors)}

    async def close(self) -> None:
        await asyncio.gather(*(pool.close() for pool in self._pools.values()))
        self._pools.clear()
