"""One resource operation of a served type, run by the one invoker on the type's warm workers.

Cloud Control's requests and local stacks' resources both end here: the request CloudFormation
would send (a HandlerRequest to TypeFunction), the ``Operation`` that drives it (replay after
CallbackDelaySeconds, budgets, timeoutInMinutes, retries), the contract checks, the console
line and the record in the provider's history.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from cfnrun.app.history import CLOUD_CONTROL_SOURCE, cloud_control_recorder, request_masker
from cfnrun.app.served import Served, UnknownType
from cfnrun.app.settings.invoke import InvokeSettings
from cfnrun.contract.checker import ContractChecker, ContractMode
from cfnrun.contract.shape import ShapeValidator
from cfnrun.contract.violations import Violation
from cfnrun.events.operation import ContractChecked, InvocationCompleted, Observer, OperationEvent
from cfnrun.history.store import HistoryStore
from cfnrun.history.writer import HistoryWriter
from cfnrun.invoker.clock import RealClock, VirtualClock
from cfnrun.invoker.credentials import caller_credentials
from cfnrun.invoker.operation import Operation
from cfnrun.invoker.hook_payloads import HookOperationRequest
from cfnrun.invoker.payloads import Entrypoint, OperationRequest
from cfnrun.invoker.request_files import OperationInput
from cfnrun.model.hook_protocol import StackLevelTarget
from cfnrun.model.hook_targets import hook_target
from cfnrun.model.project import Project
from cfnrun.model.protocol import Action, Credentials
from cfnrun.model.schema import ResourceSchema
from cfnrun.runtime.registry import FunctionRegistry
from cfnrun.runtime.spec import RuntimeSettings
from cfnrun.ui.console import Console


@dataclass(frozen=True)
class ContractReport:
    """What one contract check of a served type's operation found, and whose operation it was."""

    type_name: str
    action: Action
    stack_id: str  # "" outside a stack
    logical_id: Optional[str]
    violations: List[Violation]


class TypeOperations:
    def __init__(
        self,
        served: Served,
        console: Console,
        contract: ContractMode = ContractMode.WARN,
        virtual_clock: bool = False,
        histories: Optional[Dict[str, HistoryStore]] = None,
        writers: Optional[Dict[str, HistoryWriter]] = None,
    ) -> None:
        self.served = served
        self.budgets = served.budgets
        self.console = console
        self.contract = contract
        self.virtual_clock = virtual_clock
        self.histories = histories or {}  # each provider's, by type name: every operation is recorded there
        self.writers = writers or {}  # serve's writer of each history, by type name (a history without one is written in line)
        self.type_configurations: Dict[str, Dict[str, Any]] = {}  # SetTypeConfiguration's, by type name
        self._shapes: Dict[str, ShapeValidator] = {}
        self._credentials: Optional[Credentials] = None
        self._settings_made: Dict[str, Tuple[Tuple[Any, ...], InvokeSettings]] = {}  # by type name: the inputs and ``_ran_with``'s answer
        # told of every check that found violations, in any operation (``cfnrun stack test`` sums up its stack's)
        self.contract_listeners: List[Callable[[ContractReport], None]] = []

    def schema(self, type_name: str) -> Optional[ResourceSchema]:
        """The served type's schema as it is now (a reload may bring a new one), or None."""
        try:
            return self.served.provider(type_name).project.schema
        except UnknownType:
            return None

    def new_clock(self) -> RealClock:
        return VirtualClock() if self.virtual_clock else RealClock()

    def _shape(self, schema: ResourceSchema) -> ShapeValidator:
        """One compiled schema per type for every operation's contract checks, until a reload brings a new schema."""
        shape = self._shapes.get(schema.type_name)
        if shape is None or shape.schema is not schema:
            shape = self._shapes[schema.type_name] = ShapeValidator(schema)
        return shape

    def _caller_credentials(self) -> Credentials:
        """The handler's caller credentials, as ``cfnrun invoke`` passes them; looked up once, on first use."""
        if self._credentials is None:
            self._credentials, _ = caller_credentials(aws_endpoint=self.served.aws_endpoint)
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
        target_name: Optional[str] = None,
        type_configuration: Optional[Dict[str, Any]] = None,
        stack_level: Optional[StackLevelTarget] = None,
        secrets: Sequence[str] = (),
        change_set_id: Optional[str] = None,
        max_reinvoke: Optional[int] = None,
    ) -> Operation:
        """One operation of ``type_name``: a resource type's, or a hook's at ``action`` (an invocation point) on ``target_name``.

        ``secrets``: values its console lines and history records mask besides the request's own (a stack's NoEcho values)."""
        registry = self.served.provider(type_name)
        project = registry.project  # as it is now: a reload may bring new code or a new schema
        function = project.type_function()
        schema = project.schema
        request_class = HookOperationRequest if project.is_hook else OperationRequest
        request = request_class(
            action=action,
            type_name=project.type_name,
            region=self.served.region,
            account_id=self.served.account_id,
            entrypoint=Entrypoint.TYPE,
            operation=OperationInput(
                desired=desired,
                previous=previous,
                logical_resource_id=logical_id,
                client_request_token=client_request_token,
                type_configuration=type_configuration if type_configuration is not None else self.type_configurations.get(type_name),
                tags=tags or {},
                target_name=target_name,
                stack_level=stack_level,
                change_set_id=change_set_id,
            ),
            credentials=self._caller_credentials(),
            stack_id=stack_id,
            string_primitives=string_primitives,
        )
        checker = None
        if self.contract is not ContractMode.OFF:
            hook = hook_target(project.root, schema, action, target_name or "") if project.is_hook else None
            checker = ContractChecker(schema, action, desired, previous, shape=self._shape(schema), target=hook)
        shown = self.served.shown_name(registry, function.logical_id)
        masker = request_masker(schema, request)  # the request's secrets: hidden in the console lines as in the history's record
        masker.learn_values(secrets)
        mask = masker.masked_output if masker.has_secrets else None

        def on_console(event: OperationEvent) -> None:
            if isinstance(event, InvocationCompleted):
                self.console.call(shown, f"{action.value} ({label})", event.outcome, mask=mask)
            elif isinstance(event, ContractChecked):
                for violation in event.violations:
                    self.console.warn(f"{label}: contract {'✗' if violation.is_error else '!'} {violation.line()}", mask)
                if event.violations:
                    report = ContractReport(project.type_name, action, stack_id, logical_id, list(event.violations))
                    for listener in self.contract_listeners:
                        listener(report)

        watching: List[Observer] = [on_console, *(observers or [])]
        history = self.histories.get(project.type_name)
        if history is not None:
            ran_with = self._ran_with(project, registry, action, string_primitives)
            writer = self.writers.get(project.type_name)
            watching.append(cloud_control_recorder(history, schema, project.type_name, request, ran_with, history_source, writer, masker))
        return Operation(
            self.served.code(project.type_name),
            request,
            schema,
            function_name=function.logical_id,
            budgets=self.budgets,
            function_timeout_s=function.timeout_s,
            clock=clock or self.new_clock(),
            observers=watching,
            checker=checker,
            strict=self.contract is ContractMode.STRICT,
            max_reinvoke=max_reinvoke,
            live=False,  # no observer here shows a call in flight (only ``cfnrun invoke``'s timeline does)
        )

    def _ran_with(self, project: Project, registry: "FunctionRegistry[Project]", action: Action, string_primitives: bool) -> InvokeSettings:
        """The ``cfnrun invoke`` settings that run this operation again (``cfnrun replay``): made once for the same inputs
        (a wide stack's resources share them), made again when any of them changes (a reload, another settings object)."""
        settings, function = registry.settings, project.type_function().logical_id
        inputs = (
            settings, function, action, string_primitives, self.virtual_clock, self.contract,
            self.budgets.time_scale, self.budgets.invocation_timeout_s, self.budgets.operation_timeout_s,
        )
        kept = self._settings_made.get(project.type_name)
        if kept is not None and kept[0] == inputs:
            return kept[1]
        made = self._settings_made[project.type_name] = (inputs, self._settings_for(settings, function, action, string_primitives))
        return made[1]

    def _settings_for(self, settings: RuntimeSettings, function: str, action: Action, string_primitives: bool) -> InvokeSettings:
        return InvokeSettings(
            action=action,
            function=function,
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
            string_primitives=string_primitives,
        )
