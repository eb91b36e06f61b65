"""The hooks of a serve: which run before an operation, how each runs, what its outcome means.

One gate serves every target operation: each resource of a local stack (RESOURCE), a stack's
create, update or delete (STACK), a change set's creation (CHANGE_SET) and Cloud Control's
create, update and delete (CLOUD_CONTROL). A hook of any kind plugs in as a ``Hook``: it says
which targets it declares and judges a ``HookedOperation`` (``target.operation`` tells which; a
STACK or CHANGE_SET target brings its document in ``target.model``).

A custom hook (a served hook project, ``serve --hook DIR``) runs through the one invoker on its warm
workers, exactly as ``cfnrun invoke preCreate`` runs it: the HookInvocationRequest the service
sends, IN_PROGRESS replayed with its callbackContext, the hook budgets, the contract checks, the
history record (a STACK or CHANGE_SET target's document behind a payload URL served on serve's
own port, ``hook_payloads.py``, as the service's presigned one). Its configuration is the service's (``model/hook_configuration.py``), set with
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
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Protocol, Tuple

from cfnrun.app.history import CLOUD_CONTROL_SOURCE, STACK_SOURCE
from cfnrun.app.stacks.hook_payloads import HookPayloadStore
from cfnrun.stacks.hook_results import HookResults
from cfnrun.invoker.cancellable_clock import CancelRequested, Stopping
from cfnrun.stacks.in_flight import OperationStopped
from cfnrun.app.type_operations import TypeOperations
from cfnrun.events.operation import InvocationCompleted, OperationEvent
from cfnrun.model.endings import EndReason
from cfnrun.model.hook_configuration import HookConfiguration
from cfnrun.model.hook_protocol import StackLevelTarget, describe_annotation, hook_annotations
from cfnrun.model.hook_targets import STACK_LEVEL_TARGETS, target_names
from cfnrun.model.protocol import Action
from cfnrun.model.random_ids import random_uuid
from cfnrun.model.schema import ResourceSchema
from cfnrun.stacks.hooks import IN_PROGRESS_REASON, MAX_IN_PROGRESS, HookReport, HookedOperation, hook_failure

SKIP_STACK_HOOK = "CHANGE_SET_SUCCESS_SKIP_STACK_HOOK"  # a CHANGE_SET hook's success that spares it the STACK target on execution
JUDGED = ("NonCompliant",)  # a FAILED hookStatus with this errorCode is a verdict, not an error


@dataclass(frozen=True)
class HookOutcome:
    status: str  # HOOK_COMPLETE_SUCCEEDED, HOOK_COMPLETE_FAILED or HOOK_FAILED
    reason: Optional[str] = None
    annotations: Tuple[Dict[str, Any], ...] = ()  # the hook's last answer's, as the support library writes them
    skips_stack_hook: bool = False  # it answered CHANGE_SET_SUCCESS_SKIP_STACK_HOOK

    @property
    def failed(self) -> bool:
        return self.status != "HOOK_COMPLETE_SUCCEEDED"


class Hook(Protocol):
    """A hook of any kind: custom (a served project), Guard or Lambda."""

    hook_type: str
    configuration: HookConfiguration
    original_type_name: Optional[str]  # the public hook a Guard or Lambda hook's Alias activates (GetHookResult's OriginalTypeName)

    def targets(self, action: str, type_name: str) -> bool:
        """Does the hook itself declare this target (its schema's targetNames, a Guard or Lambda hook's filters)?

        ``type_name`` is a resource type, or STACK / CHANGE_SET for a stack-level target."""

    async def run(self, target: HookedOperation) -> HookOutcome:
        """Judge ``target``: ``target.operation`` is RESOURCE, STACK, CHANGE_SET or CLOUD_CONTROL; a stack-level one brings ``target.model``."""


class CustomHook:
    def __init__(
        self, hook_type: str, operations: TypeOperations, configuration: HookConfiguration, payloads: HookPayloadStore,
        stopping: Optional[Stopping] = None,
    ) -> None:
        self.stopping = stopping or Stopping()  # serve stopping: a stack's hook makes no call after the one in flight
        self.hook_type = hook_type
        self.original_type_name: Optional[str] = None  # a hook type of its own, no alias
        self.operations = operations
        self.configuration = configuration
        self.payloads = payloads

    @property
    def schema(self) -> ResourceSchema:
        return self.operations.served.provider(self.hook_type).project.schema  # as it is now: a reload may bring a new one

    def targets(self, action: str, type_name: str) -> bool:
        names = target_names(self.schema, Action(f"{action}_PRE_PROVISION"))
        if type_name in STACK_LEVEL_TARGETS:  # declared by name: a wildcard stands for resource types
            return type_name in names
        return any(fnmatch.fnmatchcase(type_name, pattern) for pattern in names)

    async def run(self, target: HookedOperation) -> HookOutcome:
        if target.model is None:
            return await self._run(target, None)
        with self.payloads.serving(target.model) as url:
            return await self._run(target, StackLevelTarget(targetType=target.target_type, model=target.model, payload=url))

    async def _run(self, target: HookedOperation, stack_level: Optional[StackLevelTarget]) -> HookOutcome:
        where = {
            "STACK": f"stack {target.stack.stack_name}",
            "CHANGE_SET": f"a change set of stack {target.stack.stack_name}",
            "CLOUD_CONTROL": f"Cloud Control {target.logical_id}",
        }.get(target.operation, f"stack {target.stack.stack_name} {target.logical_id}")
        last: Dict[str, Any] = {}  # the hook's last answer: its annotations and its own hookStatus

        def keep_answer(event: OperationEvent) -> None:
            if isinstance(event, InvocationCompleted) and event.progress is not None:
                last["annotations"] = tuple(hook_annotations(event.progress))
                last["hookStatus"] = (event.progress.model_extra or {}).get("hookStatus")

        clock = self.operations.new_clock()
        if target.operation != "CLOUD_CONTROL":  # a stack's hook stops with serve (Cloud Control cancels its requests itself)
            clock = self.stopping.clock(clock)
        operation = self.operations.operation(
            self.hook_type,
            Action(f"{target.action}_PRE_PROVISION"),
            target.properties,
            target.previous_properties,
            label=f"hook on {where}",
            logical_id=target.logical_id,
            stack_id=target.stack.stack_id,
            target_name=target.type_name,
            type_configuration=self.configuration.properties,
            string_primitives=target.operation != "CLOUD_CONTROL",
            history_source=CLOUD_CONTROL_SOURCE if target.operation == "CLOUD_CONTROL" else STACK_SOURCE,
            stack_level=stack_level,
            change_set_id=target.change_set_id,
            max_reinvoke=MAX_IN_PROGRESS,  # as the service: a fourth IN_PROGRESS fails the hook
            observers=[keep_answer],
            clock=clock,
            secrets=target.stack.secrets,
        )
        try:
            result = await operation.run()
        except CancelRequested as stopped:
            raise OperationStopped(str(stopped)) from None
        annotations = last.get("annotations", ())
        described = [describe_annotation(a) for a in annotations]
        if result.succeeded:
            skips = last.get("hookStatus") == SKIP_STACK_HOOK
            return HookOutcome("HOOK_COMPLETE_SUCCEEDED", _with(result.message or None, described), annotations, skips)
        if result.reason is EndReason.HANDLER and result.error_code in JUDGED:
            return HookOutcome("HOOK_COMPLETE_FAILED", _with(result.message or result.error_code, described), annotations)
        if result.reason is EndReason.REINVOKE_LIMIT:
            detail = f"it answered IN_PROGRESS more than {MAX_IN_PROGRESS} times (a hook may ask to be invoked again at most {MAX_IN_PROGRESS} times)"
        else:
            detail = ": ".join(part for part in (result.error_code, result.message) if part) or result.status.value
        return HookOutcome("HOOK_FAILED", f"Hook {self.hook_type} failed: {detail}")


def _with(reason: Optional[str], annotations: List[str]) -> Optional[str]:
    """The hook's message with the annotations it returned (the events keep both)."""
    if not annotations:
        return reason
    listed = "; ".join(annotations)
    return f"{reason} [annotations: {listed}]" if reason else f"[annotations: {listed}]"


class HookGate:
    """``stacks.hooks.HookGate``: every hook of this serve, by type name."""

    def __init__(self, results: HookResults) -> None:
        self.hooks: Dict[str, Hook] = {}
        self.results = results  # every verdict, for ListHookResults and GetHookResult

    def add(self, hook: Hook) -> None:
        self.hooks[hook.hook_type] = hook

    def remove(self, hook_type: str) -> None:
        self.hooks.pop(hook_type, None)

    def applicable(self, operation: str, action: str, type_name: str, stack_name: Optional[str]) -> List[Hook]:
        """The hooks that would run for ``action`` of ``type_name`` in ``operation`` (DescribeChangeSetHooks asks too)."""
        return [
            hook
            for hook in self.hooks.values()
            if hook.configuration.applies(operation, action, type_name, stack_name) and hook.targets(action, type_name)
        ]

    async def before(self, target: HookedOperation, report: Callable[[HookReport], None]) -> Optional[str]:
        hooks = self.applicable(target.operation, target.action, target.type_name, target.stack.stack_name)
        hooks = [hook for hook in hooks if hook.hook_type not in target.skipped]
        if not hooks:
            return None

        async def one(hook: Hook) -> Optional[str]:
            mode = hook.configuration.failure_mode
            invocation = random_uuid()  # the events' HookInvocationId, and the HookResultId of the result it leaves
            report(HookReport(hook.hook_type, "HOOK_IN_PROGRESS", mode, IN_PROGRESS_REASON, invocation_id=invocation))
            invoked_at = time.time()
            try:
                outcome = await hook.run(target)
            except OperationStopped:
                raise  # serve stops: the operation it gates ends where it is, recorded in flight
            except Exception as error:  # noqa: B902 - a hook that cannot run is HOOK_FAILED, never a stuck stack
                outcome = HookOutcome("HOOK_FAILED", f"cfnrun could not run hook {hook.hook_type}: {type(error).__name__}: {error}")
            reason = outcome.reason  # in WARN mode as in FAIL: the event's HookFailureMode says which
            report(HookReport(hook.hook_type, outcome.status, mode, reason, outcome.skips_stack_hook, invocation))
            self.results.record(
                hook.hook_type, target, outcome.status, reason, mode, invoked_at, outcome.annotations, invocation, hook.original_type_name
            )
            return hook.hook_type if outcome.failed and mode == "FAIL" else None

        refused = [name for name in await asyncio.gather(*(one(hook) for hook in hooks)) if name is not None]
        return hook_failure(refused, target.operation) if refused else None
