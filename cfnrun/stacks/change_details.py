"""The details of one changed attribute of a resource, as DescribeChangeSet writes them.

A change has a source and, when something other than the template's own text moved it, a cause.
The service writes a value that changed because a parameter did, or because another resource's
attribute (or id) will, as two details with the same target: a ``DirectModification`` evaluated
``Dynamic`` and the cause evaluated ``Static`` — ``ParameterReference`` with the parameter's name,
``ResourceAttribute`` with ``Resource.Attribute``, ``ResourceReference`` with the resource's logical
id — as AWS's recorded answers show. Everything else (an edited value, a changed mapping value, a
pseudo parameter) is one ``DirectModification`` evaluated ``Static``. (The pair for ``Ref`` of a
replaced resource, ``ResourceReference``, is inferred from the API reference's description of the
ChangeSource values, not from a recorded answer.)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Set, Tuple

from cfnrun.stacks.blueprint import KNOWN_AFTER_APPLY
from cfnrun.stacks.template.dependencies import references

UNDECLARED = object()  # the attribute is not in that template


@dataclass(frozen=True)
class ChangeDetail:
    """One ResourceChangeDetail: what changes (``attribute``, ``name``), why, and the values before and after."""

    name: Optional[str]  # the top-level property; None for Metadata
    requires_recreation: str  # Never | Conditionally | Always
    evaluation: str  # Static | Dynamic
    change_source: str  # DirectModification | ParameterReference | ResourceAttribute | ResourceReference
    causing_entity: Optional[str] = None
    attribute: str = "Properties"  # Properties | Metadata
    before: Any = None  # None: the attribute was not set
    after: Any = None  # None: it is no longer set; KNOWN_AFTER_APPLY: not known before execution
    # drift-aware change sets only (``drift_aware.py``): where the before-value comes from, and for a drifted property
    # its value as last deployed and as it actually is; ``sync``: the template now says what it actually is
    before_from: Optional[str] = None
    drift: Optional[Tuple[Any, Any]] = None
    sync: bool = False

    @property
    def path(self) -> str:
        return f"/{self.attribute}/{self.name}" if self.name is not None else f"/{self.attribute}"

    @property
    def change_type(self) -> str:
        """The AttributeChangeType."""
        if self.sync:
            return "SyncWithActual"
        if self.before is None:
            return "Add"
        return "Remove" if self.after is None else "Modify"

    @property
    def known(self) -> bool:
        return self.after != KNOWN_AFTER_APPLY


@dataclass(frozen=True)
class Change:
    """One changed attribute: its target, its values, the template's expression of it before and after."""

    name: Optional[str]
    attribute: str
    requires_recreation: str
    before: Any
    after: Any
    declared_before: Any  # UNDECLARED when the previous template had no such resource or attribute
    declared_after: Any


def details_of(
    change: Change, moving: Set[str], conditions: Mapping[str, bool], parameters_before: Optional[Mapping[str, str]],
    parameters_after: Mapping[str, str],
) -> List[ChangeDetail]:
    """The details of one changed attribute. ``moving``: the resources this operation adds or (maybe) replaces."""

    def detail(evaluation: str, source: str, entity: Optional[str] = None) -> ChangeDetail:
        return ChangeDetail(change.name, change.requires_recreation, evaluation, source, entity, change.attribute, change.before, change.after)

    causes: List[Tuple[str, str]] = []
    used = list(references(change.declared_after, conditions))
    if change.after == KNOWN_AFTER_APPLY:
        for reference in used:
            if reference.name not in moving:
                continue
            if reference.by_attribute and reference.attribute:
                causes.append(("ResourceAttribute", f"{reference.name}.{reference.attribute}"))
            elif not reference.by_attribute:
                causes.append(("ResourceReference", reference.name))
        direct = detail("Dynamic", "DirectModification")
    elif change.declared_before is not UNDECLARED and change.declared_before == change.declared_after and parameters_before is not None:
        for reference in used:
            if reference.name in parameters_after and parameters_before.get(reference.name) != parameters_after[reference.name]:
                causes.append(("ParameterReference", reference.name))
        direct = detail("Dynamic" if causes else "Static", "DirectModification")
    else:
        direct = detail("Static", "DirectModification")
    return [direct] + [detail("Static", source, entity) for source, entity in dict.fromkeys(causes)]
