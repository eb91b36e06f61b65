"""Resource import: a change set of type IMPORT brings existing resources into a stack, each confirmed by a READ.

``CreateChangeSet`` with ``ChangeSetType: IMPORT`` and ``ResourcesToImport`` (each a
``ResourceType``, ``LogicalResourceId`` and ``ResourceIdentifier`` — the type's primaryIdentifier
properties) is checked as the AWS user guide ("Import AWS resources into a CloudFormation stack")
says the service checks it: each resource to import is in the template, of that type, with a
``DeletionPolicy``; its identifier names the type's identifying properties; nothing else in the
template is added, changed or removed, nor are the Outputs. Its plan shows one ``Import`` per
resource, with the identifier as the PhysicalResourceId.

Executing it (``IMPORT_IN_PROGRESS``) reads each resource through its type's READ handler (the
``Importer`` a provisioner may be: your served types are): a resource READ cannot find fails the
import, the imported resources leave the stack again (``IMPORT_ROLLBACK_COMPLETE``) and nothing is
deleted. The texts about DeletionPolicy, modified resources and Outputs are the service's as users
quote them; the others, and the resource events' reasons, are inferred.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Protocol, Sequence, runtime_checkable

from cfnrun.stacks.blueprint import Blueprint, TemplateProblem
from cfnrun.stacks.plan import ChangePlan, ResourceChange
from cfnrun.stacks.provisioning import NoProvisioner, Provisioned, Provisioners, ProvisioningFailed, ResourceWork, StackContext
from cfnrun.stacks.records import Stack, StackResource

IMPORT = "IMPORT"


class ImportProblem(Exception):
    """A ResourcesToImport or template the service refuses for an import (the message is its ValidationError)."""


@runtime_checkable
class Importer(Protocol):
    """A provisioner that can bring an existing resource into a stack."""

    def primary_identifier(self, type_name: str) -> Optional[Sequence[str]]:
        """The type's identifying property names, or None when it has no schema."""

    async def read_for_import(self, work: ResourceWork, identifier: Dict[str, str]) -> Provisioned:
        """The resource as its READ handler finds it by ``identifier``; ProvisioningFailed if it cannot."""


def _importer(provisioners: Provisioners, type_name: str) -> Importer:
    try:
        provisioner = provisioners.for_type(type_name)
    except NoProvisioner as error:
        raise ImportProblem(str(error)) from None
    if not isinstance(provisioner, Importer):
        raise ImportProblem(
            f"cfnrun cannot import resources of type {type_name}: an import is confirmed by the type's READ handler, "
            "which only your served types have here"
        )
    return provisioner


def _declarations(blueprint: Optional[Blueprint]) -> Dict[str, Any]:
    if blueprint is None:
        return {}
    return {lid: blueprint.declaration(lid) for lid in blueprint.resource_ids()}


def plan_import(
    stack: Stack, current: Optional[Blueprint], blueprint: Blueprint, to_import: List[Dict[str, Any]], provisioners: Provisioners
) -> ChangePlan:
    """The plan of an IMPORT change set; raises ImportProblem with the reason the service gives."""
    if not to_import:
        raise ImportProblem("ResourcesToImport must be specified for a change set of type IMPORT")
    wanted = {str(item.get("LogicalResourceId")): item for item in to_import}
    in_template = set(blueprint.resource_ids())
    missing = sorted(lid for lid in wanted if lid not in in_template)
    if missing:
        raise ImportProblem(f"The following resources to import [{', '.join(missing)}] are not in the template")
    present = sorted(lid for lid in wanted if lid in stack.resources and stack.resources[lid].exists)
    if present:
        raise ImportProblem(f"The following resources to import [{', '.join(present)}] already exist in the stack")
    for lid, item in wanted.items():
        if item.get("ResourceType") != blueprint.type_of(lid):
            raise ImportProblem(
                f"The ResourceType {item.get('ResourceType')} of the resource to import [{lid}] does not match its type in the template, "
                f"{blueprint.type_of(lid)}"
            )
    no_policy = sorted(lid for lid in wanted if blueprint.declaration(lid).deletion_policy is None)
    if no_policy:
        raise ImportProblem(f"The following resources to import [{', '.join(no_policy)}] must have DeletionPolicy attribute specified in the template.")
    before, after = _declarations(current), _declarations(blueprint)
    others = sorted(lid for lid in set(before) | set(after) if lid not in wanted and before.get(lid) != after.get(lid))
    if others:
        raise ImportProblem(
            f"You have modified resources [{', '.join(others)}] in your template that are not being imported. "
            "Update, create or delete operations cannot be executed during import operations."
        )
    if (current.template.outputs if current is not None else {}) != blueprint.template.outputs:
        raise ImportProblem("As part of the import operation, you cannot modify or add [Outputs]")
    planned: Dict[str, ResourceChange] = {}
    for lid in blueprint.resource_ids():
        if lid not in wanted:
            existing = stack.resources.get(lid)
            planned[lid] = ResourceChange(None, lid, blueprint.type_of(lid), existing.physical_id if existing else None)
            continue
        type_name = blueprint.type_of(lid)
        identifier = wanted[lid].get("ResourceIdentifier") or {}
        names = _importer(provisioners, type_name).primary_identifier(type_name) or ()
        if sorted(identifier) != sorted(names):
            raise ImportProblem(
                f"Invalid ResourceIdentifier for resource to import [{lid}]: a {type_name} is identified by [{', '.join(names)}], "
                f"got [{', '.join(sorted(identifier))}]"
            )
        physical_id = "|".join(str(identifier[name]) for name in names)
        planned[lid] = ResourceChange("Import", lid, type_name, physical_id, after=dict(identifier))
    return ChangePlan(blueprint, planned)


async def import_resource(
    stack: Stack, blueprint: Blueprint, change: ResourceChange, provisioners: Provisioners, context: StackContext, token: Optional[str]
) -> bool:
    """Bring one resource the plan imports into ``stack``, confirmed by its READ: IMPORT_IN_PROGRESS, then IMPORT_COMPLETE,
    or IMPORT_FAILED (False) when READ cannot find it."""
    resource = StackResource(change.logical_id, change.resource_type, "IMPORT_IN_PROGRESS", physical_id=change.physical_id)
    stack.resources[change.logical_id] = resource
    stack.set_resource_status(resource, "IMPORT_IN_PROGRESS", "Resource import started.", token=token)
    try:
        properties = blueprint.properties(change.logical_id, stack.resources)
        work = ResourceWork(
            context, change.logical_id, change.resource_type, properties, physical_id=change.physical_id,
            attributes_wanted=blueprint.attributes_wanted(change.logical_id), client_request_token=token,
        )
        made = await _importer(provisioners, change.resource_type).read_for_import(work, dict(change.after or {}))
    except (TemplateProblem, ImportProblem, ProvisioningFailed) as error:
        reason = error.reason if isinstance(error, ProvisioningFailed) else str(error)
        stack.set_resource_status(resource, "IMPORT_FAILED", stack.masked(reason), token=token)
        return False
    resource.physical_id, resource.ref, resource.attributes, resource.model = made.physical_id, made.ref, dict(made.attributes), made.model
    resource.properties = properties
    stack.set_resource_status(resource, "IMPORT_COMPLETE", "Resource import completed.", token=token)
    return True


async def execute_import(stack: Stack, plan: ChangePlan, provisioners: Provisioners, context: StackContext, token: Optional[str]) -> bool:
    """Read each resource the plan imports into ``stack``; False (the imported ones gone again) if any cannot be read."""
    blueprint = plan.blueprint
    stack.set_status("IMPORT_IN_PROGRESS", "User Initiated", token)
    imported: List[str] = []
    failed: List[str] = []
    for change in [c for c in plan.changes if c.action == "Import"]:
        imported.append(change.logical_id)
        if not await import_resource(stack, blueprint, change, provisioners, context, token):
            failed.append(change.logical_id)
            break
    if failed:
        stack.set_status("IMPORT_ROLLBACK_IN_PROGRESS", f"The following resource(s) failed to import: [{', '.join(failed)}]. ", token)
        for logical_id in imported:
            stack.resources.pop(logical_id, None)  # it was never the stack's: it leaves it, and stays
        stack.set_status("IMPORT_ROLLBACK_COMPLETE", None, token)
        return False
    stack.template_body, stack.description = blueprint.template_body, blueprint.description
    stack.set_status("IMPORT_COMPLETE", None, token)
    return True
