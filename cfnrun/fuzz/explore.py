"""The exploration: hypothesis draws sequences of steps, ``SequenceRun`` runs and judges them.

A sequence is drawn step by step (hypothesis's interactive ``data()``), each step from what the
sequence has made so far: a CREATE with a generated model, a READ, UPDATE or DELETE of one of its
resources (deleted ones too: NotFound is expected), a LIST. When a step fails, hypothesis shrinks
the sequence (fewer steps, simpler values) and runs the smallest failing one last; that run's
steps are the finding. Failing cases are kept in hypothesis's example database (the project's
``.cfnrun/hypothesis``), so the next exploration tries them first.
"""
from __future__ import annotations

import hashlib
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple

from hypothesis import HealthCheck, Phase, Verbosity, find, given, settings
from hypothesis import seed as use_seed
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import Flaky, HypothesisWarning, NoSuchExample, Unsatisfiable

from cfnrun.events.fuzz import ExampleRun, FuzzCompleted, FuzzObserver
from cfnrun.fuzz.pins import Pins, check_pins
from cfnrun.fuzz.sequence import OperationRunner, SequenceFailed, SequenceRun
from cfnrun.fuzz.steps import Finding, Step
from cfnrun.fuzz.storage import tables_in_cache
from cfnrun.fuzz.strategies import ModelStrategies
from cfnrun.model.action import Action
from cfnrun.model.errors import CfnrunError
from cfnrun.model.identifiers import identifier_names
from cfnrun.model.schema import ResourceSchema, pointer_to_path

ACTIONS = (Action.CREATE, Action.READ, Action.UPDATE, Action.LIST, Action.DELETE)  # the order shrinking prefers
# READ is drawn twice as often as the others: it is the step that shows what a write really left.
DRAWN = ACTIONS + (Action.READ,)
CREATE_ONLY_CHANGE_ODDS = 4  # one UPDATE in this many changes a createOnly property (expected: NotUpdatable)


@dataclass(frozen=True)
class FuzzBudget:
    max_examples: int = 100  # sequences generated (the ones shrinking runs come on top)
    seed: Optional[int] = None
    actions: Tuple[Action, ...] = ACTIONS
    max_steps: int = 10  # steps in one sequence, at most
    strict: bool = True  # contract MUST violations are failures
    tolerate_failures: bool = False  # faults are injected: FAILED with an error code is an acceptable answer
    shrink_time_s: float = 60.0  # shrinking a failure, at most this long (then the smallest case seen stands)
    shrink_examples: int = 500  # and at most this many sequences
    pins: Pins = ()  # top-level properties every model carries with these values (--set): never drawn or shrunk


@dataclass
class Exploration:
    completed: FuzzCompleted
    finding: Optional[Finding]  # the smallest failing sequence; None when nothing failed


@dataclass
class _Tally:
    examples: int = 0
    operations: int = 0
    started: float = field(default_factory=time.monotonic)
    smallest: Optional[Finding] = None  # of the failing sequences seen: fewest steps, then shortest
    first_failure: Optional[Tuple[int, float]] = None  # examples run and the time when a sequence first failed: shrinking starts
    shrink_stopped: Optional[str] = None  # why shrinking stopped before hypothesis was done, when it did

    def keep(self, finding: Finding) -> None:
        if self.smallest is None or _size(finding) < _size(self.smallest):
            self.smallest = finding
        if self.first_failure is None:
            self.first_failure = (self.examples, time.monotonic())

    def over_shrink_budget(self, budget: FuzzBudget) -> bool:
        """Shrinking has run its examples or its time (``--shrink-examples``, ``--shrink-time``); says why once."""
        if self.first_failure is None:
            return False
        if self.shrink_stopped is None:
            examples, since = self.first_failure
            if self.examples - examples >= budget.shrink_examples:
                self.shrink_stopped = f"shrinking stopped after {budget.shrink_examples} sequences (--shrink-examples)"
            elif time.monotonic() - since >= budget.shrink_time_s:
                self.shrink_stopped = f"shrinking stopped after {budget.shrink_time_s:g} s (--shrink-time)"
        return self.shrink_stopped is not None


def _size(finding: Finding) -> Tuple[int, int]:
    return len(finding.steps), len(repr(finding.steps))


class _StepDrawer:
    """Draws the next step of a sequence from what it has made so far."""

    def __init__(self, schema: ResourceSchema, actions: Tuple[Action, ...], pins: Pins = ()) -> None:
        self.schema = schema
        self.actions = [action for action in DRAWN if action in actions]
        self.models = ModelStrategies(schema).model(dict(pins))
        self.create_only = [pointer_to_path(p)[0] for p in schema.create_only_properties if len(pointer_to_path(p)) == 1]
        self.identifiers = set(identifier_names(schema))

    def draw(self, data: Any, run: SequenceRun) -> Step:
        known = sorted(run.resources)
        possible = [a for a in self.actions if a in (Action.CREATE, Action.LIST) or known]
        action = data.draw(st.sampled_from(possible), label="action")
        if action is Action.CREATE:
            return Step(action, run.next_number(), data.draw(self.models, label="model"))
        if action is Action.LIST:
            return Step(action)
        number = data.draw(st.sampled_from(known), label="resource")
        if action is not Action.UPDATE:
            return Step(action, number)
        return Step(action, number, self._update(data, run.current(number)))

    def _update(self, data: Any, current: Dict[str, Any]) -> Dict[str, Any]:
        """A new model for a resource: createOnly properties kept as they are, unless this update is the one in
        CREATE_ONLY_CHANGE_ODDS that changes them; its primary identifier is added by the run."""
        model = dict(data.draw(self.models, label="model"))
        changes_create_only = bool(self.create_only) and data.draw(st.integers(0, CREATE_ONLY_CHANGE_ODDS - 1), label="createOnly") == 1
        for name in self.create_only:
            if changes_create_only:
                continue
            if name in current:
                model[name] = current[name]
            else:
                model.pop(name, None)
        return {name: value for name, value in model.items() if name not in self.identifiers}


def declared_actions(schema: ResourceSchema, actions: Tuple[Action, ...]) -> Tuple[Tuple[Action, ...], Tuple[Action, ...]]:
    """Of ``actions``, those whose handler the schema's ``handlers`` declares, and those it does not.

    CloudFormation and ``cfn test`` call only declared handlers (most providers declare no list
    handler), so fuzzing does too; a CfnrunError when no sequence can be made of what is left.
    """
    kept = tuple(action for action in actions if schema.handler(action) is not None)
    undeclared = tuple(action for action in actions if action not in kept)
    if Action.CREATE not in kept and kept != (Action.LIST,):
        missing = "create" if Action.CREATE in undeclared or not undeclared else ", ".join(a.schema_handler for a in undeclared)
        raise CfnrunError(
            f"{schema.type_name}'s schema declares no {missing} handler (its 'handlers'): cfnrun fuzz calls only declared "
            "handlers, and every sequence but a LIST alone starts with a CREATE"
        )
    return kept, undeclared


def explore(
    schema: ResourceSchema,
    runner: OperationRunner,
    budget: FuzzBudget,
    database: Optional[Path] = None,
    observer: Optional[FuzzObserver] = None,
    ready: Optional[Callable[[], None]] = None,
) -> Exploration:
    """Run generated sequences against ``runner`` until one fails (then shrink it) or the budget is spent.

    ``ready``: called once the strategies are built and a valid model is known to exist, before the first
    sequence runs (``fuzz`` waits there for the worker it started meanwhile)."""
    with tables_in_cache():  # hypothesis's tables: computed once per machine, not once per folder fuzz runs in
        return _explore(schema, runner, budget, database, observer, ready)


def _explore(
    schema: ResourceSchema,
    runner: OperationRunner,
    budget: FuzzBudget,
    database: Optional[Path],
    observer: Optional[FuzzObserver],
    ready: Optional[Callable[[], None]],
) -> Exploration:
    actions, _ = declared_actions(schema, budget.actions)
    check_pins(schema, budget.pins)
    drawer = _StepDrawer(schema, actions, budget.pins)
    _require_a_model(schema, drawer.models, budget.pins)
    if ready is not None:
        ready()
    tally = _Tally()
    tell = observer or (lambda event: None)

    @settings(
        max_examples=budget.max_examples,
        deadline=None,
        database=DirectoryBasedExampleDatabase(str(database)) if database is not None else None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        verbosity=Verbosity.quiet,
        print_blob=False,
    )
    @given(st.data())
    def sequence(data: Any) -> None:
        if tally.over_shrink_budget(budget):
            return  # shrinking's budget is spent: each attempt passes at once, and the smallest failing case seen stands
        run = SequenceRun(schema, runner, strict=budget.strict, tolerate_failures=budget.tolerate_failures)
        failed = stopped = False
        try:
            for _ in range(data.draw(st.integers(1, budget.max_steps), label="steps")):
                run.apply(drawer.draw(data, run))
        except SequenceFailed as failure:
            failed = True
            tally.keep(failure.finding)
            raise
        except (KeyboardInterrupt, SystemExit):
            stopped = True  # no clean-up operations after Ctrl-C: the command stops its workers
            raise
        finally:
            if not stopped:
                run.clean_up()
            tally.examples += 1
            tally.operations += run.operations
            tell(ExampleRun(tally.examples, [s.describe(schema) for s in run.steps], failed, tally.operations, _since(tally.started)))

    # One database entry per resource type, across cfnrun versions (not the digest of this function's code).
    sequence._hypothesis_internal_database_key = hashlib.sha256(f"cfnrun fuzz {schema.type_name}".encode()).digest()  # type: ignore[attr-defined]
    test = use_seed(budget.seed)(sequence) if budget.seed is not None else sequence
    finding: Optional[Finding] = None
    try:
        with warnings.catch_warnings():  # a recursive schema's strategy has a huge repr, which hypothesis warns of when writing it
            warnings.filterwarnings("ignore", "Generating overly large repr", HypothesisWarning)
            test()
    except SequenceFailed as failure:
        finding = failure.finding  # the last run hypothesis makes is the smallest failing one
    except Flaky:  # the smallest case did not fail again when hypothesis repeated it: the smallest seen failing stands
        if tally.smallest is None:
            raise
        finding = tally.smallest
    if tally.shrink_stopped is not None and tally.smallest is not None:
        finding = tally.smallest
    completed = FuzzCompleted(tally.examples, tally.operations, _since(tally.started))
    if finding is not None:
        completed.shrink_stopped = tally.shrink_stopped
    if finding is not None:
        completed.steps = [s.describe(schema) for s in finding.steps]
        completed.failing_step, completed.problems = finding.failing, finding.problems
    return Exploration(completed, finding)


def _require_a_model(schema: ResourceSchema, models: st.SearchStrategy[Dict[str, Any]], pins: Pins = ()) -> None:
    """A CfnrunError when no valid model comes out of the schema (the sequences would be LISTs alone).

    Only whether one exists matters: the first found is not shrunk (on a recursive schema, shrinking it and explaining
    the shrink took seconds before the first sequence ran)."""
    quiet = settings(database=None, max_examples=100, suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, print_blob=False,
                     phases=[Phase.generate])
    try:
        find(models, lambda _: True, settings=quiet)
    except (NoSuchExample, Unsatisfiable):
        causes = "a required property that is readOnly, or constraints no value meets"
        if pins:
            causes = f"a required property that is readOnly, constraints no value meets, or a --set value it does not accept " \
                f"({', '.join(name for name, _ in pins)})"
        raise CfnrunError(
            f"cfnrun fuzz could not generate a valid model from {schema.type_name}'s schema ({causes}?): 'cfnrun validate' checks it"
        ) from None


def _since(started: float) -> float:
    return time.monotonic() - started
