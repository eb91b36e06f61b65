"""The hooks of local stacks: which run before a resource operation, how each runs, what its outcome means.

A custom hook (a served hook project, ``serve --hook DIR``) runs through the one invoker on its warm
workers, exactly as ``cfnrun invoke preCreate`` runs it: the HookInvocationRequest the service
sends, IN_PROGRESS replayed with its callbackContext, the hook budgets, the contract checks, the
history record. Its configuration is the service's (``model/hook_configuration.py``), set with
SetTypeConfiguration; a hook served with ``--hook`` starts ENABLED for RESOURCE targets in FAIL
mode, one served with ``--provider`` starts DISABLED, as a newly activated hook does.

Outcomes, as the service reports them: the hook answered SUCCESS → HOOK_COMPLETE_SUCCEEDED;
FAILED with NonCompliant (the hook judged the resource) → HOOK_COMPLETE_FAILED; any other
failure (an exception, a timeout, a crash, garbage, an unknown hookStatus) → HOOK_FAILED. Either
failure fails the resource in FAIL mode and is only reported in WARN mode.
"""
from __future__ import annotations

import asyncio
import fnmatch
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Protocol

from cfnrun.app.history import STACK_SOURCE
from cfnrun.app.type_operations import TypeOperations
from cfnrun.model.endings import EndReason
from cfnrun.events.operation import InvocationCompleted, OperationEvent
from cfnrun.model.hook_configuration import HookConfiguration
from cfnrun.model.hook_protocol import describe_annotation, hook_annotations
from cfnrun.model.hook_targets import target_names
from cfnrun.model.protocol import Action
from cfnrun.model.schema import ResourceSchema
from cfnrun.stacks.hooks import HookReport, HookTarget, hook_failure

JUDGED = ("NonCompliant",)  # a FAILED hookStatus with this errorCode is a verdict, not an error


@dataclass(frozen=True)
class HookOutcome:
    status: str  # HOOK_COMPLETE_SUCCEEDED, HOOK_COMPLETE_FAILED or HOOK_FAILED
    reason: Optional[str] = None

    @property
    def failed(self) -> bool:
        return self.status != "HOOK_COMPLETE_SUCCEEDED"


class Hook(Protocol):
    """A hook of any kind: custom (a served project), Guard or Lambda."""

    hook_type: str
    configuration: HookConfiguration

    def targets(self, action: str, type_name: str) -> bool:
        """Does the hook itself declare this target (its schema's targetNames, a Guard or Lambda hook's filters)?"""

    async def run(self, target: HookTarget) -> HookOutcome: ...


class CustomHook:
    def __init__(self, hook_type: str, operations: TypeOperations, configuration: HookConfiguration) -> None:
        self.hook_type = hook_type
        self.operations = operations
        self.configuration = configuration

    @property
    def schema(self) -> ResourceSchema:
        return self.operations.served.provider(self.hook_type).project.schema  # as it is now: a reload may bring a new one

    def targets(self, action: str, type_name: str) -> bool:
        schema = self.schema
        return any(fnmatch.fnmatchcase(type_name, pattern) for pattern in target_names(schema, Action(f"{action}_PRE_PROVISION")))

    async def run(self, target: HookTarget) -> HookOutcome:
        annotations: List[str] = []

        def keep_annotations(event: OperationEvent) -> None:
            if isinstance(event, InvocationCompleted) and event.progress is not None:
                annotations[:] = [describe_annotation(a) for a in hook_annotations(event.progress)]

        result = await self.operations.operation(
            self.hook_type,
            Action(f"{target.action}_PRE_PROVISION"),
            target.properties,
            target.previous_properties,
            label=f"hook on stack {target.stack.stack_name} {target.logical_id}",
            logical_id=target.logical_id,
            stack_id=target.stack.stack_id,
            target_name=target.type_name,
            type_configuration=self.configuration.properties,
            string_primitives=True,
            history_source=STACK_SOURCE,
            observers=[keep_annotations],
        ).run()
        if result.succeeded:
            return HookOutcome("HOOK_COMPLETE_SUCCEEDED", _with(result.message or None, annotations))
        if result.reason is EndReason.HANDLER and result.error_code in JUDGED:
            return HookOutcome("HOOK_COMPLETE_FAILED", _with(result.message or result.error_code, annotations))
        detail = f"{result.error_code}: {result.message}" if result.error_code else result.message
        return HookOutcome("HOOK_FAILED", f"Hook {self.hook_type} failed: {detail}")


def _with(reason: Optional[str], annotations: List[str]) -> Optional[str]:
    """The hook's message with the annotations it returned (the events keep both)."""
    if not annotations:
        return reason
    listed = "; ".join(annotations)
    return f"{reason} [annotations: {listed}]" if reason else f"[annotations: {listed}]"


class HookGate:
    """``stacks.hooks.HookGate``: every hook of this serve, by type name."""

    def __init__(self) -> None:
        self.hooks: Dict[str, Hook] = {}

    def add(self, hook: Hook) -> None:
        self.hooks[hook.hook_type] = hook

    def remove(self, hook_type: str) -> None:
        self.hooks.pop(hook_type, None)

    def _applicable(self, operation: str, action: str, type_name: str, stack_name: Optional[str]) -> List[Hook]:
        return [
            hook
            for hook in self.hooks.values()
            if hook.configuration.applies(operation, action, type_name, stack_name) and hook.targets(action, type_name)
        ]

    async def before_resource(self, target: HookTarget, report: Callable[[HookReport], None]) -> Optional[str]:
        hooks = self._applicable("RESOURCE", target.action, target.type_name, target.stack.stack_name)
        if not hooks:
            return None

        async def one(hook: Hook) -> Optional[str]:
            mode = hook.configuration.failure_mode
            report(HookReport(hook.hook_type, "HOOK_IN_PROGRESS", mode, "Hook invocation is in progress"))
            try:
                outcome = await hook.run(target)
            except Exception as error:  # noqa: B902 - a hook that cannot run is HOOK_FAILED, never a stuck stack
                outcome = HookOutcome("HOOK_FAILED", f"cfnrun could not run hook {hook.hook_type}: {type(error).__name__}: {error}")
            reason = outcome.reason
            if outcome.failed and mode == "WARN":
                reason = f"{reason or outcome.status} (FailureMode WARN: the operation goes on)"
            report(HookReport(hook.hook_type, outcome.status, mode, reason))
            return hook.hook_type if outcome.failed and mode == "FAIL" else None

        refused = [name for name in await asyncio.gather(*(one(hook) for hook in hooks)) if name is not None]
        return hook_failure(refused) if refused else None
