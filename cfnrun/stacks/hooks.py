"""Hooks before each resource operation of a stack: what the engine asks, and what it writes down.

Before CloudFormation creates, updates or deletes a resource it runs the hooks whose configuration
targets it (the PRE_PROVISION invocation point). The engine asks a ``HookGate`` (the app's: custom
hooks through the one invoker, Guard and Lambda hooks) with a ``HookTarget``; each hook's progress
comes back as ``HookReport``s, written as stack events with the hook fields; a hook that failed in
FAIL mode fails the resource, one in WARN mode lets it go on with its message in the events.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Protocol

from cfnrun.stacks.provisioning import StackContext

HOOK_STATUSES = ("HOOK_IN_PROGRESS", "HOOK_COMPLETE_SUCCEEDED", "HOOK_COMPLETE_FAILED", "HOOK_FAILED")
INVOCATION_POINT = "PRE_PROVISION"


@dataclass(frozen=True)
class HookTarget:
    """A resource about to be provisioned: what its hooks are shown."""

    stack: StackContext
    action: str  # CREATE, UPDATE or DELETE
    logical_id: str
    type_name: str
    properties: Dict[str, Any]
    previous_properties: Optional[Dict[str, Any]] = None


@dataclass(frozen=True)
class HookReport:
    """One hook's progress on one target, as its stack event shows it."""

    hook_type: str
    status: str  # one of HOOK_STATUSES
    failure_mode: str  # FAIL or WARN
    reason: Optional[str] = None


class HookGate(Protocol):
    async def before_resource(self, target: HookTarget, report: Callable[[HookReport], None]) -> Optional[str]:
        """Run the hooks that target this resource operation; the failure reason when one in FAIL mode failed, else None."""


def hook_failure(hook_types: "list[str]") -> str:
    """The reason a resource fails with when its hooks in FAIL mode failed."""
    return f"The following hook(s)/validation failed: [{', '.join(hook_types)}]"
