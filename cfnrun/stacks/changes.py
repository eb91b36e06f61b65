"""A change set's Changes as DescribeChangeSet shows them, rendered from its ``ChangePlan`` (``plan.py``).

Only the resources the plan acts on are listed: Add for a new resource, Remove for one the
template no longer has (or whose Condition no longer holds), Modify for one whose properties
differ, with its Replacement and one detail per changed top-level property.
"""
from __future__ import annotations

from typing import Any, Dict, List

from cfnrun.stacks.plan import ChangePlan, ResourceChange


def described_changes(plan: ChangePlan) -> List[Dict[str, Any]]:
    """The ``Changes`` member of DescribeChangeSet."""
    return [{"Type": "Resource", "ResourceChange": described_change(c)} for c in plan.changes]


def described_change(change: ResourceChange) -> Dict[str, Any]:
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
    return {k: v for k, v in shape.items() if v is not None}  # botocore omits the members without a value
