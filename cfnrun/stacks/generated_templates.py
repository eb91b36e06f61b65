"""The IaC generator's generated templates: resources READ by their handlers, written as a template to import them with.

CreateGeneratedTemplate and UpdateGeneratedTemplate answer at once (CREATE_PENDING, UPDATE_PENDING); the
READs run in the background, all of a call's at once, through the ``ResourceReader`` the app gives (the
one invoker), and each resource goes PENDING, IN_PROGRESS, then COMPLETE or FAILED with its reason. Each
becomes a resource with the template's DeletionPolicy and UpdateReplacePolicy (``generated_resources.py``
makes its properties). With StackName the template starts from that stack's template, its resources
included as the stack declares them. Templates are kept in memory and, with ``--state``, in its database as each
generation ends (``state_db.py``): a restart lists each as it last settled.

What botocore's model documents: the statuses, GetGeneratedTemplate answering the template as it was when
last COMPLETE, names or ARNs wherever a template is named, no more than five templates pending or in
progress (ConcurrentResourcesLimitExceeded, also for an update or delete of one in progress). Inferred:
RETAIN for both policies when TemplateConfiguration leaves them out (the console's default), the
refusals' texts, a template FAILED when a resource failed (the last COMPLETE template is still the one
answered), "{}" before any COMPLETE, the Metadata naming the template (AWSToolsMetrics.IaC_Generator), and
deletion at once.
"""
from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Dict, List, Optional, Protocol, Sequence, Tuple

from cfnrun.model.identifiers import identifier_names
from cfnrun.model.schema import ResourceSchema
from cfnrun.model.template_text import decode_template
from cfnrun.stacks.background import BackgroundTasks
from cfnrun.stacks.generated_resources import ResourceTemplate, generated_logical_id, resource_template
from cfnrun.stacks.records import Stack
from cfnrun.stacks.resource_scans import managed_resources, physical_id
from cfnrun.stacks.store import StackError, StackStore

PENDING, IN_PROGRESS, COMPLETE, FAILED = "PENDING", "IN_PROGRESS", "COMPLETE", "FAILED"
UNSETTLED = ("CREATE_PENDING", "UPDATE_PENDING", "DELETE_PENDING", "CREATE_IN_PROGRESS", "UPDATE_IN_PROGRESS", "DELETE_IN_PROGRESS")
MAX_UNSETTLED = 5  # ConcurrentResourcesLimitExceededException: "No more than 5 generated templates ... InProgress or Pending"
POLICY_ATTRIBUTE = {"DELETE": "Delete", "RETAIN": "Retain"}
DEFAULT_POLICY = "RETAIN"
TEMPLATE_VERSION = "2010-09-09"
MAX_REASON = 256
MAX_RESOURCES = 500  # ResourceDefinitions' maximum in botocore's model, as a template's (inferred: a template holds 500)
KIND = "generated_template"  # its rows in the state database
LOGICAL_ID = re.compile(r"[A-Za-z0-9]{1,255}")


class ReadFailed(Exception):
    """READ did not find the resource or failed; the message says so in the handler's words."""


class ResourceReader(Protocol):
    """What a generation runs: the served resource types' READ handlers (the app's ``IacGenerator``)."""

    def schema(self, type_name: str) -> Optional[ResourceSchema]: ...

    async def read(self, type_name: str, identifier: Dict[str, str], label: str) -> Dict[str, Any]: ...


@dataclass
class TemplateResource:
    """One ResourceDetail, and what it adds to the template once READ."""

    resource_type: str
    logical_id: str
    identifier: Dict[str, str]
    status: str = PENDING
    reason: Optional[str] = None
    made: Optional[ResourceTemplate] = None

    def detail(self) -> Dict[str, Any]:
        return {
            "ResourceType": self.resource_type, "LogicalResourceId": self.logical_id, "ResourceIdentifier": dict(self.identifier),
            "ResourceStatus": self.status, "ResourceStatusReason": self.reason,
            "Warnings": list(self.made.warnings) if self.made is not None else None,
        }


@dataclass
class GeneratedTemplate:
    template_id: str  # its ARN
    name: str
    creation_time: float
    deletion_policy: str
    update_replace_policy: str
    stack: Optional[Stack] = None  # the base stack given as StackName
    status: str = "CREATE_PENDING"
    reason: Optional[str] = None
    last_updated: Optional[float] = None
    resources: Dict[str, TemplateResource] = field(default_factory=dict)  # by logical id, in the order added
    complete_document: Optional[Dict[str, Any]] = None  # the template when last COMPLETE

    @property
    def settled(self) -> bool:
        return self.status not in UNSETTLED

    def document(self) -> Dict[str, Any]:
        base = decode_template(self.stack.template_body) if self.stack is not None else {}
        document: Dict[str, Any] = {"AWSTemplateFormatVersion": TEMPLATE_VERSION, **(base if isinstance(base, dict) else {})}
        document["Metadata"] = {**(document.get("Metadata") or {}), "AWSToolsMetrics": {"IaC_Generator": self.template_id}}
        parameters: Dict[str, Any] = dict(document.get("Parameters") or {})
        resources: Dict[str, Any] = dict(document.get("Resources") or {})
        for resource in self.resources.values():
            if resource.status != COMPLETE or resource.made is None:
                continue
            parameters.update(resource.made.parameters)
            resources[resource.logical_id] = {
                "Type": resource.resource_type,
                "DeletionPolicy": POLICY_ATTRIBUTE[self.deletion_policy],
                "UpdateReplacePolicy": POLICY_ATTRIBUTE[self.update_replace_policy],
                "Properties": resource.made.properties,
            }
        if parameters:
            document["Parameters"] = parameters
        document["Resources"] = resources
        return document

    def body(self, template_format: str) -> str:
        document = self.complete_document if self.complete_document is not None else {}
        if template_format == "YAML":
            import yaml

            return str(yaml.safe_dump(document, sort_keys=False, default_flow_style=False))
        return json.dumps(document, indent=2)

    def description(self) -> Dict[str, Any]:
        statuses = [r.status for r in self.resources.values()]
        return {
            "GeneratedTemplateId": self.template_id, "GeneratedTemplateName": self.name,
            "Resources": [r.detail() for r in self.resources.values()] or None,
            "Status": self.status, "StatusReason": self.reason, "CreationTime": self.creation_time, "LastUpdatedTime": self.last_updated,
            "Progress": {
                "ResourcesSucceeded": statuses.count(COMPLETE), "ResourcesFailed": statuses.count(FAILED),
                "ResourcesProcessing": statuses.count(IN_PROGRESS), "ResourcesPending": statuses.count(PENDING),
            },
            "StackId": self.stack.stack_id if self.stack is not None else None,
            "TemplateConfiguration": {"DeletionPolicy": self.deletion_policy, "UpdateReplacePolicy": self.update_replace_policy},
            "TotalWarnings": sum(len(r.made.warnings) for r in self.resources.values() if r.made is not None),
        }

    def summary(self) -> Dict[str, Any]:
        return {
            "GeneratedTemplateId": self.template_id, "GeneratedTemplateName": self.name, "Status": self.status, "StatusReason": self.reason,
            "CreationTime": self.creation_time, "LastUpdatedTime": self.last_updated, "NumberOfResources": len(self.resources),
        }


def policies(configuration: Optional[Dict[str, Any]], template: Optional[GeneratedTemplate] = None) -> Tuple[str, str]:
    """DeletionPolicy and UpdateReplacePolicy: as given, else the template's, else RETAIN."""
    given = configuration or {}
    deletion = given.get("DeletionPolicy") or (template.deletion_policy if template else DEFAULT_POLICY)
    replace = given.get("UpdateReplacePolicy") or (template.update_replace_policy if template else DEFAULT_POLICY)
    return str(deletion), str(replace)


class GeneratedTemplates:
    """This serve's generated templates, by ARN: in memory, and with ``--state`` in its database as each settles."""

    def __init__(self, store: StackStore, reader: ResourceReader) -> None:
        self.store = store
        self.reader = reader
        self.templates: Dict[str, GeneratedTemplate] = {}
        self._tasks = BackgroundTasks()

    # -- finding ---------------------------------------------------------------------------

    def find(self, name_or_id: str) -> Optional[GeneratedTemplate]:
        return self.templates.get(name_or_id) or next((t for t in self.templates.values() if t.name == name_or_id), None)

    def get(self, name_or_id: str) -> GeneratedTemplate:
        found = self.find(name_or_id)
        if found is None:
            raise StackError(f"Generated template [{name_or_id}] not found", "GeneratedTemplateNotFound", 404)
        return found

    def _settled(self, name_or_id: str, doing: str) -> GeneratedTemplate:
        template = self.get(name_or_id)
        if not template.settled:
            raise StackError(
                f"Generated template [{template.name}] is {template.status}: it cannot be {doing} until its generation ends",
                "ConcurrentResourcesLimitExceeded", 429,
            )
        return template

    def _name_free(self, name: str) -> None:
        if self.find(name) is not None:
            raise StackError(f"Generated template [{name}] already exists", "AlreadyExistsException")

    # -- the operations --------------------------------------------------------------------

    def create(self, name: str, definitions: Sequence[Dict[str, Any]], stack_name: Optional[str],
               configuration: Optional[Dict[str, Any]]) -> GeneratedTemplate:
        self._name_free(name)
        if sum(not t.settled for t in self.templates.values()) >= MAX_UNSETTLED:
            raise StackError(
                f"No more than {MAX_UNSETTLED} generated templates can be pending or in progress at one time",
                "ConcurrentResourcesLimitExceeded", 429,
            )
        stack = self.store.get(stack_name) if stack_name else None
        if stack is not None and stack.status == "DELETE_COMPLETE":
            raise StackError(f"Stack [{stack_name}] does not exist")
        deletion, replace = policies(configuration)
        engine = self.store.engine
        template = GeneratedTemplate(
            f"arn:aws:cloudformation:{engine.region}:{engine.account_id}:generatedtemplate/{uuid.uuid4()}", name, time.time(), deletion, replace,
            stack,
        )
        added = self._checked(template.resources, stack, definitions)
        template.resources.update((r.logical_id, r) for r in added)
        self.templates[template.template_id] = template
        self._tasks.start(self._generate(template, added, "CREATE"))
        return template

    def update(self, name_or_id: str, params: Dict[str, Any]) -> GeneratedTemplate:
        template = self._settled(name_or_id, "updated")
        new_name = params.get("NewGeneratedTemplateName")
        if new_name and new_name != template.name:
            self._name_free(str(new_name))
        unknown = [i for i in params.get("RemoveResources") or [] if i not in template.resources]
        if unknown:
            raise StackError(f"The following resource(s) are not in generated template [{template.name}]: [{', '.join(unknown)}]")
        kept = {k: v for k, v in template.resources.items() if k not in (params.get("RemoveResources") or [])}
        added = self._checked(kept, template.stack, params.get("AddResources") or [])  # before anything changes
        template.name = str(new_name or template.name)
        template.deletion_policy, template.update_replace_policy = policies(params.get("TemplateConfiguration"), template)
        template.resources = {**kept, **{r.logical_id: r for r in added}}
        to_read = list(template.resources.values()) if params.get("RefreshAllResources") else added
        for resource in to_read:
            resource.status, resource.reason = PENDING, None
        template.status = "UPDATE_PENDING"
        self._tasks.start(self._generate(template, to_read, "UPDATE"))
        return template

    def delete(self, name_or_id: str) -> None:
        template = self._settled(name_or_id, "deleted")
        del self.templates[template.template_id]
        if self.store.database is not None:
            self.store.database.drop_generated(KIND, template.template_id)

    # -- the resources ---------------------------------------------------------------------

    def _checked(self, present: Dict[str, TemplateResource], stack: Optional[Stack],
                 definitions: Sequence[Dict[str, Any]]) -> List[TemplateResource]:
        """The resources to add next to ``present``: served types, identified by their primaryIdentifier, in no stack, each once."""
        managed = managed_resources(self.store)
        base = decode_template(stack.template_body) if stack is not None else {}
        taken = set(present) | set((base.get("Resources") or {}) if isinstance(base, dict) else {})
        known = {(r.resource_type, physical_id(r.identifier)) for r in present.values()}
        added: List[TemplateResource] = []
        for definition in definitions:
            type_name = str(definition["ResourceType"])
            identifier = {str(k): str(v) for k, v in (definition.get("ResourceIdentifier") or {}).items()}
            schema = self.reader.schema(type_name)
            if schema is None:
                raise StackError(
                    f"Resource type [{type_name}] is not supported: cfnrun generates templates from the served types' resources only "
                    "(their READ handlers); an AWS::* resource lives on the AWS endpoint, where cfnrun has no READ handler to run"
                )
            ordered = _ordered_identifier(schema, type_name, identifier)
            key = (type_name, physical_id(ordered))
            if key in known:
                raise StackError(f"Resource {type_name} [{key[1]}] is in the generated template already")
            if key in managed:
                raise StackError(f"Resource {type_name} [{key[1]}] is managed by a stack already: the IaC generator takes unmanaged resources only")
            logical_id = str(definition.get("LogicalResourceId") or generated_logical_id(type_name, ordered, taken))
            if not LOGICAL_ID.fullmatch(logical_id):
                raise StackError(f"Logical resource id [{logical_id}] is not valid: it must be alphanumeric (A-Za-z0-9) and at most 255 characters")
            if logical_id in taken:
                raise StackError(f"Logical resource id [{logical_id}] is used by another resource of the template")
            taken.add(logical_id)
            known.add(key)
            added.append(TemplateResource(type_name, logical_id, ordered))
        if len(present) + len(added) > MAX_RESOURCES:
            raise StackError(f"A generated template holds at most {MAX_RESOURCES} resources; this one would hold {len(present) + len(added)}",
                             "LimitExceededException")
        return added

    async def _generate(self, template: GeneratedTemplate, resources: List[TemplateResource], operation: str) -> None:
        try:
            await self._read_all(template, resources, operation)
        finally:
            if self.store.database is not None and template.settled and template.template_id in self.templates:
                record = asdict(replace(template, stack=None))
                self.store.database.put_generated(KIND, template.template_id, {**record, "stack": getattr(template.stack, "stack_id", None)})

    def restore(self) -> None:
        """The templates ``--state`` keeps, after the stacks are read back (a template's base stack is found by its id)."""
        if self.store.database is None:
            return
        for record in self.store.database.generated(KIND):
            resources = {
                logical_id: TemplateResource(**{**resource, "made": ResourceTemplate(**resource["made"]) if resource["made"] else None})
                for logical_id, resource in record.pop("resources").items()
            }
            stack = self.store.stacks.get(record.pop("stack") or "")
            template = GeneratedTemplate(**record, stack=stack, resources=resources)
            self.templates[template.template_id] = template

    async def _read_all(self, template: GeneratedTemplate, resources: List[TemplateResource], operation: str) -> None:
        template.status = f"{operation}_IN_PROGRESS"
        try:
            await asyncio.gather(*(self._read(template, r) for r in resources))
        except Exception as error:  # noqa: B902 - a generation never stays IN_PROGRESS because cfnrun failed
            template.status, template.reason = FAILED, f"cfnrun failed generating the template: {type(error).__name__}: {error}"[:MAX_REASON]
            return
        failed = [r.logical_id for r in template.resources.values() if r.status == FAILED]
        template.last_updated = time.time()
        if failed:
            template.status = FAILED
            template.reason = f"{len(failed)} resource(s) could not be read: {', '.join(failed)}"[:MAX_REASON]
            return
        template.status, template.reason = COMPLETE, None
        template.complete_document = template.document()

    async def _read(self, template: GeneratedTemplate, resource: TemplateResource) -> None:
        resource.status = IN_PROGRESS
        try:
            model = await self.reader.read(resource.resource_type, resource.identifier, f"IaC generator {template.name} {resource.logical_id}")
        except ReadFailed as failed:
            resource.status, resource.reason, resource.made = FAILED, str(failed)[:MAX_REASON], None
            return
        schema = self.reader.schema(resource.resource_type)
        if schema is None:
            resource.status, resource.reason = FAILED, f"{resource.resource_type} is not served now"
            return
        resource.made = resource_template(schema, resource.logical_id, model)
        resource.status = COMPLETE

    async def close(self, timeout_s: float) -> None:
        """On stop: generations in flight get ``timeout_s`` to finish, then they are cancelled."""
        await self._tasks.close(timeout_s)


def _ordered_identifier(schema: ResourceSchema, type_name: str, identifier: Dict[str, str]) -> Dict[str, str]:
    """The ResourceIdentifier in primaryIdentifier order; refused unless it names exactly those properties."""
    names = identifier_names(schema)
    if sorted(identifier) != sorted(names):
        raise StackError(
            f"ResourceIdentifier of {type_name} must name its primaryIdentifier properties [{', '.join(names)}]; "
            f"got [{', '.join(sorted(identifier))}]"
        )
    return {name: identifier[name] for name in names}
