"""A user's resource type in a stack: each resource operation is one run of the one invoker.

CREATE, UPDATE, DELETE and drift detection's READ go to the type's handlers exactly as ``cfnrun
invoke`` and Cloud Control send them (``ServedTypeOperations``): IN_PROGRESS replayed after CallbackDelaySeconds,
the response budgets, timeoutInMinutes, retries of retriable codes, contract checks, history.
What the stack needs is read off the result: the primaryIdentifier is the physical id and Ref,
Fn::GetAtt reads the returned model, and a failure's reason is worded as the service words it.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Tuple

from cfnrun.app.type_operations import TypeOperations
from cfnrun.app.history import STACK_SOURCE
from cfnrun.contract.request_rules import service_problems
from cfnrun.invoker.cancellable_clock import CancelRequested, Stopping
from cfnrun.events.operation import ContractChecked, InvocationCompleted, OperationEvent, OperationResult
from cfnrun.model.endings import EndReason
from cfnrun.model.protocol import Action, OperationStatus, ProgressEvent
from cfnrun.model.schema import ResourceSchema, pointer_to_path
from cfnrun.model.schema_values import typed_properties
from cfnrun.stacks.identifier_summaries import property_names
from cfnrun.stacks.in_flight import OperationStopped
from cfnrun.stacks.provisioning import NoProvisioner, Provisioned, ProvisioningFailed, Replacement, ResourceWork, property_problem

ENDING_CODES = {EndReason.INVOCATION_BUDGET: "ServiceTimeout", EndReason.OPERATION_TIMEOUT: "NotStabilized"}



class UserTypes:
    """The ``Provisioner`` of every type a served provider implements."""

    idempotent_creates = True  # the handler contract: CREATE made again with the same clientRequestToken (``unanswered_creates.py``)

    def __init__(self, operations: TypeOperations, stopping: Optional[Stopping] = None) -> None:
        self.operations = operations
        self.stopping = stopping or Stopping()  # serve stopping cancels each operation's clock: no handler call after the one in flight
        # by (type, logical id): the schema and properties last validated (as JSON), and the answer (``validate``)
        self._validated: Dict[Tuple[str, str], Tuple[ResourceSchema, str, Optional[str]]] = {}

    def _schema(self, type_name: str) -> ResourceSchema:
        schema = self.operations.schema(type_name)
        if schema is None:
            raise NoProvisioner(type_name)
        return schema

    # -- before any call ---------------------------------------------------------------------

    def validate(self, type_name: str, logical_id: str, properties: Dict[str, Any]) -> Optional[str]:
        """Why the resource's properties break its schema, or None. A create's properties are checked before the stack
        starts (pre-deployment validation) and again once resolved, usually the same: the answer is kept, by resource,
        for the same schema and properties."""
        schema = self._schema(type_name)
        given = json.dumps(properties, sort_keys=True, default=str)
        kept = self._validated.get((type_name, logical_id))
        if kept is not None and kept[0] is schema and kept[1] == given:
            return kept[2]
        problem = self._problem(schema, logical_id, properties)
        self._validated[(type_name, logical_id)] = (schema, given, problem)
        return problem

    @staticmethod
    def _problem(schema: ResourceSchema, logical_id: str, properties: Dict[str, Any]) -> Optional[str]:
        """The service's refusal of the properties, in its words (``contract/service_wording.py``: no value shown)."""
        typed = typed_properties(schema, properties)
        lines = service_problems(schema, typed)
        lines += [f"#{p.replace('/properties', '', 1)}: readOnly property {p} cannot be set" for p in schema.read_only_properties
                  if schema.has_value(typed, p)]
        return property_problem(logical_id, *lines) if lines else None

    def lacks_attribute(self, type_name: str, attribute: str) -> bool:
        """``AttributeNames``: Fn::GetAtt reads a registry type's readOnly properties (AWS's knowledge-center article on the
        "attribute does not exist" error: the property must be in the schema's readOnlyProperties), ``A.B`` one inside ``A``."""
        try:
            return _not_read_only(self._schema(type_name), attribute)
        except NoProvisioner:
            return False

    def attribute_type(self, type_name: str, attribute: str) -> Optional[str]:
        """``AttributeNames``: the type the schema gives the property ``attribute`` reads."""
        try:
            return self._schema(type_name).property_type(attribute.split("."))
        except NoProvisioner:
            return None

    def shown(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        return self._schema(type_name).mask_write_only(properties) or {}

    def replacement(self, type_name: str, property_path: str) -> Replacement:
        pointer = f"/properties/{property_path}"
        for create_only in self._schema(type_name).create_only_properties:
            if create_only == pointer or create_only.startswith(pointer + "/"):
                return Replacement.ALWAYS
        return Replacement.NEVER

    # -- the handlers ------------------------------------------------------------------------

    async def create(self, work: ResourceWork) -> Provisioned:
        schema = self._schema(work.type_name)
        result = await self._run(work, Action.CREATE, typed_properties(schema, work.properties), None)
        return self._provisioned(schema, work, result.resource_model or {})

    async def update(self, work: ResourceWork) -> Provisioned:
        schema = self._schema(work.type_name)
        identifiers = self._identifiers(schema, work.model)
        desired = {**typed_properties(schema, work.properties), **identifiers}
        previous = {**typed_properties(schema, work.previous_properties or {}), **identifiers}
        result = await self._run(work, Action.UPDATE, desired, previous)
        return self._provisioned(schema, work, result.resource_model or desired)

    async def read_attributes(self, work: ResourceWork) -> Dict[str, Any]:
        """From the model its handler last returned (the attributes a type has are its readOnly properties)."""
        return self._attributes(self._schema(work.type_name), work, work.model or {})

    async def delete(self, work: ResourceWork) -> None:
        schema = self._schema(work.type_name)
        known = {**typed_properties(schema, work.properties), **(work.model or {})}
        try:
            await self._run(work, Action.DELETE, known, None)
        except ProvisioningFailed as error:
            if error.error_code != "NotFound":
                raise
            # already gone (deleted out of band, or with an embedded moto after a restart): the service takes it as deleted

    async def read(self, work: ResourceWork) -> Optional[Dict[str, Any]]:
        """The resource as its READ handler sees it now (from the model the stack keeps); None when it answers NotFound."""
        self._schema(work.type_name)
        try:
            result = await self._run(work, Action.READ, dict(work.model or {}), None)
        except ProvisioningFailed as failed:
            if failed.error_code == "NotFound":
                return None
            raise
        return result.resource_model or {}

    # -- import (``stacks/imports.py``'s ``Importer``) ------------------------------------------

    def primary_identifier(self, type_name: str) -> Optional[List[str]]:
        return property_names(self._schema(type_name).primary_identifier)

    async def read_for_import(self, work: ResourceWork, identifier: Dict[str, str]) -> Provisioned:
        """The resource its READ handler finds by ``identifier`` (a NotFound fails the import with the handler's words)."""
        schema = self._schema(work.type_name)
        result = await self._run(work, Action.READ, typed_properties(schema, identifier), None)
        return self._provisioned(schema, work, result.resource_model or {})

    async def _run(self, work: ResourceWork, action: Action, desired: Dict[str, Any], previous: Optional[Dict[str, Any]]) -> OperationResult:
        named = work.physical_id is not None  # the stack is told once which resource the operation made (``ResourceWork.progress``)
        clock = self.stopping.clock(self.operations.new_clock())
        listening: List[Callable[[], None]] = []

        def cancellable() -> None:
            """Another resource of the stack operation failing ends this one after the call in flight — from when the
            stack knows the resource, so that a cancelled create leaves nothing no record names (``stacks/cancellation.py``)."""
            if work.cancellation is not None:
                listening.append(work.cancellation.listen(clock.cancel))

        def observe(event: OperationEvent) -> None:
            nonlocal named
            if isinstance(event, InvocationCompleted) and not named:
                named = self._progressed(work, event.progress)
                if named:
                    cancellable()
            if isinstance(event, ContractChecked):
                for violation in event.violations:
                    work.note(f"cfnrun contract {'✗' if violation.is_error else '!'} {violation.line()}")

        if named:
            cancellable()
        operation = self.operations.operation(
            work.type_name,
            action,
            desired,
            previous,
            clock=clock,
            logical_id=work.logical_id,
            stack_id=work.stack.stack_id,
            client_request_token=work.client_request_token,
            tags=_tags(work),
            label=f"stack {work.stack.stack_name} {work.logical_id}",
            observers=[observe],
            string_primitives=True,  # template values reach handlers as text, as the service sends them
            history_source=STACK_SOURCE,
            secrets=work.stack.secrets,
        )
        try:
            result = await operation.run()
        except CancelRequested as stopped:
            raise OperationStopped(str(stopped)) from None
        finally:
            for stop_listening in listening:
                stop_listening()
        if not result.succeeded:
            raise ProvisioningFailed(failure_reason(result), result.error_code or ENDING_CODES.get(result.reason))
        return result

    def _progressed(self, work: ResourceWork, progress: Optional[ProgressEvent]) -> bool:
        """An IN_PROGRESS answer whose model names the resource: told to the stack at once (``stacks/in_flight.py``).
        True once told."""
        if progress is None or progress.status is not OperationStatus.IN_PROGRESS or not progress.resourceModel:
            return False
        try:
            made = self._provisioned(self._schema(work.type_name), work, progress.resourceModel)
        except ProvisioningFailed:
            return False  # no identifier yet: nothing made that a record could name
        work.progress(made, progress.callbackContext)
        return True

    @staticmethod
    def _identifiers(schema: ResourceSchema, model: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        found: Dict[str, Any] = {}
        for pointer in schema.primary_identifier:
            path = pointer_to_path(pointer)
            value = schema.value_at(model or {}, pointer)
            if value is not None and len(path) == 1:
                found[path[0]] = value
        return found

    def _provisioned(self, schema: ResourceSchema, work: ResourceWork, model: Dict[str, Any]) -> Provisioned:
        parts = [schema.value_at(model, pointer) for pointer in schema.primary_identifier]
        if not parts or any(p is None for p in parts):
            raise ProvisioningFailed(
                f"The handler's model has no primaryIdentifier ({', '.join(schema.primary_identifier)}): the stack cannot track the resource"
            )
        physical_id = "|".join(str(p) for p in parts)
        return Provisioned(physical_id, physical_id, self._attributes(schema, work, model), schema.without_write_only(model))

    @staticmethod
    def _attributes(schema: ResourceSchema, work: ResourceWork, model: Dict[str, Any]) -> Dict[str, Any]:
        """The wanted attributes the model has; one that is no readOnly property is none (what reads it fails)."""
        attributes = {}
        for name in work.attributes_wanted:
            if _not_read_only(schema, name):
                continue
            value = schema.value_at(model, "/properties/" + "/".join(name.split(".")))  # GetAtt A.B: a nested property
            if value is not None:
                attributes[name] = value
        return attributes


def failure_reason(result: OperationResult) -> str:
    """Why a handler's operation failed, as the service words it in a resource's status reason."""
    if result.reason is EndReason.HANDLER:
        return f'Resource handler returned message: "{result.message}" (HandlerErrorCode: {result.error_code or "InternalFailure"})'
    if result.reason is EndReason.OPERATION_TIMEOUT:
        return f"Resource timed out waiting for completion: {result.message}"
    return f"cfnrun: {result.message}"


def _not_read_only(schema: ResourceSchema, attribute: str) -> bool:
    """Is ``attribute`` (``A`` or ``A.B``, a property inside ``A``) outside every readOnly property of the schema?"""
    pointer = "/properties/" + attribute.replace(".", "/")
    return not any(p == pointer or pointer.startswith(p + "/") or p.startswith(pointer + "/") for p in schema.read_only_properties)


def _tags(work: ResourceWork) -> Dict[str, Dict[str, str]]:
    tags: Dict[str, Dict[str, str]] = {
        "stackTags": dict(work.stack.tags),
        "systemTags": {
            "aws:cloudformation:stack-name": work.stack.stack_name,
            "aws:cloudformation:stack-id": work.stack.stack_id,
            "aws:cloudformation:logical-id": work.logical_id,
        },
    }
    if work.stack.previous_tags is not None:
        tags["previousStackTags"] = dict(work.stack.previous_tags)
    return tags
