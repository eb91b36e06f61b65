"""Hooks inside operations: what the engine, the change sets and Cloud Control ask, and what is written down.

CloudFormation runs the hooks whose configuration targets an operation at its PRE_PROVISION
invocation point: before each resource of a stack is created, updated or deleted (RESOURCE),
before a stack's create, update or delete starts at all (STACK), when a change set is created
(CHANGE_SET), and before a Cloud Control API create, update or delete (CLOUD_CONTROL). Each asks a
``HookGate`` (the app's: custom hooks through the one invoker, Guard and Lambda hooks) with a
``HookedOperation``; each hook's progress comes back as ``HookReport``s, written as stack events with
the hook fields; a hook that failed in FAIL mode refuses the operation, one in WARN mode lets it
go on with its message in the events.

A STACK or CHANGE_SET target is not a resource: the service hands the hook a document instead of
resource properties (``stack_model``, ``change_set_model``), the user guide's shapes.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, Iterable, Optional, Protocol

from cfnrun.model.schema_values import stringify_primitives
from cfnrun.stacks.plan import ResourceChange
from cfnrun.stacks.provisioning import StackContext
from cfnrun.stacks.template_lines import resource_lines

HOOK_STATUSES = ("HOOK_IN_PROGRESS", "HOOK_COMPLETE_SUCCEEDED", "HOOK_COMPLETE_FAILED", "HOOK_FAILED")
FAILED_HOOK_STATUSES = ("HOOK_COMPLETE_FAILED", "HOOK_FAILED")  # the hook judged against the target, or could not judge it
INVOCATION_POINT = "PRE_PROVISION"
STACK_TARGET = "STACK"
CHANGE_SET_TARGET = "CHANGE_SET"
# How many times a hook may answer IN_PROGRESS before the service gives up on it: the Hooks user guide's (concepts: "limited
# to 3 retry attempts"; Lambda hooks: "A Hook can return IN_PROGRESS 3 times"); a fourth IN_PROGRESS fails it (cfnrun's reading).
MAX_IN_PROGRESS = 3
# A CHANGE_SET target's only action (the Hooks user guide: concepts, target filters), for a change set of any type: its
# hooks run at CREATE_PRE_PROVISION, as the Lambda hooks chapter's example of a change set updating a stack shows.
CHANGE_SET_ACTION = "CREATE"
# a change set's Add / Modify / Remove as a changed resource's action in what a CHANGE_SET hook receives
CHANGE_ACTIONS = {"Add": "CREATE", "Modify": "UPDATE", "Remove": "DELETE", "Import": "IMPORT"}  # Import: inferred, as hooks name the others


@dataclass(frozen=True)
class HookedOperation:
    """What a hook is about to judge, and what it is shown.

    ``operation`` is the configuration's TargetOperation (RESOURCE, STACK, CHANGE_SET, CLOUD_CONTROL).
    For a resource (RESOURCE, CLOUD_CONTROL) ``type_name`` is its type and the properties are its
    own; for a STACK or CHANGE_SET target ``type_name`` is STACK or CHANGE_SET, ``logical_id`` the
    stack's name or the change set's id, and ``model`` the document the service hands the hook.
    """

    stack: StackContext
    action: str  # CREATE, UPDATE or DELETE
    logical_id: str
    type_name: str
    properties: Dict[str, Any]
    previous_properties: Optional[Dict[str, Any]] = None
    operation: str = "RESOURCE"
    model: Optional[Dict[str, Any]] = None
    change_set_id: Optional[str] = None  # a CHANGE_SET target's, or the change set whose execution this operation is part of
    target_id: Optional[str] = None  # how its hook results are found: a change set's ARN, a Cloud Control request's HooksRequestToken
    skipped: FrozenSet[str] = frozenset()  # hooks not to run: on a STACK target, those that passed its change set with SKIP_STACK_HOOK
    previous_template: Optional[str] = None  # a CHANGE_SET target's stack's last deployed template (its text): a Guard hook's Previous

    @property
    def target_type(self) -> str:
        """The request's ``targetType``: a Cloud Control operation's target is a resource."""
        return self.operation if self.operation in (STACK_TARGET, CHANGE_SET_TARGET) else "RESOURCE"


@dataclass(frozen=True)
class HookReport:
    """One hook's progress on one target, as its stack event shows it."""

    hook_type: str
    status: str  # one of HOOK_STATUSES
    failure_mode: str  # FAIL or WARN
    reason: Optional[str] = None
    skips_stack_hook: bool = False  # a CHANGE_SET hook answered CHANGE_SET_SUCCESS_SKIP_STACK_HOOK: not asked again when it executes
    invocation_id: Optional[str] = None  # the same on an invocation's HOOK_IN_PROGRESS and its verdict: its hook result's id


class HookGate(Protocol):
    async def before(self, target: HookedOperation, report: Callable[[HookReport], None]) -> Optional[str]:
        """Run the hooks that target this operation; the failure reason when one in FAIL mode failed, else None."""


# The service's words in a hook's stack events (DescribeStackEvents of custom, Lambda and Guard hooks, 2022 to 2025):
# "Invoking hook" while it runs, then the hook's message behind "Hook succeeded with message: " or "Hook failed with message: ".
IN_PROGRESS_REASON = "Invoking hook"
_VERDICT_WORDS = {"HOOK_COMPLETE_SUCCEEDED": "Hook succeeded with message: ", "HOOK_COMPLETE_FAILED": "Hook failed with message: "}


def verdict_reason(status: str, message: str) -> str:
    """A finished hook's HookStatusReason in a stack event: its message as the service words a verdict there.

    Only the stack events are worded so: hook results (GetHookResult) and the reasons cfnrun composes for a change set or a
    Cloud Control request keep the hook's own message. HOOK_FAILED's reason is cfnrun's own (no stored text shows the service's).
    """
    words = _VERDICT_WORDS.get(status)
    return f"{words}{message}" if words else message


def hook_failure(hook_types: "list[str]", operation: str = "RESOURCE") -> str:
    """The reason an operation fails with when its hooks in FAIL mode failed.

    A resource's is the Hooks user guide's (and the service's still, in 2025): "The following hook(s) failed: [...]"; a stack
    operation's is taken to be the same (inferred). A change set the service's change-set hooks refuse (Early Validation among
    them) says "hook(s)/validation"; a Cloud Control request is worded as a change set is (inferred: no stored text shows one).
    """
    words = "hook(s)/validation" if operation in (CHANGE_SET_TARGET, "CLOUD_CONTROL") else "hook(s)"
    return f"The following {words} failed: [{', '.join(hook_types)}]"


def with_reasons(refused: str, reports: Iterable[HookReport]) -> str:
    """A refusal with each failed FAIL-mode hook's own reason, where no stack event shows them (a change set, a Cloud Control request)."""
    reasons = [f"{r.hook_type}: {r.reason}" for r in reports if r.failure_mode == "FAIL" and r.status in FAILED_HOOK_STATUSES and r.reason]
    return ". ".join([refused, *reasons])


def stack_model(template: Optional[str], previous_template: Optional[str]) -> Dict[str, Any]:
    """What a STACK hook receives: the template (none on a delete) and the previous one (on an update or a delete), each the
    text it was given as, JSON or YAML ("depending on what was provided to CloudFormation": the Hooks user guide)."""
    model = {"template": template, "previousTemplate": previous_template}
    return {key: value for key, value in model.items() if value is not None}


def managed_hook_model(target: HookedOperation) -> Optional[Dict[str, Any]]:
    """A STACK or CHANGE_SET target's document as a Lambda or Guard hook gets it: on a stack's delete "no template values
    are provided" (the Hooks user guide, both chapters), where a custom hook still gets the previous template."""
    if target.model is None:
        return None
    return {} if target.operation == STACK_TARGET and target.action == "DELETE" else target.model


def _context(properties: Optional[Dict[str, Any]]) -> Optional[str]:
    """A changed resource's properties as the payload gives them: JSON text, every number and boolean a string (the guide)."""
    return json.dumps({"Properties": stringify_primitives(properties)}) if properties is not None else None


def change_set_model(body: str, changes: Iterable[ResourceChange], before: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """What a CHANGE_SET hook receives: the template's text (JSON or YAML, as given) and each changed resource (``before``: the
    current properties by logical id),
    with what it has now (``beforeContext``, none when it is added) and what executing the change set would give it
    (``afterContext``, none when it is removed; a value not known before execution as the change set shows it), and the line of
    the template's text (``body``) declaring it (``lineNumber``, none when it is removed, as the guide says)."""
    changes = list(changes)
    lines = resource_lines(body, (change.logical_id for change in changes if change.action != "Remove"))
    changed = []
    for change in changes:
        if change.action not in CHANGE_ACTIONS:  # a drift-aware SyncWithActual changes no resource
            continue
        changed.append(
            {
                "logicalResourceId": change.logical_id,
                "resourceType": change.resource_type,
                "action": CHANGE_ACTIONS[str(change.action)],
                "beforeContext": _context(before.get(change.logical_id)) if change.action != "Add" else None,
                "afterContext": _context(change.after) if change.action != "Remove" else None,
                "lineNumber": lines.get(change.logical_id),
            }
        )
    return {"template": body, "changedResources": changed}
