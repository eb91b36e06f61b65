"""One resource operation of a served type, run by the one invoker on the type's warm workers.

A stack's resources and Cloud Control's requests both end here: the request CloudFormation
would send (HandlerRequest to TypeFunction), the ``Operation`` that drives it (replay, budgets,
timeoutInMinutes, retries), the contract checks, the console line and the history record.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Protocol

from cfnrun.app.history import CLOUD_CONTROL_SOURCE, STACK_SOURCE, cloud_control_recorder
from cfnrun.app.settings.invoke import InvokeSettings
from cfnrun.contract.checker import ContractChecker, ContractMode
from cfnrun.contract.shape import ShapeValidator
from cfnrun.events.operation import InvocationCompleted, Observer, OperationEvent, OperationResult
from cfnrun.history.store import HistoryStore
from cfnrun.invoker.clock import RealClock, VirtualClock
from cfnrun.invoker.credentials import caller_credentials
from cfnrun.invoker.operation import Operation
from cfnrun.invoker.payloads import Entrypoint, OperationRequest
from cfnrun.invoker.request_files import OperationInput
from cfnrun.model.budgets import Budgets
from cfnrun.model.project import Project
from cfnrun.model.protocol import Action, Credentials
from cfnrun.model.schema import ResourceSchema
from cfnrun.runtime.outcome import InvocationOutcome
from cfnrun.runtime.registry import FunctionRegistry
from cfnrun.ui.console import Console


class CurrentCode:
    """Sends each invocation to the type function as it is now: after a reload, the new code."""

    def __init__(self, registry: FunctionRegistry) -> None:
        self.registry = registry

    async def invoke(self, event: Any, timeout_s: float, request_id: Optional[str] = None) -> InvocationOutcome:
        pool = self.registry.pool(self.registry.project.type_function())
        return await pool.invoke(event, timeout_s, request_id)


class TypeLookup(Protocol):
    def registry_for(self, type_name: str) -> Optional[FunctionRegistry]:
        """The registry of the provider serving ``type_name``, or None."""


class ServedTypeOperations:
    def __init__(
        self,
        types: TypeLookup,
        budgets: Budgets,
        console: Console,
        contract: ContractMode = ContractMode.WARN,
        virtual_clock: bool = False,
        history: Optional[HistoryStore] = None,
        clock: Optional[Callable[[], RealClock]] = None,
    ) -> None:
        self.types = types
        self.budgets = budgets
        self.console = console
        self.contract = contract
        self.virtual_clock = virtual_clock
        self.history = history
        self.new_clock = clock or (lambda: VirtualClock() if virtual_clock else RealClock())
        self._shapes: Dict[str, ShapeValidator] = {}
        self._credentials: Optional[Credentials] = None

    def schema(self, type_name: str) -> Optional[ResourceSchema]:
        registry = self.types.registry_for(type_name)
        return registry.project.schema if registry is not None else None  # a reload may bring a new one

    def _registry(self, type_name: str) -> FunctionRegistry:
        registry = self.types.registry_for(type_name)
        assert registry is not None, f"{type_name} is served"
        return registry

    def _shape(self, schema: ResourceSchema) -> ShapeValidator:
        """One compiled schema per type for every operation's contract checks, until a reload brings a new schema."""
        shape = self._shapes.get(schema.type_name)
        if shape is None or shape.schema is not schema:
            shape = self._shapes[schema.type_name] = ShapeValidator(schema)
        return shape

    def _caller_credentials(self, registry: FunctionRegistry) -> Credentials:
        """The handler's caller credentials, as ``cfnrun invoke`` passes them; looked up once, on first use."""
        if self._credentials is None:
            self._credentials, _ = caller_credentials(aws_endpoint=registry.settings.aws_endpoint)
        return self._credentials

    def operation(
        self,
        type_name: str,
        action: Action,
        desired: Dict[str, Any],
        previous: Optional[Dict[str, Any]],
        *,
        label: str,
        clock: Optional[RealClock] = None,
        logical_id: Optional[str] = None,
        stack_id: str = "",
        client_request_token: Optional[str] = None,
        tags: Optional[Dict[str, Dict[str, str]]] = None,
        string_primitives: bool = False,
        observers: Optional[List[Observer]] = None,
        history_source: str = CLOUD_CONTROL_SOURCE,
    ) -> Operation:
        registry = self._registry(type_name)
        project = registry.project
        function = project.type_function()
        schema = project.schema
        request = OperationRequest(
            action=action,
            type_name=project.type_name,
            region=registry.settings.region,
            account_id=registry.settings.account_id,
            entrypoint=Entrypoint.TYPE,
            operation=OperationInput(
                desired=desired,
                previous=previous,
                logical_resource_id=logical_id,
                client_request_token=client_request_token,
                tags=tags or {},
            ),
            credentials=self._caller_credentials(registry),
            stack_id=stack_id,
            string_primitives=string_primitives,
        )
        checker = None
        if self.contract is not ContractMode.OFF:
            checker = ContractChecker(schema, action, desired, previous, shape=self._shape(schema))

        def console_line(event: OperationEvent) -> None:
            if isinstance(event, InvocationCompleted):
                self.console.call(function.logical_id, f"{action.value} ({label})", event.outcome)

        watching: List[Observer] = [console_line, *(observers or [])]
        if self.history is not None:
            ran_with = self._ran_with(project, registry, action)
            watching.append(cloud_control_recorder(self.history, schema, project.type_name, request, ran_with, history_source))
        return Operation(
            CurrentCode(registry),
            request,
            schema,
            function_name=function.logical_id,
            budgets=self.budgets,
            function_timeout_s=function.timeout_s,
            clock=clock or self.new_clock(),
            observers=watching,
            checker=checker,
            strict=self.contract is ContractMode.STRICT,
        )

    async def run(self, type_name: str, action: Action, desired: Dict[str, Any], previous: Optional[Dict[str, Any]], **details: Any) -> OperationResult:
        """Run one operation to its end (stack resources send template values as text, as the service does)."""
        return await self.operation(type_name, action, desired, previous, string_primitives=True, history_source=STACK_SOURCE, **details).run()

    def _ran_with(self, project: Project, registry: FunctionRegistry, action: Action) -> InvokeSettings:
        """The ``cfnrun invoke`` settings that run this operation again (``cfnrun replay``)."""
        settings = registry.settings
        return InvokeSettings(
            action=action,
            function=project.type_function().logical_id,
            entrypoint=Entrypoint.TYPE,
            region=settings.region,
            account_id=settings.account_id,
            virtual_clock=self.virtual_clock,
            time_scale=self.budgets.time_scale,
            invocation_timeout=self.budgets.invocation_timeout_s,
            operation_timeout=self.budgets.operation_timeout_s,
            log_level=settings.log_level,
            memory_limit=settings.memory_limit,
            contract=self.contract,
            aws_endpoint=settings.aws_endpoint,
            faults=tuple(settings.faults),
            string_primitives=True,
        )
