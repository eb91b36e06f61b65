"""A change set's Changes as DescribeChangeSet shows them, rendered from its ``ChangePlan`` (``plan.py``).

Only the resources the plan acts on are listed: Add for a new resource, Remove for one the
template no longer has (or whose Condition no longer holds), Modify for one whose properties
differ, with its Replacement and one detail per changed top-level property.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from cfnrun.stacks.plan import ChangePlan, ResourceChange


# (type name, properties) → ``{"Properties": …}`` as JSON text, writeOnly and NoEcho values masked
Context = Callable[[str, Dict[str, Any]], str]


def described_changes(plan: ChangePlan, context: Optional[Context] = None) -> List[Dict[str, Any]]:
    """The ``Changes`` member of DescribeChangeSet; with ``context`` (IncludePropertyValues), each change's
    BeforeContext and AfterContext: the plan's before and after properties, KNOWN_AFTER_APPLY where not yet known."""
    return [{"Type": "Resource", "ResourceChange": described_change(c, context)} for c in plan.changes]


def described_change(change: ResourceChange, context: Optional[Context] = None) -> Dict[str, Any]:
    shape: Dict[str, Any] = {
        "Action": change.action,
        "LogicalResourceId": change.logical_id,
        "PhysicalResourceId": change.physical_id,
        "ResourceType": change.resource_type,
        "Replacement": change.replacement,
        "Scope": list(change.scope),
        "Details": [
            {
                "Target": {"Attribute": "Properties", "Name": d.name, "RequiresRecreation": d.requires_recreation},
                "Evaluation": d.evaluation,
                "ChangeSource": d.change_source,
            }
            for d in change.details
        ],
    }
    if context is not None:
        if change.before is not None and change.action != "Add":
            shape["BeforeContext"] = context(change.resource_type, change.before)
        if change.after is not None and change.action != "Remove":
            shape["AfterContext"] = context(change.resource_type, change.after)
    return {k: v for k, v in shape.items() if v is not None}  # botocore omits the members without a value
