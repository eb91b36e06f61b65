"""Stack policies: the JSON document that says which updates a stack's resources may take.

Read from the AWS user guide ("Prevent updates to stack resources"): once a stack has a policy,
every update action on every resource is denied unless a statement allows it, and a ``Deny``
wins over any ``Allow``. A statement names its ``Effect`` (Allow | Deny), its ``Action`` or
``NotAction`` (``Update:Modify``, ``Update:Replace``, ``Update:Delete``, ``Update:*``), its
``Principal`` (only ``*``), its ``Resource`` or ``NotResource`` (``*`` or
``LogicalResourceId/<id>``, ``*`` a wildcard) and an optional ``Condition`` on the
``ResourceType`` (``StringEquals``, ``StringLike`` and their ``Not`` forms). The policy applies to
updates only: a create or a delete of the stack ignores it.

The failure reasons are the service's as users have quoted them (``Action denied by stack policy:
Statement [#1] does not allow [Update:Replace] for resource [LogicalResourceId/VPC];``); the text
when no statement allows an action is inferred from the same pattern. A Conditional replacement
is judged as ``Update:Replace`` before the update runs (the service settles it per resource;
deciding up front is cfnrun's choice, inferred, and the safer one for a protected resource).
"""
from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from cfnrun.stacks.plan import ChangePlan, ResourceChange

UPDATE_ACTIONS = ("Update:Modify", "Update:Replace", "Update:Delete")
_CONDITIONS = ("StringEquals", "StringNotEquals", "StringLike", "StringNotLike")


class StackPolicyError(Exception):
    """A stack policy the service would refuse (its message is the API's ValidationError)."""


@dataclass(frozen=True)
class Statement:
    number: int  # its place in the policy, from 1, as the failure reason names it
    effect: str
    actions: Tuple[str, ...]
    not_actions: bool
    resources: Tuple[str, ...]
    not_resources: bool
    conditions: Tuple[Tuple[str, Tuple[str, ...]], ...]  # (operator, resource types)

    def matches(self, action: str, logical_id: str, resource_type: str) -> bool:
        acted = any(fnmatch.fnmatchcase(action, pattern) for pattern in self.actions) != self.not_actions
        target = f"LogicalResourceId/{logical_id}"
        aimed = any(fnmatch.fnmatchcase(target, pattern) for pattern in self.resources) != self.not_resources
        return acted and aimed and all(_holds(operator, types, resource_type) for operator, types in self.conditions)


@dataclass(frozen=True)
class StackPolicy:
    body: str
    statements: Tuple[Statement, ...]

    def refusal(self, action: str, logical_id: str, resource_type: str) -> Optional[str]:
        """Why the policy refuses ``action`` on the resource (its UPDATE_FAILED reason), or None if it allows it."""
        target = f"[LogicalResourceId/{logical_id}]"
        matching = [s for s in self.statements if s.matches(action, logical_id, resource_type)]
        denied = next((s for s in matching if s.effect == "Deny"), None)
        if denied is not None:
            return f"Action denied by stack policy: Statement [#{denied.number}] does not allow [{action}] for resource {target};"
        if not any(s.effect == "Allow" for s in matching):
            return f"Action not allowed by stack policy: No statement allows [{action}] for resource {target};"
        return None


def _holds(operator: str, types: Tuple[str, ...], resource_type: str) -> bool:
    if operator.endswith("Like"):
        found = any(fnmatch.fnmatchcase(resource_type, pattern) for pattern in types)
    else:
        found = resource_type in types
    return found != ("Not" in operator)


def _texts(value: Any, where: str) -> Tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(item, str) for item in items):
        raise StackPolicyError(f"Error validating stack policy: {where} must be a string or a list of strings")
    return tuple(items)


def _statement(number: int, raw: Any) -> Statement:
    if not isinstance(raw, dict):
        raise StackPolicyError(f"Error validating stack policy: Statement [#{number}] must be an object")
    effect = raw.get("Effect")
    if effect not in ("Allow", "Deny"):
        raise StackPolicyError(f"Error validating stack policy: Statement [#{number}] Effect must be Allow or Deny")
    if raw.get("Principal") != "*":
        raise StackPolicyError(f"Error validating stack policy: Statement [#{number}] Principal must be \"*\"")
    action_key = "NotAction" if "NotAction" in raw else "Action"
    actions = _texts(raw.get(action_key), f"Statement [#{number}] {action_key}")
    for action in actions:
        if not any(fnmatch.fnmatchcase(known, action) for known in UPDATE_ACTIONS):
            raise StackPolicyError(f"Error validating stack policy: Statement [#{number}] has an unknown action [{action}]")
    resource_key = "NotResource" if "NotResource" in raw else "Resource"
    resources = _texts(raw.get(resource_key), f"Statement [#{number}] {resource_key}")
    conditions: List[Tuple[str, Tuple[str, ...]]] = []
    for operator, tests in (raw.get("Condition") or {}).items():
        if operator not in _CONDITIONS or not isinstance(tests, dict) or set(tests) != {"ResourceType"}:
            raise StackPolicyError(
                f"Error validating stack policy: Statement [#{number}] Condition supports only {', '.join(_CONDITIONS)} on ResourceType"
            )
        conditions.append((operator, _texts(tests["ResourceType"], f"Statement [#{number}] Condition {operator} ResourceType")))
    return Statement(number, effect, actions, action_key == "NotAction", resources, resource_key == "NotResource", tuple(conditions))


def parse_policy(body: str) -> StackPolicy:
    """A StackPolicyBody read and checked; raises StackPolicyError."""
    try:
        document = json.loads(body)
    except ValueError as error:
        raise StackPolicyError(f"Error validating stack policy: Invalid JSON: {error}") from None
    statements = document.get("Statement") if isinstance(document, dict) else None
    if not isinstance(statements, list):
        raise StackPolicyError("Error validating stack policy: a policy must have a Statement list")
    return StackPolicy(body, tuple(_statement(number, raw) for number, raw in enumerate(statements, 1)))


def update_action(change: ResourceChange) -> Optional[str]:
    """The stack policy action a planned change takes: Update:Modify, Update:Replace, Update:Delete, or None (an Add)."""
    if change.action == "Remove":
        return "Update:Delete"
    if change.action == "Modify":
        return "Update:Modify" if change.replacement == "False" else "Update:Replace"
    return None


def refusals(policy: Optional[StackPolicy], plan: ChangePlan) -> Dict[str, str]:
    """Each planned change the policy refuses, by logical id, with its reason (none without a policy)."""
    refused: Dict[str, str] = {}
    if policy is None:
        return refused
    for change in plan.changes:
        action = update_action(change)
        reason = policy.refusal(action, change.logical_id, change.resource_type) if action else None
        if reason is not None:
            refused[change.logical_id] = reason
    return refused


def policy_of(body: Optional[str]) -> Optional[StackPolicy]:
    """The stack's policy as kept (checked when it was set), or None."""
    return parse_policy(body) if body else None
