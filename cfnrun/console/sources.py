"""What the console reads, as the app gives it: the served types and functions, and the stacks once loaded."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Mapping, Optional, Protocol, Sequence, Tuple

if TYPE_CHECKING:  # serve imports the console before it listens: nothing heavy at import
    from cfnrun.history.store import HistoryStore
    from cfnrun.stacks.drift import ResourceDrift
    from cfnrun.stacks.hook_results import HookResult
    from cfnrun.model.schema import ResourceSchema
    from cfnrun.stacks.store import StackStore


@dataclass(frozen=True)
class FunctionView:
    """One served function: its name, handler, time limit and how many workers it has now."""

    name: str
    handler: str
    timeout_s: Optional[float]
    workers: int
    idle: int = 0  # of ``workers``, those warm and waiting for a call; the rest are busy (or starting)


class ReloadState(Protocol):
    """A source's last reload (``app/reloader.py``'s ReloadOutcome): the save, what went live, what failed and why."""

    @property
    def change(self) -> str: ...
    @property
    def at(self) -> float: ...
    @property
    def live(self) -> Tuple[str, ...]: ...
    @property
    def failures(self) -> Mapping[str, str]: ...
    @property
    def error(self) -> Optional[str]: ...


@dataclass(frozen=True)
class SourceView:
    """One served source: a provider (a resource type or a hook, with its schema) or a ``--functions`` template."""

    name: str
    kind: str  # "resource type", "hook" or "functions"
    root: str
    schema: Optional["ResourceSchema"]
    functions: Tuple[FunctionView, ...]
    reloading: bool = False  # its files are watched (serve's --reload)
    last_reload: Optional[ReloadState] = None


class ConsoleSources(Protocol):
    """What serve shows in its console."""

    def sources(self) -> Sequence[SourceView]: ...

    def stack_store(self) -> Optional["StackStore"]:
        """The local stacks, once serve has loaded them; None before."""

    def hook_results(self, stack_id: str) -> Sequence["HookResult"]:
        """The verdicts of every hook run on stack ``stack_id`` (its resources, itself, its change sets), oldest first."""

    def drift_results(self, stack_id: str) -> Sequence["ResourceDrift"]:
        """The last drift result of each of the stack's checked resources (none before a detection)."""

    def histories(self) -> Dict[str, "HistoryStore"]:
        """Each provider's history, by type name (empty before serve has loaded them, or when recording is off)."""

    def timeline(self, type_name: str, operation_id: int) -> str:
        """Recorded operation ``operation_id`` of ``type_name`` as ``cfnrun history show`` prints it (no colour)."""
