"""``cfnrun fuzz`` wired to the one invoker on the one runtime, and a found case recorded and replayed.

The exploration (``cfnrun/fuzz/``) is synchronous: hypothesis calls the test, the test runs
operations. Each operation is an ``Operation`` (``invoker/operation.py``) with the contract
checker, on the type function's warm worker pool (``runtime/registry.py``), driven to its end on
one event loop owned by this thread: ``run_until_complete`` per operation is as fast as handing
each one to a loop in another thread (bench/fuzz.py measures both, within a few per cent of each
other) with no second thread to stop, and hypothesis never runs while an operation does.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Awaitable, Dict, Iterator, List, Optional, Protocol, TypeVar

from cfnrun.app.history import FUZZ_SOURCE  # history's source of a recorded case
from cfnrun.app.invoke import ProviderLoadError
from cfnrun.app.moto_server import aws_endpoint_choice, moto_server
from cfnrun.app.preflight import interpreter_version, runtime_mismatch
from cfnrun.app.options import from_record, to_record
from cfnrun.app.settings.fuzz import FuzzSettings
from cfnrun.contract.checker import ContractChecker, ContractMode
from cfnrun.contract.shape import ShapeValidator
from cfnrun.events.fuzz import FuzzCompleted, FuzzObserver, FuzzStarted
from cfnrun.events.operation import OperationResult
from cfnrun.fuzz.explore import Exploration, FuzzBudget, declared_actions, explore
from cfnrun.fuzz.sequence import SequenceFailed, SequenceRun
from cfnrun.fuzz.steps import Finding, Step
from cfnrun.fuzz.strategies import ModelStrategies
from cfnrun.history.store import HistoryStore, RecordedOperation
from cfnrun.invoker.clock import RealClock, VirtualClock
from cfnrun.invoker.credentials import PLACEHOLDER
from cfnrun.invoker.operation import Operation
from cfnrun.invoker.payloads import Entrypoint, OperationRequest
from cfnrun.invoker.request_files import OperationInput
from cfnrun.invoker.retries import RetryPolicy
from cfnrun.model.action import Action
from cfnrun.model.budgets import Budgets
from cfnrun.model.errors import CfnrunError
from cfnrun.model.local_state import state_folder
from cfnrun.model.patterns import skipped_pattern_note, unusable_patterns
from cfnrun.model.project import Project, load_project
from cfnrun.model.schema import WRITE_ONLY_MASK
from cfnrun.runtime.process import WorkerInitError
from cfnrun.runtime.registry import FunctionRegistry
from cfnrun.runtime.spec import RuntimeSettings

T = TypeVar("T")
DATABASE = "hypothesis"  # the example database's folder in the project's .cfnrun/


class LoopDriver(Protocol):
    """What drives an operation to its end from synchronous code: an event loop owned by this thread (``fuzz``)."""

    def run_until_complete(self, future: Awaitable[T]) -> T: ...


class InvokerRunner:
    """Runs the fuzzer's operations (``fuzz.sequence.OperationRunner``) on the type function's warm workers."""

    def __init__(self, project: Project, settings: FuzzSettings, loop: LoopDriver) -> None:
        self.project, self.settings, self.loop = project, settings, loop
        self.function = project.type_function()
        runtime = RuntimeSettings(
            log_level=settings.log_level, python=settings.python, faults=settings.faults, aws_endpoint=settings.aws_endpoint
        )
        self.registry = FunctionRegistry(project, runtime)
        self.shape = ShapeValidator(project.schema)  # compiled once for every operation's checks
        self._arrival: "Optional[asyncio.Future[None]]" = None  # the worker start_warming started, until warmed

    def warm(self) -> None:
        self.start_warming()
        self.warmed()

    def start_warming(self) -> None:
        """Start the worker now: it imports the provider while this process goes on (``warmed`` waits for it)."""
        pool = self.registry.pool(self.function)

        async def started() -> "Optional[asyncio.Future[None]]":
            arrival = pool.start_warming()
            await asyncio.sleep(0)  # its first step runs: the process is spawned and told to load
            return arrival

        self._arrival = self.loop.run_until_complete(started())

    def warmed(self) -> None:
        """Wait until the worker ``start_warming`` started is warm; ProviderLoadError when the provider cannot load."""
        arrival, self._arrival = self._arrival, None
        if arrival is None:
            return

        async def arrived() -> None:
            await arrival

        try:
            self.loop.run_until_complete(arrived())
        except WorkerInitError as error:
            raise ProviderLoadError(error) from None

    def run(self, action: Action, desired: Dict[str, Any], previous: Optional[Dict[str, Any]]) -> OperationResult:
        schema = self.project.schema
        request = OperationRequest(
            action=action,
            type_name=self.project.type_name,
            region=self.registry.settings.region,
            account_id=self.registry.settings.account_id,
            entrypoint=Entrypoint.TYPE,
            operation=OperationInput(desired=desired, previous=previous),
            credentials=PLACEHOLDER,  # generated input never reaches a real account
        )
        checker = None
        if self.settings.contract is not ContractMode.OFF:
            checker = ContractChecker(schema, action, desired, previous, shape=self.shape)
        operation = Operation(
            self.registry.pool(self.function),
            request,
            schema,
            function_name=self.function.logical_id,
            budgets=Budgets(),
            function_timeout_s=self.function.timeout_s,
            clock=VirtualClock() if self.settings.virtual_clock else RealClock(),
            checker=checker,
            retry=RetryPolicy(),
            command="cfnrun fuzz",  # a failed answer's cause and hint (fuzz/sequence.py shows them) name fuzz's flags
        )
        return self.loop.run_until_complete(operation.run())

    def close(self) -> None:
        self.loop.run_until_complete(self.registry.close())
        arrival, self._arrival = self._arrival, None
        if arrival is not None and arrival.done() and not arrival.cancelled():
            arrival.exception()  # the exploration stopped before waiting for it (no valid model...): that error is the one told


@dataclass
class FuzzReport:
    completed: FuzzCompleted
    finding: Optional[Finding]
    notes: List[str]

    @property
    def failed(self) -> bool:
        return self.finding is not None


def load_fuzzed_project(root: Path) -> Project:
    """The project to fuzz; a CfnrunError when it is not one fuzzing can drive."""
    project = load_project(root)
    if project.is_hook:
        raise CfnrunError(f"{project.type_name} is a hook: cfnrun fuzz drives a resource type's CREATE, READ, UPDATE, DELETE and LIST")
    if not project.schema.primary_identifier:
        raise CfnrunError(f"{project.type_name} declares no primaryIdentifier: fuzzing cannot name the resources it makes")
    return project


def budget_of(settings: FuzzSettings) -> FuzzBudget:
    return FuzzBudget(
        max_examples=settings.max_examples,
        seed=settings.seed,
        actions=settings.actions,
        max_steps=settings.max_steps,
        strict=settings.contract is ContractMode.STRICT,
        tolerate_failures=bool(settings.faults),
        shrink_time_s=settings.shrink_time_s,
        shrink_examples=settings.shrink_examples,
        pins=settings.pins,
    )


def run_fuzz(root: Path, settings: FuzzSettings, observer: FuzzObserver) -> FuzzReport:
    """Explore the project's handlers; a failure is recorded in the project's history (``completed.history_id``)."""
    aws_endpoint_choice(settings.aws_endpoint, settings.moto)
    project = load_fuzzed_project(root)
    schema = project.schema
    notes = [skipped_pattern_note(pointer, pattern) for pointer, pattern in unusable_patterns(schema.document)]
    mismatch = runtime_mismatch(project, interpreter_version(settings.python))  # a bad --python is a usage error, before any worker
    notes += [mismatch] if mismatch else []
    actions, undeclared = declared_actions(schema, settings.actions)
    observer(FuzzStarted(
        project.type_name, settings.max_examples, settings.seed, [a.value for a in actions], settings.virtual_clock,
        [rule.text for rule in settings.faults], [a.value for a in undeclared],
    ))
    exploration = _explore(project, settings, observer)
    if exploration.finding is not None:
        exploration.completed.history_id = record_finding(project, settings, exploration)
    observer(exploration.completed)
    return FuzzReport(exploration.completed, exploration.finding, notes)


def _explore(project: Project, settings: FuzzSettings, observer: FuzzObserver) -> Exploration:
    with _aws_stand_in(settings) as settings:
        loop = asyncio.new_event_loop()
        runner = InvokerRunner(project, settings, loop)
        try:
            runner.start_warming()  # the worker imports the provider while the exploration builds its strategies
            database = state_folder(project.root) / DATABASE
            return explore(project.schema, runner, budget_of(settings), database, observer, ready=runner.warmed)
        finally:
            runner.close()
            loop.close()


@contextlib.contextmanager
def _aws_stand_in(settings: FuzzSettings) -> Iterator[FuzzSettings]:
    """``settings``, with ``--moto``'s server started for as long as the workers run and named as their AWS endpoint."""
    if not settings.moto:
        yield settings
        return
    with moto_server() as url:
        yield replace(settings, moto=False, aws_endpoint=url)


def record_finding(project: Project, settings: FuzzSettings, exploration: Exploration) -> Optional[int]:
    """Keep the minimal case in the project's history (None when recording is off): ``cfnrun replay ID`` runs it."""
    finding = exploration.finding
    assert finding is not None
    store = HistoryStore.for_recording(project.root)
    if store is None:
        return None
    schema = project.schema
    request = {
        "source": FUZZ_SOURCE,
        "typeName": project.type_name,
        "steps": [step.record(schema) for step in finding.steps],
        "failingStep": finding.failing,
        "problems": finding.problems,
        "settings": to_record(settings),
    }
    head = {
        "type_name": project.type_name,
        "action": finding.steps[finding.failing].action.value,
        "function": project.type_function().logical_id,
        "status": "FAILED",
        "error_code": _kind(finding.problems[0]),
        "invocations": len(finding.steps),
        "duration_s": exploration.completed.elapsed_s,
    }
    return store.add(FUZZ_SOURCE, None, head, json.dumps(request, sort_keys=True), [])


def _kind(problem: str) -> str:
    """A problem's short name for history's ERROR column: ``read-after-write``, a contract rule id, ``NotUpdatable``..."""
    if problem.startswith("contract ["):
        return problem[len("contract ["):].split("]", 1)[0]
    head = problem.split(":", 1)[0]
    return head if " " not in head else "unexpected-outcome"


def recorded_case(operation: RecordedOperation) -> "tuple[List[Step], List[str]]":
    """A recorded case's steps, and the problems it showed when found."""
    request = operation.request
    return [Step.from_record(record) for record in request.get("steps") or []], list(request.get("problems") or [])


@dataclass
class CaseReplay:
    steps: List[Step]
    finding: Optional[Finding]  # None: the case passes now
    notes: List[str]


def replay_case(root: Path, operation: RecordedOperation) -> CaseReplay:
    """Run a recorded case's steps again, judged as fuzzing judged them, with the settings it was found with."""
    project = load_fuzzed_project(root)
    with _aws_stand_in(from_record(FuzzSettings, operation.request.get("settings") or {})) as settings:
        return _replay_steps(project, settings, operation)


def _replay_steps(project: Project, settings: FuzzSettings, operation: RecordedOperation) -> CaseReplay:
    schema = project.schema
    steps, _ = recorded_case(operation)
    strategies = ModelStrategies(schema)
    notes: List[str] = []
    filled = [replace(step, properties=strategies.fill_masked(step.properties, WRITE_ONLY_MASK)) if step.properties else step for step in steps]
    if filled != steps:
        notes.append("writeOnly values are not recorded: the replay sends the simplest valid value in their place")
    loop = asyncio.new_event_loop()
    runner = InvokerRunner(project, settings, loop)
    budget = budget_of(settings)
    run = SequenceRun(schema, runner, strict=budget.strict, tolerate_failures=budget.tolerate_failures)
    finding: Optional[Finding] = None
    try:
        runner.warm()
        for step in filled:
            run.apply(step)
    except SequenceFailed as failure:
        finding = failure.finding
    finally:
        try:
            run.clean_up()
        finally:
            runner.close()
            loop.close()
    return CaseReplay(filled, finding, notes)

