"""What an update would change, resource by resource: a change set's Changes.

Add for a new resource, Remove for one the template no longer has (or whose Condition no longer
holds), Modify for one whose resolved properties differ. A property that depends on a resource
the same update adds, modifies or replaces cannot be known before it runs: it is evaluated
Dynamic and may (Conditional) replace the resource, as the service reports it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple

from cfnrun.stacks.blueprint import Blueprint, TemplateProblem
from cfnrun.stacks.provisioning import Provisioners, Replacement, UnknownType
from cfnrun.stacks.records import StackResource


@dataclass(frozen=True)
class ChangeDetail:
    name: str  # the top-level property
    requires_recreation: str  # Never | Conditionally | Always
    evaluation: str  # Static | Dynamic
    change_source: str  # DirectModification | ResourceReference | ParameterReference


@dataclass(frozen=True)
class ResourceChange:
    action: str  # Add | Modify | Remove
    logical_id: str
    resource_type: str
    physical_id: Optional[str] = None
    replacement: Optional[str] = None  # True | False | Conditional, for Modify
    details: Tuple[ChangeDetail, ...] = ()

    @property
    def scope(self) -> Tuple[str, ...]:
        return ("Properties",) if self.details else ()


def _changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> List[str]:
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


def plan_changes(
    resources: Mapping[str, StackResource], before: Optional[Blueprint], after: Blueprint, provisioners: Provisioners
) -> List[ResourceChange]:
    changes: List[ResourceChange] = []
    moving: Set[str] = set()  # resources this update adds, replaces or may replace: what references them is Dynamic
    for logical_id in after.resource_ids():
        type_name = after.type_of(logical_id)
        current = resources.get(logical_id)
        if current is None or not current.exists:
            changes.append(ResourceChange("Add", logical_id, type_name))
            moving.add(logical_id)
            continue
        change = _modification(logical_id, resources, before, after, provisioners, moving)
        if change is not None:
            changes.append(change)
            if change.replacement != "False":
                moving.add(logical_id)
    kept = set(after.resource_ids())
    for logical_id, current in resources.items():
        if logical_id not in kept and current.exists:
            changes.append(ResourceChange("Remove", logical_id, current.type_name, current.physical_id))
    return changes


def _modification(
    logical_id: str,
    resources: Mapping[str, StackResource],
    before: Optional[Blueprint],
    after: Blueprint,
    provisioners: Provisioners,
    moving: Set[str],
) -> Optional[ResourceChange]:
    type_name, current = after.type_of(logical_id), resources[logical_id]
    if type_name != current.type_name:
        return ResourceChange("Modify", logical_id, type_name, current.physical_id, "True")
    try:
        provisioner = provisioners.for_type(type_name)
    except UnknownType:
        return None
    dynamic = bool(after.dependencies.get(logical_id, frozenset()) & moving)
    try:
        properties: Dict[str, Any] = after.properties(logical_id, resources)
    except TemplateProblem:
        properties, dynamic = {}, True
    same_declaration = before is not None and before.declaration(logical_id) == after.declaration(logical_id)
    if not dynamic and properties == (current.properties or {}):
        return None
    if dynamic and same_declaration:
        names = sorted(after.references_to(logical_id, moving))
    else:
        names = _changed(current.properties or {}, properties) if not dynamic else sorted(after.property_names(logical_id))
    details = []
    for name in names:
        recreation = provisioner.replacement(type_name, name)
        if dynamic and recreation is Replacement.ALWAYS:
            recreation = Replacement.CONDITIONALLY
        source = "ResourceReference" if dynamic else ("ParameterReference" if same_declaration else "DirectModification")
        details.append(ChangeDetail(name, recreation.value, "Dynamic" if dynamic else "Static", source))
    recreations = {d.requires_recreation for d in details}
    replacement = "True" if "Always" in recreations else ("Conditional" if "Conditionally" in recreations else "False")
    return ResourceChange("Modify", logical_id, type_name, current.physical_id, replacement, tuple(details))

