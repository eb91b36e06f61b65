"""One stack operation's change plan: what happens to each resource, decided once, before anything runs.

A plan is made from the stack as it stands, the operation's blueprint and the provisioners'
replacement rules. For every resource it says the action (Add, Modify, Remove, or none), whether
a Modify replaces it (True, False, Conditional), the details of each changed top-level property and
of changed Metadata (``change_details.py``: their source and cause) and the properties before and
after. DescribeChangeSet shows the plan (``changes.py``) and the engine carries it out step for
step: it replaces what the plan replaces, updates the rest in place and deletes the Removes in the
cleanup phase; it never asks the provisioners again. CreateStack and UpdateStack are change sets made and executed at once.
A plan is made against the stack as it stands: once another operation changes the stack, a change set's plan no
longer describes it, and the store makes the change set OBSOLETE rather than execute it.

A property that depends on a resource the same operation adds or (maybe) replaces cannot be known
before that resource runs: it is evaluated Dynamic, a replacement it would cause is only
Conditional, and its after-value is ``{{changeSet:KNOWN_AFTER_APPLY}}``, as the service writes it.
Only the values a resource uses count: a DependsOn alone is no change. A Metadata change is a
Modify in the plan; when it is the only change, the engine records the new Metadata with the resource's
UPDATE_IN_PROGRESS and UPDATE_COMPLETE events and does not call its handler. Whether a Conditional
replacement happens is settled at execution by the same details: a changed property the plan
marked Conditionally or Always replaces the resource. (The granularity — a whole top-level
property is unknown if any part of it is — is cfnrun's, inferred rather than read.)
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Set, Tuple

from cfnrun.model.schema_values import stringify_primitives
from cfnrun.stacks.blueprint import KNOWN_AFTER_APPLY, Blueprint, TemplateProblem
from cfnrun.stacks.change_details import UNDECLARED, Change, ChangeDetail, details_of
from cfnrun.stacks.drift import DELETED
from cfnrun.stacks.drift_aware import NO_MODIFICATION, PREVIOUS_DEPLOYMENT_STATE, SYNC_WITH_ACTUAL, ActualState
from cfnrun.stacks.provisioning import Provisioners, Replacement, NoProvisioner
from cfnrun.stacks.records import StackResource

AUTOMATIC = "Automatic"  # the ChangeSource of a nested stack changed by its template, not by its properties

__all__ = ["KNOWN_AFTER_APPLY", "ChangeDetail", "ChangePlan", "ResourceChange", "plan_create", "plan_update"]


@dataclass(frozen=True)
class ResourceChange:
    """One resource in the plan; ``action`` None: the operation leaves it as it is."""

    action: Optional[str]  # Add | Modify | Remove | None
    logical_id: str
    resource_type: str
    physical_id: Optional[str] = None
    replacement: Optional[str] = None  # True | False | Conditional, for Modify
    details: Tuple[ChangeDetail, ...] = ()
    before: Optional[Dict[str, Any]] = None  # the properties last applied (Modify, Remove)
    after: Optional[Dict[str, Any]] = None  # the properties to apply, KNOWN_AFTER_APPLY where not yet known
    policy_action: Optional[str] = None  # what becomes of the physical resource: Delete, Retain, ReplaceAndDelete, …
    drift: Optional[ActualState] = None  # a drift-aware change set's: the resource as READ found it (``drift_aware.py``)

    @property
    def scope(self) -> Tuple[str, ...]:
        return tuple(sorted({d.attribute for d in self.details}))

    @property
    def automatic(self) -> bool:
        """Is it a nested stack updated for its child template's sake (a ChangeSource of Automatic)?"""
        return any(d.change_source == AUTOMATIC for d in self.details)

    @property
    def reverts_drift(self) -> bool:
        """Does the update bring a drifted property back to the template (so the handler is called, whatever the
        template changed)?"""
        return any(d.drift is not None and not d.sync for d in self.details)

    def replaces(self, changed: List[str]) -> bool:
        """Is the resource replaced, now that ``changed`` (the top-level properties that differ at execution) are known?"""
        if self.replacement == "True":
            return True
        if self.replacement != "Conditional":
            return False
        recreating = {d.name for d in self.details if d.name is not None and d.requires_recreation != Replacement.NEVER.value}
        return any(name in recreating for name in changed)


@dataclass(frozen=True)
class ChangePlan:
    blueprint: Blueprint  # the template and parameters the operation applies
    resources: Dict[str, ResourceChange]  # every resource of the blueprint and every one it removes, by logical id

    @property
    def changes(self) -> List[ResourceChange]:
        """What DescribeChangeSet lists: the resources with an action, in the plan's order."""
        return [c for c in self.resources.values() if c.action is not None]

    def nested_templates_changed(self) -> bool:
        """Does the plan update a nested stack whose child template changed (the parent's template may be the same)?"""
        return any(c.automatic for c in self.changes)

    def imported(self) -> FrozenSet[str]:
        """The resources the plan imports rather than creates (ImportExistingResources found them)."""
        return frozenset(c.logical_id for c in self.resources.values() if c.action == "Import")

    def removed(self) -> List[str]:
        return [c.logical_id for c in self.resources.values() if c.action == "Remove"]

    def of(self, logical_id: str) -> ResourceChange:
        return self.resources[logical_id]


def plan_create(blueprint: Blueprint) -> ChangePlan:
    """A new stack's plan: every resource is added (their values are worked out as each runs)."""
    return ChangePlan(blueprint, {lid: ResourceChange("Add", lid, blueprint.type_of(lid)) for lid in blueprint.resource_ids()})


def plan_update(
    resources: Mapping[str, StackResource], before: Optional[Blueprint], after: Blueprint, provisioners: Provisioners,
    actual: Optional[Mapping[str, ActualState]] = None,
) -> ChangePlan:
    """What applying ``after`` to a stack with ``resources`` (made from ``before``) does, resource by resource.
    ``actual``: a drift-aware change set's, each existing resource as READ found it (``drift_aware.py``)."""
    planned: Dict[str, ResourceChange] = {}
    moving: Set[str] = set()  # resources this update adds, replaces or may replace: what references them is Dynamic
    for logical_id in after.resource_ids():
        type_name = after.type_of(logical_id)
        current = resources.get(logical_id)
        state = actual.get(logical_id) if actual is not None else None
        if current is None or not current.exists or (state is not None and state.status == DELETED):
            # a resource deleted outside CloudFormation is made again by a drift-aware change set
            made = after.planned_properties(logical_id, resources, moving)
            planned[logical_id] = ResourceChange("Add", logical_id, type_name, after=made, drift=state if current is not None else None)
            moving.add(logical_id)
            continue
        change = _modification(logical_id, current, resources, before, after, provisioners, moving, state)
        planned[logical_id] = change
        if change.action is not None and change.replacement != "False":
            moving.add(logical_id)
    for logical_id, current in resources.items():
        if logical_id not in planned and current.exists:
            policy = _POLICY_ACTIONS.get(before.deletion_policy(logical_id) if before is not None else "Delete", "Delete")
            planned[logical_id] = ResourceChange(
                "Remove", logical_id, current.type_name, current.physical_id, before=current.properties, policy_action=policy
            )
    return ChangePlan(after, planned)


def known_properties(current: StackResource, properties: Mapping[str, Any]) -> Dict[str, Any]:
    """What the resource's properties were last: as applied, or — read back after a restart with secrets in them — as
    its handler's model gives them."""
    if current.properties is not None:
        return current.properties
    return {k: v for k, v in (current.model or {}).items() if k in properties}


def changed_properties(before: Mapping[str, Any], after: Mapping[str, Any]) -> List[str]:
    """The top-level properties that differ, compared as text: a template's "5" and a handler's 5 are the same value."""
    return sorted(k for k in set(before) | set(after) if stringify_primitives(before.get(k)) != stringify_primitives(after.get(k)))


def _modification(
    logical_id: str,
    current: StackResource,
    resources: Mapping[str, StackResource],
    before: Optional[Blueprint],
    after: Blueprint,
    provisioners: Provisioners,
    moving: Set[str],
    state: Optional[ActualState] = None,
) -> ResourceChange:
    type_name = after.type_of(logical_id)
    unchanged = ResourceChange(None, logical_id, type_name, current.physical_id, before=current.properties, after=current.properties, drift=state)
    if type_name != current.type_name:
        return ResourceChange("Modify", logical_id, type_name, current.physical_id, "True", before=current.properties)
    try:
        provisioner = provisioners.for_type(type_name)
    except NoProvisioner:
        return unchanged  # the engine fails it when it comes to it, with the provisioners' message
    # Only the values the resource uses count (not its DependsOn): those that use a resource this operation adds or
    # (maybe) replaces are known once it has run.
    dynamic = bool(after.references_to(logical_id, moving))
    properties: Dict[str, Any] = {}
    if dynamic:
        properties = after.planned_properties(logical_id, resources, moving)
    else:
        try:
            properties = after.properties(logical_id, resources)
        except TemplateProblem:
            dynamic, properties = True, after.planned_properties(logical_id, resources, moving)
    known = known_properties(current, properties)
    declared = before.template.resources.get(logical_id) if before is not None else None
    changed = changed_properties(known, properties) if dynamic or properties != current.properties else []
    drifted = sorted(state.drifted - set(changed)) if state is not None else []  # drifted, the template the same: reverted
    changes = [
        Change(
            name, "Properties", provisioner.replacement(type_name, name).value, known.get(name), properties.get(name),
            declared.properties.get(name, UNDECLARED) if declared is not None else UNDECLARED, after.declaration(logical_id).properties.get(name),
        )
        for name in changed + drifted
    ]
    metadata_after = after.resolved_metadata(logical_id, resources)
    metadata_before = before.resolved_metadata(logical_id, resources) if declared is not None and before is not None else None
    if declared is not None and metadata_before != metadata_after:
        changes.append(
            Change(None, "Metadata", Replacement.NEVER.value, metadata_before, metadata_after, declared.metadata, after.declaration(logical_id).metadata)
        )
    if not changes:
        return _changed_beyond_its_properties(provisioner, logical_id, type_name, current, properties) or unchanged
    parameters_before = before.parameters if before is not None else None
    details = [
        d for c in changes for d in against_actual(details_of(c, moving, after.conditions, parameters_before, after.parameters), state)
    ]
    replacement = _replacement([d for d in details if not d.sync])
    policy = f"ReplaceAnd{_POLICY_ACTIONS.get(after.update_replace_policy(logical_id), 'Delete')}" if replacement == "True" else None
    action = SYNC_WITH_ACTUAL if all(d.sync for d in details) else "Modify"
    return ResourceChange(action, logical_id, type_name, current.physical_id, replacement, tuple(details), known, properties, policy, state)


def against_actual(details: List[ChangeDetail], state: Optional[ActualState]) -> List[ChangeDetail]:
    """A changed attribute's details in a drift-aware change set: the before-value is the actual one where READ shows it;
    a drifted property names its previous and actual values; one the template now sets to what it actually is becomes
    a single SyncWithActual detail (nothing is changed, the record takes the template's value)."""
    if state is None or not details or details[0].attribute != "Properties":
        return details
    name = details[0].name
    marked = [replace(d, before_from=state.before_from(name)) for d in details]
    if name not in state.drifted:
        return marked
    previous, actual = details[0].before, state.properties.get(name)
    wanted = details[0].after
    if wanted != KNOWN_AFTER_APPLY and stringify_primitives(actual) == stringify_primitives(wanted):
        sync = replace(marked[0], evaluation="Static", change_source=NO_MODIFICATION, causing_entity=None, sync=True,
                       before_from=PREVIOUS_DEPLOYMENT_STATE, drift=(previous, actual))
        return [sync]
    return [replace(d, before=actual, drift=(previous, actual)) for d in marked]


def _changed_beyond_its_properties(
    provisioner: Any, logical_id: str, type_name: str, current: StackResource, properties: Dict[str, Any]
) -> Optional[ResourceChange]:
    """A nested stack whose properties are the same but whose child template changed (its provisioner's
    ``template_changed`` says): a Modify in place, the detail's ChangeSource ``Automatic`` as the service names it."""
    template_changed = getattr(provisioner, "template_changed", None)
    if template_changed is None or not template_changed(current.physical_id, properties):
        return None
    url = properties.get("TemplateURL")
    detail = ChangeDetail("TemplateURL", Replacement.NEVER.value, "Dynamic", AUTOMATIC, before=url, after=url)
    return ResourceChange("Modify", logical_id, type_name, current.physical_id, "False", (detail,), current.properties, properties)


# A DeletionPolicy or UpdateReplacePolicy as the PolicyAction names it (AWS's recorded answers show Delete and
# ReplaceAndDelete; the API reference lists the others; RetainExceptOnCreate keeps an existing resource: Retain).
_POLICY_ACTIONS = {"Delete": "Delete", "Retain": "Retain", "RetainExceptOnCreate": "Retain", "Snapshot": "Snapshot"}


def _replacement(details: List[ChangeDetail]) -> str:
    """True when a property that always recreates changes to a known value; Conditional when its new value is not known
    yet, or when a change only conditionally recreates; else False."""
    known = {d.name for d in details if d.evaluation == "Static" and d.known}
    recreating = [d for d in details if d.requires_recreation != Replacement.NEVER.value]
    if any(d.requires_recreation == Replacement.ALWAYS.value and d.name in known for d in recreating):
        return "True"
    return "Conditional" if recreating else "False"
