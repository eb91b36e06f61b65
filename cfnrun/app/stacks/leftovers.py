"""Is a resource a stack deleted really gone? Asked of whoever made it, the way CloudFormation's contract asks.

A user type's resource: its READ handler, through the one invoker (``TypeOperations``), must
answer FAILED with NotFound, as the handler contract requires after a DELETE. An AWS::*
resource: its one-resource stack on the AWS endpoint (``AwsTypes``) must be deleted; a nested
stack must be DELETE_COMPLETE; the types cfnrun makes itself (wait conditions, CDK metadata, macros,
hooks) exist nowhere but in the stack's record, so they are gone with it. A custom resource has
nothing to read it back with: it is left unchecked, and said so.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from cfnrun.app.history import STACK_SOURCE
from cfnrun.app.stacks.aws_types import AwsTypes
from cfnrun.app.stacks.nested_stacks import NESTED_STACK
from cfnrun.stacks.template.declarations import is_custom_resource
from cfnrun.app.type_operations import TypeOperations
from cfnrun.model.protocol import Action, OperationStatus


@dataclass(frozen=True)
class MadeResource:
    """A physical resource a stack made, as the stack last knew it (its model: the handler's, or the endpoint stack's record)."""

    logical_id: str
    type_name: str
    physical_id: str
    model: Optional[Dict[str, Any]]


class Finding(enum.Enum):
    GONE = "gone"
    LEFT = "left"
    UNCHECKED = "unchecked"


class LeftoverCheck:
    def __init__(
        self, operations: TypeOperations, served_types: Callable[[], List[str]], aws_types: AwsTypes,
        own_types: Tuple[str, ...] = (), stack_status: Callable[[str], Optional[str]] = lambda stack_id: None,
    ) -> None:
        self.operations = operations
        self.served_types = served_types
        self.aws_types = aws_types
        self.own_types = own_types  # made by cfnrun itself, on no endpoint
        self.stack_status = stack_status  # a local stack's status by id (a nested stack's), None when there is none

    async def check(self, resource: MadeResource, stack_id: str, stack_name: str) -> Tuple[Finding, str]:
        """Whether ``resource`` is gone; with LEFT, how it was found, with UNCHECKED, why it cannot be known."""
        if is_custom_resource(resource.type_name):
            return Finding.UNCHECKED, "a custom resource: nothing reads it back"
        if resource.type_name in self.served_types():
            return await self._read(resource, stack_id, stack_name)
        if resource.type_name == NESTED_STACK:
            status = self.stack_status(resource.physical_id)
            return (Finding.GONE, "") if status in (None, "DELETE_COMPLETE") else (Finding.LEFT, f"its stack is {status}")
        if resource.type_name in self.own_types:
            return Finding.GONE, ""
        if resource.type_name.startswith("AWS::"):
            why = await self.aws_types.left_on_endpoint(resource.model)
            return (Finding.GONE, "") if why is None else (Finding.LEFT, why)
        return Finding.UNCHECKED, "its type is no longer served"

    async def _read(self, resource: MadeResource, stack_id: str, stack_name: str) -> Tuple[Finding, str]:
        result = await self.operations.operation(
            resource.type_name,
            Action.READ,
            dict(resource.model or {}),
            None,
            label=f"stack {stack_name} {resource.logical_id} (deleted: READ must answer NotFound)",
            logical_id=resource.logical_id,
            stack_id=stack_id,
            history_source=STACK_SOURCE,
        ).run()
        if result.status is OperationStatus.FAILED and result.error_code == "NotFound":
            return Finding.GONE, ""
        if result.status is OperationStatus.SUCCESS:
            return Finding.LEFT, "READ still answers SUCCESS after its DELETE_COMPLETE (the contract wants FAILED NotFound)"
        ending = f"{result.status.value} {result.error_code or ''}".strip()
        return Finding.LEFT, f"READ answered {ending}: {result.message} (the contract wants FAILED NotFound)"
