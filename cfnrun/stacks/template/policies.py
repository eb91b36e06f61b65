"""DeletionPolicy and UpdateReplacePolicy as the stack engine applies them.

Both default to ``Delete``. ``Snapshot`` keeps the resource locally, as ``Retain`` does: a
snapshot is what an account keeps of a deleted database, and there is no account here. A
policy may be an intrinsic function (``!If [IsProd, Retain, Delete]``, ``!Ref PolicyParam``), worked
out with the stack's values: the service's core language takes them, with or without
``AWS::LanguageExtensions``.
"""
from __future__ import annotations

from typing import Optional, Tuple

from cfnrun.stacks.template.declarations import DELETION_POLICIES, UPDATE_REPLACE_POLICIES, Policy, ResourceDeclaration
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.intrinsics import ResolveContext, resolve

DEFAULT_POLICY = "Delete"


def deletion_policy(resource: ResourceDeclaration, context: ResolveContext) -> str:
    """The resource's DeletionPolicy: Delete, Retain, RetainExceptOnCreate or Snapshot."""
    return _policy(resource.deletion_policy, "DeletionPolicy", DELETION_POLICIES, resource.logical_id, context)


def update_replace_policy(resource: ResourceDeclaration, context: ResolveContext) -> str:
    """The resource's UpdateReplacePolicy: Delete, Retain or Snapshot."""
    return _policy(resource.update_replace_policy, "UpdateReplacePolicy", UPDATE_REPLACE_POLICIES, resource.logical_id, context)


def keeps_resource(policy: str, *, rolling_back_create: bool = False) -> bool:
    """Does this policy leave the resource in place where Delete would delete it? (RetainExceptOnCreate deletes
    what a failed create made.)"""
    if policy == "RetainExceptOnCreate":
        return not rolling_back_create
    return policy in ("Retain", "Snapshot")


def _policy(declared: Optional[Policy], attribute: str, allowed: Tuple[str, ...], logical_id: str, context: ResolveContext) -> str:
    where = f"Resources.{logical_id}.{attribute}"
    value = DEFAULT_POLICY if declared is None else resolve(declared, context, where)
    if value not in allowed:
        raise TemplateError(f"Template format error: Unrecognized {attribute} {value} for resource {logical_id}; "
                            f"it must be one of [{', '.join(allowed)}]", where)
    return str(value)
