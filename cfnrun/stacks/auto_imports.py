"""Auto-import (CreateChangeSet's ``ImportExistingResources``): a resource the template adds that already exists is
imported instead of created.

The AWS user guide ("Import AWS resources into a CloudFormation stack automatically") lists what such a resource
needs, and only such a resource is looked for: a static custom name in the template (its type's primaryIdentifier
properties set to literal values, no ``Ref`` or other function), a ``DeletionPolicy`` of ``Retain`` or
``RetainExceptOnCreate``, a type that supports import (here: one whose READ handler cfnrun runs, the ``Importer``s of
``imports.py``), and no other stack's record holding it. Each is read by that identifier while the change set is
``CREATE_IN_PROGRESS``: one its READ finds is planned an ``Import`` (the identifier its PhysicalResourceId, as in an
IMPORT change set), the others stay ``Add``s. Executing the change set imports the former in the CREATE or UPDATE
operation (``IMPORT_IN_PROGRESS``, ``IMPORT_COMPLETE``, as ``imports.py`` does) and creates the rest; a rollback lets an
imported resource go from the stack without deleting it (``DELETE_SKIPPED``). When the READ runs and the events the
imported resources get within a CREATE or UPDATE are inferred from the guide, not read.
"""
from __future__ import annotations

from typing import Dict, Iterable

from cfnrun.stacks.imports import Importer
from cfnrun.stacks.plan import ChangePlan, ResourceChange
from cfnrun.stacks.provisioning import NoProvisioner, Provisioners, ProvisioningFailed, ResourceWork, StackContext
from cfnrun.stacks.records import Stack

RETAINING = ("Retain", "RetainExceptOnCreate")
Identifier = Dict[str, str]


def candidates(plan: ChangePlan, provisioners: Provisioners, stacks: Iterable[Stack]) -> Dict[str, Identifier]:
    """The resources the plan adds that could be imported, each with the identifier its template gives, in the type's
    primaryIdentifier order."""
    held = {(r.type_name, r.physical_id) for stack in stacks for r in stack.resources.values() if r.exists}
    found: Dict[str, Identifier] = {}
    for change in plan.changes:
        if change.action != "Add":
            continue
        declaration = plan.blueprint.declaration(change.logical_id)
        if declaration.deletion_policy not in RETAINING:
            continue
        try:
            provisioner = provisioners.for_type(change.resource_type)
        except NoProvisioner:
            continue
        names = provisioner.primary_identifier(change.resource_type) if isinstance(provisioner, Importer) else None
        values = [declaration.properties.get(name) for name in names or ()]
        if not names or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in values):
            continue  # no static name: a function's value is known only as the stack runs
        identifier = {name: str(value) for name, value in zip(names, values)}
        if (change.resource_type, physical_id(identifier)) not in held:
            found[change.logical_id] = identifier
    return found


def physical_id(identifier: Identifier) -> str:
    """An imported resource's PhysicalResourceId: its identifier's values, as an IMPORT change set names it."""
    return "|".join(identifier.values())


async def with_existing_imported(plan: ChangePlan, wanted: Dict[str, Identifier], provisioners: Provisioners, context: StackContext) -> ChangePlan:
    """The plan, each of ``wanted`` that its READ finds an Import rather than an Add."""
    resources = dict(plan.resources)
    for logical_id, identifier in wanted.items():
        change = plan.of(logical_id)
        importer = provisioners.for_type(change.resource_type)
        assert isinstance(importer, Importer), "candidates() keeps importers only"
        work = ResourceWork(context, logical_id, change.resource_type, {}, physical_id=physical_id(identifier))
        try:
            await importer.read_for_import(work, dict(identifier))
        except ProvisioningFailed:
            continue  # not there (or not readable): it is created
        resources[logical_id] = ResourceChange("Import", logical_id, change.resource_type, physical_id(identifier), after=dict(identifier))
    return ChangePlan(plan.blueprint, resources)
