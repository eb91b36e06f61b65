"""The IaC generator on serve's stacks: resource scans run each served type's LIST, generated templates its READ.

Both go through the one invoker (``TypeOperations``): the type's warm workers, its budgets and
timeoutInMinutes, contract checks, a console line and a record in the provider's history (source
``iac-generator``), exactly as Cloud Control's ListResources and GetResource run them. Only the served
resource types are scanned: an AWS::* resource lives on the AWS endpoint, which has no LIST or READ
handler cfnrun runs, and a hook is no resource type.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from cfnrun.app.history import IAC_GENERATOR_SOURCE
from cfnrun.app.stacks.user_types import failure_reason
from cfnrun.app.type_operations import TypeOperations
from cfnrun.model.identifiers import IdentifierError, identifier_model, identifier_names
from cfnrun.model.protocol import Action
from cfnrun.model.schema import ResourceSchema
from cfnrun.stacks.generated_templates import GeneratedTemplates, ReadFailed
from cfnrun.stacks.resource_scans import ListFailed, Listed, ResourceScans
from cfnrun.stacks.state_db import StateError
from cfnrun.stacks.store import StackStore


class IacGenerator:
    """``TypeLister`` for the scans and ``ResourceReader`` for the generated templates, over the served types."""

    def __init__(self, store: StackStore, operations: TypeOperations) -> None:
        self.operations = operations
        self.scans = ResourceScans(store, self)
        self.templates = GeneratedTemplates(store, self)

    def scannable(self) -> List[str]:
        return sorted(self.operations.served.type_names())

    def schema(self, type_name: str) -> Optional[ResourceSchema]:
        return self.operations.schema(type_name) if type_name in self.scannable() else None

    async def list(self, type_name: str) -> List[Listed]:
        operation = self.operations.operation(type_name, Action.LIST, {}, None, label="resource scan", history_source=IAC_GENERATOR_SOURCE)
        result = await operation.run()
        if not result.succeeded:
            raise ListFailed(failure_reason(result))
        schema = operation.schema
        names = identifier_names(schema)
        listed = []
        for model in result.resource_models or []:
            if all(model.get(name) not in (None, "") for name in names):  # a model with no identifier names no resource
                listed.append(Listed({name: str(model[name]) for name in names}, schema.without_write_only(model)))
        return listed

    async def read(self, type_name: str, identifier: Dict[str, str], label: str) -> Dict[str, Any]:
        schema = self.operations.schema(type_name)
        if schema is None:  # no longer served (a reload since the template was asked for)
            raise ReadFailed(f"{type_name} is not served now, so there is no READ handler to run")
        try:
            key = identifier_model(schema, "|".join(identifier[name] for name in identifier_names(schema)))
        except IdentifierError as error:
            raise ReadFailed(f"Invalid ResourceIdentifier: {error}") from None
        result = await self.operations.operation(type_name, Action.READ, key, None, label=label, history_source=IAC_GENERATOR_SOURCE).run()
        if not result.succeeded:
            raise ReadFailed(failure_reason(result))
        return result.resource_model or {}

    def restore(self) -> None:
        """The scans and templates ``--state`` keeps; raises StateError when one is damaged."""
        try:
            self.scans.restore()
            self.templates.restore()
        except (KeyError, TypeError, ValueError) as error:
            raise StateError(f"{self.scans.store.state}: a kept resource scan or generated template is damaged ({type(error).__name__}: {error})") from None

    async def close(self, timeout_s: float) -> None:
        await self.scans.close(timeout_s)
        await self.templates.close(timeout_s)
