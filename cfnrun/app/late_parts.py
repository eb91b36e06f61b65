"""What serve loads once it listens, as one step, and how the calls that need it wait for it.

Serve listens as soon as the Lambda Invoke API can answer (``app/serve.py``). The review of
each answered call (``app/call_review.py``: the contract checker, pydantic's wire models, the
history's sqlite3; jsonschema comes with the first model it checks), Cloud Control's request store and the local stacks load right after, on a
thread, while the first worker imports the provider. In ``--contract warn`` nothing in an
answer depends on them: a call answered before they are here is reviewed once they are, in
the order answered. A ``--contract strict`` call and a Cloud Control request need them to
answer, so they wait. This module is light: the heavy parts are imported by the step itself.
"""
from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Set, Tuple

from cfnrun.api import service_errors
from cfnrun.api.cloudcontrol import CloudProgress, ResourceDescription
from cfnrun.stacks.api import STACK_OPERATIONS
from cfnrun.contract.mode import ContractMode
from cfnrun.model.budgets import Budgets
from cfnrun.model.errors import CfnrunError
from cfnrun.model.seen_call import seen_call
from cfnrun.ui.console import Console

if TYPE_CHECKING:
    from cfnrun.app.call_review import CallReview
    from cfnrun.model.module_fragment import ModuleFragment
    from cfnrun.model.project import Project
    from cfnrun.model.schema import ResourceSchema
    from cfnrun.runtime.registry import FunctionRegistry
    from cfnrun.app.resource_requests import ResourceRequestStore
    from cfnrun.app.served import Served
    from cfnrun.app.stacks.local_stacks import LocalStacks
    from cfnrun.api.cloudformation.custom_resource_responses import CustomResourceResponse
    from cfnrun.api.cloudformation.wait_condition_signals import HandleSignal
    from cfnrun.history.store import HistoryStore
    from cfnrun.model.budgets import Budget
    from cfnrun.runtime.outcome import InvocationOutcome
    from cfnrun.runtime.registry import ServedFunction

    # ``CallReview.report``'s arguments, with the call's payload as sent (parsed into its ``SeenCall`` at the review)
    Report = Tuple[ServedFunction, Any, InvocationOutcome, List[str], Budget]

LATE_MODULES = ("cfnrun.app.call_review", "cfnrun.app.resource_requests", "cfnrun.app.stacks.local_stacks", "cfnrun.history.recorder")


@dataclass(frozen=True)
class LateParts:
    review: "CallReview"
    requests: Optional["ResourceRequestStore"]  # None when only hooks are served: a hook provisions nothing
    histories: Dict[str, "HistoryStore"]  # each provider's own (its .cfnrun/), by type name; none when recording is off
    stacks: "LocalStacks"  # the CloudFormation API's stacks


class LateLoading:
    """Serve's one step after it starts listening (``begin``): load the ``LateParts``."""

    def __init__(self) -> None:
        self.parts: Optional[LateParts] = None  # once loaded
        self.task: Optional["asyncio.Task[LateParts]"] = None  # the step; raises what stops serve (an unusable schema)
        self._waiting: Set["asyncio.Future[None]"] = set()  # uses of the parts asked for before they loaded
        self._loop: Optional[asyncio.AbstractEventLoop] = None  # serve's, once begun
        self._reports: List["Report"] = []  # calls answered this turn of the loop, to review once it is over

    def begin(
        self,
        served: "Served",
        budgets: Budgets,
        console: Console,
        contract: ContractMode,
        virtual_clock: bool,
        url: str = "",
        stack_state: Optional[Path] = None,
        active_hooks: Tuple[str, ...] = (),
        rules_folders: Tuple[Path, ...] = (),
        modules: Tuple["ModuleFragment", ...] = (),
        parameter_lookups: bool = True,
    ) -> "asyncio.Task[LateParts]":
        self.task = asyncio.ensure_future(self._load(
            served, budgets, console, contract, virtual_clock, url, stack_state, active_hooks, rules_folders, modules, parameter_lookups,
        ))
        self._loop = self.task.get_loop()
        return self.task

    async def wait(self) -> LateParts:
        """The parts, once loaded; a call that cannot be answered without them waits here."""
        if self.parts is not None:
            return self.parts
        loading = self.task
        assert loading is not None, "begun as serve starts listening, before any call"
        try:
            return await asyncio.shield(loading)
        except asyncio.CancelledError:
            if loading.cancelled():  # serve stopped before they loaded: answered, not dropped
                raise service_errors.stopping("it stopped before its contract checks loaded") from None
            raise
        except CfnrunError as error:  # an unusable schema, found once serve listened: serve stops with it
            raise service_errors.ServiceError(500, "ServiceException", f"cfnrun cannot serve this project: {error}") from None

    def then(self, use: Callable[[LateParts], None]) -> None:
        """``use`` the parts once this turn of the loop is over (an answer on its way), or once they load; never if they do not."""
        if self.parts is not None:
            asyncio.get_running_loop().call_soon(use, self.parts)
            return
        waiting = asyncio.ensure_future(self._when_loaded(use))
        self._waiting.add(waiting)
        waiting.add_done_callback(self._waiting.discard)

    def then_report(self, function: "ServedFunction", payload: Any, outcome: "InvocationOutcome", notes: List[str], limit: "Budget") -> None:
        """The review (``CallReview.report``) of the call of ``function`` with ``payload`` once this turn of the loop is
        over, as ``then`` would: the calls answered in one turn share one callback on the loop (not one each), reviewed
        in the order answered. The call is parsed (``SeenCall``) then, not before its answer is written."""
        if self.parts is None:
            self.then(lambda parts: parts.review.report(function, seen_call(payload, function.type_name is not None), outcome, notes, limit))
            return
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        reports = self._reports
        reports.append((function, payload, outcome, notes, limit))
        if len(reports) == 1:
            self._loop.call_soon(self._report_now)

    def _report_now(self) -> None:
        reports, self._reports = self._reports, []
        assert self.parts is not None
        review = self.parts.review
        for at, report in enumerate(reports):
            try:
                function, payload, outcome, notes, limit = report
                review.report(function, seen_call(payload, function.type_name is not None), outcome, notes, limit)
            except BaseException:  # the loop says what went wrong, as for a callback of its own; the others are still reviewed
                rest = reports[at + 1:]
                if rest:
                    if not self._reports and self._loop is not None:
                        self._loop.call_soon(self._report_now)
                    self._reports[:0] = rest
                raise

    async def finish(self, timeout_s: float) -> None:
        """On stop: the step gets ``timeout_s`` (what is left of the shutdown grace), so the calls answered
        before it are reviewed and recorded like the rest; then it is cancelled, and the calls waiting for it
        are answered that serve stops."""
        loading = self.task
        if loading is None or loading.done():
            return
        await asyncio.wait([loading], timeout=timeout_s)
        if not loading.done():
            loading.cancel()
            await asyncio.gather(loading, return_exceptions=True)

    def close(self) -> None:
        """After the last call: close what reviews them (history)."""
        if self.parts is not None:
            self.parts.review.close()

    async def _when_loaded(self, use: Callable[[LateParts], None]) -> None:
        assert self.task is not None
        try:
            parts = await asyncio.shield(self.task)
        except (Exception, asyncio.CancelledError):  # noqa: B902 - not coming: serve says why and stops
            return
        use(parts)

    async def _load(
        self,
        served: "Served",
        budgets: Budgets,
        console: Console,
        contract: ContractMode,
        virtual_clock: bool,
        url: str,
        stack_state: Optional[Path],
        active_hooks: Tuple[str, ...],
        rules_folders: Tuple[Path, ...],
        modules: Tuple["ModuleFragment", ...],
        parameter_lookups: bool,
    ) -> LateParts:
        """The review of each call, Cloud Control's request store, then the spares.

        Every provider's schema is checked here too: a schema cfnrun cannot validate against raises, and
        serve stops with that error. A schema that passed before (``model/usable_schemas.py``) passes
        without jsonschema loading: the review loads it with the first model it checks.
        Each provider records in its own history (its ``.cfnrun/``), where ``cfnrun history`` and
        ``cfnrun replay`` in that project find its calls.
        """
        await asyncio.to_thread(_import_late_and_check, served)
        from cfnrun.app.call_review import CallReview
        from cfnrun.app.resource_requests import ResourceRequestStore
        from cfnrun.app.stacks.local_stacks import local_stacks
        from cfnrun.app.type_operations import TypeOperations
        from cfnrun.history.recorder import CallRecorder
        from cfnrun.history.store import HistoryStore
        from cfnrun.history.writer import HistoryWriter

        histories: Dict[str, HistoryStore] = {}
        writers: Dict[str, HistoryWriter] = {}
        recorders: Dict[str, CallRecorder] = {}
        for registry in served.providers:
            project = registry.project
            history = HistoryStore.for_recording(project.root)
            if history is not None:
                histories[project.type_name] = history
                writers[project.type_name] = HistoryWriter(history)
                recorders[project.type_name] = CallRecorder(writers[project.type_name], _schema_of(registry), project.type_name)
        operations = TypeOperations(served, console, contract, virtual_clock, histories, writers)
        stacks = local_stacks(operations, url, stack_state, active_hooks, rules_folders, modules, parameter_lookups)
        requests = ResourceRequestStore(operations, stacks.hooks) if served.type_names() else None
        await stacks.restore()
        self.parts = LateParts(CallReview(budgets, console, contract, recorders), requests, histories, stacks)
        served.keep_spares_when_warm()  # the spares import the providers' dependencies too: after all the rest
        return self.parts


def _schema_of(registry: "FunctionRegistry[Project]") -> "Callable[[], ResourceSchema]":
    """The provider's schema as it is when asked (a reload may bring a new one)."""
    return lambda: registry.project.schema


def _import_late_and_check(served: "Served") -> None:
    from cfnrun.model.usable_schemas import require_usable

    for name in LATE_MODULES:
        importlib.import_module(name)
    for registry in served.providers:
        require_usable(registry.project.schema)  # jsonschema loads only for a schema not found usable before


class CloudControlRequests:
    """The Cloud Control API's ``ResourceRequests``: the request store, each request waiting until it has loaded."""

    def __init__(self, late: LateLoading) -> None:
        self.late = late

    async def _store(self) -> "ResourceRequestStore":
        requests = (await self.late.wait()).requests
        assert requests is not None, "served with a resource type"
        return requests

    async def create_resource(self, type_name: str, desired: Dict[str, Any], client_token: Optional[str]) -> CloudProgress:
        return await (await self._store()).create_resource(type_name, desired, client_token)

    async def update_resource(self, type_name: str, identifier: str, patch: List[Dict[str, Any]], client_token: Optional[str]) -> CloudProgress:
        return await (await self._store()).update_resource(type_name, identifier, patch, client_token)

    async def delete_resource(self, type_name: str, identifier: str, client_token: Optional[str]) -> CloudProgress:
        return await (await self._store()).delete_resource(type_name, identifier, client_token)

    async def get_resource(self, type_name: str, identifier: str) -> ResourceDescription:
        return await (await self._store()).get_resource(type_name, identifier)

    async def list_resources(self, type_name: str, resource_model: Optional[Dict[str, Any]]) -> List[ResourceDescription]:
        return await (await self._store()).list_resources(type_name, resource_model)

    async def request_status(self, request_token: str) -> CloudProgress:
        return (await self._store()).request_status(request_token)

    async def list_requests(self) -> List[CloudProgress]:
        return (await self._store()).list_requests()

    async def cancel_request(self, request_token: str) -> CloudProgress:
        return (await self._store()).cancel_request(request_token)


class StackServiceWhenLoaded:
    """The CloudFormation API's ``StackService``: the local stacks, each call waiting until they have loaded."""

    def __init__(self, late: LateLoading) -> None:
        self.late = late

    def operations(self) -> "frozenset[str]":
        return STACK_OPERATIONS

    async def call(self, operation: str, params: Dict[str, Any]) -> Dict[str, Any]:
        return await (await self.late.wait()).stacks.calls.call(operation, params)


class HookPayloadsWhenLoaded:
    """The hook payload route's ``HookPayloads``: the documents of the STACK and CHANGE_SET hook invocations running."""

    def __init__(self, late: LateLoading) -> None:
        self.late = late

    async def payload(self, token: str) -> Optional[Dict[str, Any]]:
        return await (await self.late.wait()).stacks.payloads.payload(token)


class ResponsesWhenLoaded:
    """The ResponseURL route's ``CustomResourceResponses``: the local stacks' pending custom-resource requests."""

    def __init__(self, late: LateLoading) -> None:
        self.late = late

    async def respond(self, token: str, response: "CustomResourceResponse") -> bool:
        return await (await self.late.wait()).stacks.responses.respond(token, response)

    async def reject(self, token: str, reason: str) -> bool:
        return await (await self.late.wait()).stacks.responses.reject(token, reason)


class SignalsWhenLoaded:
    """The wait condition handles' route's ``WaitConditionSignals``: the local stacks' handles."""

    def __init__(self, late: LateLoading) -> None:
        self.late = late

    async def signal_handle(self, token: str, signal: "HandleSignal") -> bool:
        return await (await self.late.wait()).stacks.signal_handle(token, signal)
