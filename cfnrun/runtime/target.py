"""What the invoker needs of a function, wherever it runs: worker processes, this process, or a remote endpoint."""
from __future__ import annotations

from typing import Any, Optional, Protocol

from cfnrun.runtime.outcome import InvocationOutcome
from cfnrun.runtime.process import WorkerInitError


class Invocable(Protocol):
    """Runs one invocation and never raises for anything the handler does."""

    async def invoke(self, event: Any, timeout_s: float, request_id: Optional[str] = None) -> InvocationOutcome: ...


class FunctionTarget(Invocable, Protocol):
    """An Invocable with a life: started warm, reloaded with new code, closed."""

    async def warm(self) -> None: ...

    async def reload(self) -> Optional[WorkerInitError]: ...

    async def close(self) -> None: ...
