"""A change set's Changes as DescribeChangeSet shows them, rendered from its ``ChangePlan`` (``plan.py``).

Only the resources the plan acts on are listed: Add for a new resource, Remove for one the
template no longer has (or whose Condition no longer holds), Modify for one whose properties or
Metadata differ, with its Replacement, its Scope and the details of each changed attribute
(``change_details.py``). With IncludePropertyValues each change also carries its BeforeContext and
AfterContext, each detail's target its Path, BeforeValue, AfterValue and AttributeChangeType, and
an Add its Replacement ``True`` — the members AWS's recorded answers have only then. A Remove and a
replacing Modify say what becomes of the physical resource (PolicyAction). A drift-aware change set's changes
(``drift_aware.py``) also carry each resource's ResourceDriftStatus and the writeOnly properties whose drift was not
looked for; with IncludePropertyValues, where each before-value came from, the actual state as BeforeContext, the
previous deployment as PreviousDeploymentContext and, for a drifted property, its LiveResourceDrift.
"""
from __future__ import annotations

import datetime
import json
from typing import Any, Dict, List, Mapping, Optional, Protocol

from cfnrun.stacks.change_details import ChangeDetail
from cfnrun.stacks.drift_aware import TEMPLATE, WRITE_ONLY_PROPERTY, ActualState
from cfnrun.stacks.plan import ChangePlan, ResourceChange


class PropertyValues(Protocol):
    """How IncludePropertyValues shows values: writeOnly and NoEcho values masked."""

    def context(self, type_name: str, properties: Dict[str, Any]) -> str:
        """``{"Properties": …}`` as JSON text."""

    def value(self, type_name: str, detail: ChangeDetail, value: Any) -> str:
        """One detail's before- or after-value as text."""


def described_changes(
    plan: ChangePlan, values: Optional[PropertyValues] = None, hook_counts: Optional[Mapping[str, int]] = None,
) -> List[Dict[str, Any]]:
    """The ``Changes`` member of DescribeChangeSet; with ``values`` (IncludePropertyValues), what the plan knows of the
    values before and after, KNOWN_AFTER_APPLY where not yet known; ``hook_counts``: how many hooks will be invoked for
    each resource (``HookInvocationCount``, left out where none will)."""
    counts = hook_counts or {}
    return [
        _present({"Type": "Resource", "HookInvocationCount": counts.get(c.logical_id) or None, "ResourceChange": described_change(c, values)})
        for c in plan.changes
    ]


def described_change(change: ResourceChange, values: Optional[PropertyValues] = None) -> Dict[str, Any]:
    replacement = "True" if change.action == "Add" and values is not None else change.replacement
    drift = change.drift
    shape: Dict[str, Any] = {
        "PolicyAction": change.policy_action,
        "Action": change.action,
        "LogicalResourceId": change.logical_id,
        "PhysicalResourceId": change.physical_id,
        "ResourceType": change.resource_type,
        "Replacement": replacement,
        "Scope": list(change.scope),
        "ResourceDriftStatus": drift.status if drift is not None else None,
        "ResourceDriftIgnoredAttributes": _ignored(drift, change.after or change.before or {}) if drift is not None else None,
        "Details": [_detail(change.resource_type, d, values, drift) for d in change.details],
    }
    if values is not None:
        if change.before is not None and change.action != "Add":
            actual = drift.restored(change.before) if drift is not None and drift.read else change.before
            shape["BeforeContext"] = values.context(change.resource_type, actual)
            if drift is not None:
                shape["PreviousDeploymentContext"] = values.context(change.resource_type, change.before)
        if change.after is not None and change.action != "Remove":
            shape["AfterContext"] = values.context(change.resource_type, change.after)
    return _present(shape)


def _ignored(drift: ActualState, properties: Mapping[str, Any]) -> Optional[List[Dict[str, str]]]:
    """ResourceDriftIgnoredAttributes: the writeOnly properties the resource sets (READ never shows them)."""
    ignored = [{"Path": f"/Properties/{name}", "Reason": WRITE_ONLY_PROPERTY} for name in sorted(drift.write_only & set(properties))]
    return ignored or None


def _detail(type_name: str, detail: ChangeDetail, values: Optional[PropertyValues], drift: Optional[ActualState] = None) -> Dict[str, Any]:
    target: Dict[str, Any] = {"Attribute": detail.attribute, "Name": detail.name, "RequiresRecreation": detail.requires_recreation}
    if values is not None:
        target.update(
            Path=detail.path,
            BeforeValue=None if detail.before is None else values.value(type_name, detail, detail.before),
            AfterValue=None if detail.after is None else values.value(type_name, detail, detail.after),
            AttributeChangeType=detail.change_type,
        )
        if drift is not None and detail.before_from is not None:
            target.update(BeforeValueFrom=detail.before_from, AfterValueFrom=TEMPLATE)
        if drift is not None and detail.drift is not None:
            previous, actual = detail.drift
            target["Drift"] = _present({
                "PreviousValue": None if previous is None else values.value(type_name, detail, previous),
                "ActualValue": None if actual is None else values.value(type_name, detail, actual),
                "DriftDetectionTimestamp": datetime.datetime.fromtimestamp(drift.checked_at, tz=datetime.timezone.utc),
            })
    return _present(
        {"Target": _present(target), "Evaluation": detail.evaluation, "ChangeSource": detail.change_source, "CausingEntity": detail.causing_entity}
    )


def value_text(value: Any) -> str:
    """A value as a detail shows it: text as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _present(shape: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in shape.items() if v is not None}  # botocore omits the members without a value
