"""cfnrun/fuzz/ without processes: models from the schema, the expected state and its checks, the smallest case."""
from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from hypothesis import given, settings

from cfnrun.events.operation import OperationResult
from cfnrun.fuzz.explore import FuzzBudget, declared_actions, explore
from cfnrun.fuzz.pins import parse_pins
from cfnrun.fuzz.sequence import SequenceFailed, SequenceRun
from cfnrun.fuzz.steps import Step
from cfnrun.fuzz import strategies
from cfnrun.fuzz.strategies import MAX_DEPTH, ModelStrategies
from cfnrun.model.action import Action
from cfnrun.model.endings import EndReason
from cfnrun.model.errors import CfnrunError
from cfnrun.model.patterns import ecma_search
from cfnrun.model.protocol import OperationStatus
from cfnrun.model.schema import WRITE_ONLY_MASK, ResourceSchema
from cfnrun.model.schema_validator import SchemaValidator

SIZER = ResourceSchema.load(Path(__file__).resolve().parents[1] / "fixtures" / "sizer" / "cfnrun-test-sizer.json")
SURROGATE_PAIRS = "^[\\u0020-\\uD7FF\\uE000-\\uFFFD\\uD800\\uDC00-\\uDBFF\\uDFFF\\r\\n\\t]*$"  # as ApplicationAutoscaling writes it


ALL_HANDLERS = {name: {"permissions": []} for name in ("create", "read", "update", "delete", "list")}


def _schema(properties: Dict[str, Any], **more: Any) -> ResourceSchema:
    return ResourceSchema({"typeName": "T::T::T", "properties": {"Id": {"type": "string"}, **properties},
                           "readOnlyProperties": ["/properties/Id"], "primaryIdentifier": ["/properties/Id"],
                           "handlers": ALL_HANDLERS, **more})


@settings(max_examples=200, deadline=None)
@given(ModelStrategies(SIZER).model())
def test_models_are_valid_and_never_carry_read_only_properties(model: Dict[str, Any]) -> None:
    assert "Id" not in model and "Name" in model
    assert SchemaValidator(SIZER.document).is_valid(model)


ECMA = _schema({"Code": {"type": "string", "pattern": "^\\d{3}$"}, "Text": {"type": "string", "pattern": SURROGATE_PAIRS, "maxLength": 8}},
               required=["Code", "Text"])


@settings(max_examples=200, deadline=None)
@given(ModelStrategies(ECMA).model())
def test_patterns_are_honoured_as_ecmascript_reads_them(model: Dict[str, Any]) -> None:
    assert all(c in "0123456789" for c in model["Code"])  # \d is ASCII in ECMAScript (Python's re would allow '٣')
    assert ecma_search(SURROGATE_PAIRS, model["Text"]) is True  # Python's re cannot even compile this one


def test_an_anchored_pattern_draws_no_candidate_ecmascript_refuses(monkeypatch: Any) -> None:
    """``^…$`` is drawn as a whole match: Python's ``$`` also matches before a final newline, which ECMAScript's does not,
    so every such candidate was drawn and thrown away."""
    refused: List[str] = []

    def judging(pattern: str, text: str) -> Optional[bool]:
        verdict = ecma_search(pattern, text)
        if verdict is False:
            refused.append(text)
        return verdict

    monkeypatch.setattr(strategies, "ecma_search", judging)
    zones: List[str] = []

    @settings(max_examples=100, deadline=None, database=None)
    @given(ModelStrategies(_schema({"Zone": {"type": "string", "pattern": "^zone-[a-c]$"}}, required=["Zone"])).model())
    def drawing(model: Dict[str, Any]) -> None:
        zones.append(model["Zone"])

    drawing()
    assert set(zones) == {"zone-a", "zone-b", "zone-c"}
    assert refused == []


DEPENDENT = _schema({"A": {"type": "boolean"}, "B": {"type": "integer", "minimum": 3, "maximum": 5}, "C": {"enum": ["x", "y"]}},
                    dependencies={"A": ["B"]})


@settings(max_examples=200, deadline=None)
@given(ModelStrategies(DEPENDENT).model())
def test_dependencies_ranges_and_enums_hold(model: Dict[str, Any]) -> None:
    assert "A" not in model or "B" in model
    assert 3 <= model.get("B", 3) <= 5 and model.get("C", "x") in ("x", "y")


def test_a_masked_write_only_value_is_replaced_by_the_simplest_valid_one() -> None:
    filled = ModelStrategies(SIZER).fill_masked({"Name": "a", "Secret": WRITE_ONLY_MASK}, WRITE_ONLY_MASK)
    assert filled["Name"] == "a" and SchemaValidator(SIZER.document).is_valid(filled) and filled["Secret"] != WRITE_ONLY_MASK


def test_steps_print_as_requests_with_write_only_values_masked_and_round_trip_through_history() -> None:
    step = Step(Action.CREATE, 1, {"Name": "a", "Size": 91, "Secret": "hunter22"})
    assert step.describe(SIZER) == f'CREATE #1 {{"Name": "a", "Secret": "{WRITE_ONLY_MASK}", "Size": 91}}'
    assert Step(Action.READ, 1).describe(SIZER) == "READ #1" and Step(Action.LIST).describe(SIZER) == "LIST"
    record = json.loads(json.dumps(step.record(SIZER)))
    assert "hunter22" not in json.dumps(record)
    assert Step.from_record(record) == Step(Action.CREATE, 1, {"Name": "a", "Size": 91, "Secret": WRITE_ONLY_MASK})


class Boxes:
    """An OperationRunner keeping boxes in a dict, with the sizer fixture's bug unless ``fixed``."""

    def __init__(self, fixed: bool = False, lists: bool = True, enforces_create_only: bool = True) -> None:
        self.fixed, self.lists, self.enforces_create_only = fixed, lists, enforces_create_only
        self.boxes: Dict[str, Dict[str, Any]] = {}
        self.numbers = itertools.count(1)

    def run(self, action: Action, desired: Dict[str, Any], previous: Optional[Dict[str, Any]]) -> OperationResult:
        stored = {k: v for k, v in desired.items() if k != "Secret"}
        if "Size" in stored and not self.fixed and stored["Size"] > 90:
            stored["Size"] %= 90
        if action is Action.LIST:
            return _result(action, models=list(self.boxes.values()) if self.lists else [])
        if action is Action.CREATE:
            box = {**stored, "Id": f"box-{next(self.numbers)}"}
            self.boxes[box["Id"]] = box
            return _result(action, {**{k: v for k, v in desired.items() if k != "Secret"}, "Id": box["Id"]})
        if desired["Id"] not in self.boxes:
            return _result(action, code="NotFound")
        if action is Action.READ:
            return _result(action, self.boxes[desired["Id"]])
        if action is Action.UPDATE:
            if self.enforces_create_only and (previous or {}).get("Zone") != desired.get("Zone"):
                return _result(action, code="NotUpdatable")
            self.boxes[desired["Id"]] = stored
            return _result(action, {k: v for k, v in desired.items() if k != "Secret"})
        del self.boxes[desired["Id"]]
        return _result(action)


def _result(action: Action, model: Optional[Dict[str, Any]] = None, models: Optional[List[Dict[str, Any]]] = None,
            code: Optional[str] = None) -> OperationResult:
    status = OperationStatus.FAILED if code else OperationStatus.SUCCESS
    return OperationResult(action, status, EndReason.HANDLER, code or "", 1, 0.0, error_code=code, resource_model=model, resource_models=models)


def _problems(run: SequenceRun, *steps: Step) -> List[str]:
    with pytest.raises(SequenceFailed) as failed:
        for step in steps:
            run.apply(step)
    return failed.value.finding.problems


def test_a_read_that_differs_from_the_write_is_a_failure_but_not_for_write_only_properties() -> None:
    run = SequenceRun(SIZER, Boxes())
    run.apply(Step(Action.CREATE, 1, {"Name": "a", "Size": 5, "Secret": "s3cret"}))
    run.apply(Step(Action.READ, 1))  # Secret never comes back: not compared
    problems = _problems(run, Step(Action.CREATE, 2, {"Name": "a", "Size": 91}), Step(Action.READ, 2))
    assert problems == ["read-after-write: /Size: requested 91, returned 1"]


def test_expected_failures_are_checked_too() -> None:
    run = SequenceRun(SIZER, Boxes(fixed=True, enforces_create_only=False))
    run.apply(Step(Action.CREATE, 1, {"Name": "a", "Zone": "zone-a"}))
    run.apply(Step(Action.DELETE, 1))
    run.apply(Step(Action.READ, 1))  # NotFound, as expected
    run.apply(Step(Action.CREATE, 2, {"Name": "a", "Zone": "zone-a"}))
    [problem] = _problems(run, Step(Action.UPDATE, 2, {"Name": "a", "Zone": "zone-b"}))
    assert problem.startswith("UPDATE should fail with NotUpdatable (it changes a createOnly property); it answered SUCCESS")


def test_a_list_that_leaves_out_a_resource_is_a_failure() -> None:
    run = SequenceRun(SIZER, Boxes(fixed=True, lists=False))
    [problem] = _problems(run, Step(Action.CREATE, 1, {"Name": "a"}), Step(Action.LIST))
    assert problem == "list-membership: #1 (box-1) exists but LIST does not name it"


def test_exploration_shrinks_the_failure_to_its_smallest_case() -> None:
    exploration = explore(SIZER, Boxes(), FuzzBudget(max_examples=3000, seed=7))
    finding = exploration.finding
    assert finding is not None and exploration.completed.failed
    assert [s.describe(SIZER) for s in finding.steps] == ['CREATE #1 {"Name": "a", "Size": 91}', "READ #1"]


def test_a_correct_runner_passes_and_every_sequence_cleans_up() -> None:
    boxes = Boxes(fixed=True)
    exploration = explore(SIZER, boxes, FuzzBudget(max_examples=50, seed=1))
    assert exploration.finding is None and exploration.completed.examples >= 50 and boxes.boxes == {}


def test_a_schema_no_valid_model_meets_is_a_clear_error() -> None:
    impossible = _schema({"Name": {"type": "string", "minLength": 3, "maxLength": 2}}, required=["Name"])
    with pytest.raises(CfnrunError, match="could not generate a valid model from T::T::T's schema"):
        explore(impossible, Boxes(), FuzzBudget(max_examples=5, seed=1))
    waited: List[str] = []
    with pytest.raises(CfnrunError, match="could not generate a valid model"):
        explore(impossible, Boxes(), FuzzBudget(max_examples=5, seed=1), ready=lambda: waited.append("ready"))
    assert waited == []  # fuzz's worker is not waited for when no sequence can run
    with pytest.raises(CfnrunError, match=r"or a --set value it does not accept \(Size\)"):  # each pin fits its property; no model fits
        explore(_schema({**impossible.document["properties"], "Size": {"type": "integer"}}, required=["Name"]), Boxes(),
                FuzzBudget(max_examples=5, seed=1, pins=(("Size", 1),)))


def test_ready_is_called_once_after_the_strategies_and_before_the_first_operation() -> None:
    boxes = Boxes(fixed=True)
    happened: List[str] = []
    run = boxes.run

    def recorded(action: Action, desired: Dict[str, Any], previous: Optional[Dict[str, Any]]) -> OperationResult:
        happened.append(action.value)
        return run(action, desired, previous)

    boxes.run = recorded  # type: ignore[method-assign]
    explore(SIZER, boxes, FuzzBudget(max_examples=5, seed=1), ready=lambda: happened.append("ready"))
    assert happened[0] == "ready" and happened.count("ready") == 1 and len(happened) > 1


class OnceBroken(Boxes):
    """Its first READ answers a wrong Name (every model has one), never again: a failure hypothesis cannot repeat."""

    def __init__(self) -> None:
        super().__init__(fixed=True)
        self.reads = 0

    def run(self, action: Action, desired: Dict[str, Any], previous: Optional[Dict[str, Any]]) -> OperationResult:
        result = super().run(action, desired, previous)
        if action is Action.READ and result.resource_model is not None:
            self.reads += 1
            if self.reads == 1:
                result.resource_model = {**result.resource_model, "Name": "someone-else"}
        return result


def test_a_failure_that_does_not_repeat_is_still_reported() -> None:
    exploration = explore(SIZER, OnceBroken(), FuzzBudget(max_examples=200, seed=2))
    assert exploration.finding is not None
    assert any(problem.startswith("read-after-write: /Name") for problem in exploration.finding.problems)


class Recording(Boxes):
    """Boxes that remembers which actions it was asked to run."""

    def __init__(self) -> None:
        super().__init__(fixed=True)
        self.called: set = set()

    def run(self, action: Action, desired: Dict[str, Any], previous: Optional[Dict[str, Any]]) -> OperationResult:
        self.called.add(action)
        return super().run(action, desired, previous)


def test_only_the_handlers_the_schema_declares_are_called() -> None:
    """Most providers declare no list handler; one without delete keeps what it made (no clean-up DELETE either)."""
    no_list = ResourceSchema({**SIZER.document, "handlers": {k: v for k, v in ALL_HANDLERS.items() if k != "list"}})
    runner = Recording()
    assert explore(no_list, runner, FuzzBudget(max_examples=40, seed=1)).finding is None
    assert runner.called == {Action.CREATE, Action.READ, Action.UPDATE, Action.DELETE}
    no_delete = ResourceSchema({**SIZER.document, "handlers": {"create": {}, "read": {}}})
    runner = Recording()
    assert explore(no_delete, runner, FuzzBudget(max_examples=20, seed=1)).finding is None
    assert runner.called == {Action.CREATE, Action.READ}
    assert declared_actions(no_delete, (Action.CREATE, Action.LIST)) == ((Action.CREATE,), (Action.LIST,))


def test_a_schema_without_a_create_handler_is_a_clear_error() -> None:
    with pytest.raises(CfnrunError, match="declares no create handler"):
        declared_actions(ResourceSchema({**SIZER.document, "handlers": {"read": {}}}), (Action.CREATE, Action.READ))


ATTRIBUTE_VALUE = {  # as DynamoDB's providers write it: one branch per kind, L and M holding AttributeValues again
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "S": {"type": "string"}, "N": {"type": "string", "pattern": "^-?[0-9]+$"}, "BOOL": {"type": "boolean"},
        "NULL": {"type": "boolean"}, "L": {"type": "array", "items": {"$ref": "#/definitions/AttributeValue"}},
        "M": {"type": "object", "patternProperties": {"^[A-Za-z]+$": {"$ref": "#/definitions/AttributeValue"}},
              "additionalProperties": False},
    },
    "oneOf": [{"required": [kind]} for kind in ("S", "N", "BOOL", "NULL", "L", "M")],
}
RECURSIVE = _schema({"Item": {"$ref": "#/definitions/AttributeValue"},
                     "Items": {"type": "array", "minItems": 1, "items": {"$ref": "#/definitions/AttributeValue"}}},
                    required=["Item"], definitions={"AttributeValue": ATTRIBUTE_VALUE})


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


@pytest.mark.filterwarnings("ignore:Generating overly large repr")  # the strategy of a recursive schema is large
@settings(max_examples=150, deadline=None)
@given(ModelStrategies(RECURSIVE).model())
def test_a_recursive_schema_gives_valid_models_of_bounded_depth(model: Dict[str, Any]) -> None:
    assert SchemaValidator(RECURSIVE.document).is_valid(model)
    assert _depth(model) <= 2 * MAX_DEPTH + 2


def test_a_one_of_branch_draws_no_property_another_branch_requires(monkeypatch: Any) -> None:
    """A value of one oneOf branch holding what another requires matches both and is thrown away; in a recursive
    schema nearly every model held one somewhere. Models are still drawn through L and M, nested."""
    models = ModelStrategies(RECURSIVE)
    judged: List[bool] = []
    judge = models.valid
    monkeypatch.setattr(models, "valid", lambda model: judged.append(judge(model)) or judged[-1])
    depths: List[int] = []

    @settings(max_examples=60, deadline=None, database=None)
    @given(models.model())
    def drawing(model: Dict[str, Any]) -> None:
        depths.append(_depth(model))

    drawing()
    assert judged and all(judged)
    assert max(depths) >= 5  # Item's L or M holding AttributeValues that hold more


def test_a_recursive_schema_is_explored() -> None:
    """DynamoDB's AttributeValue crashed fuzz with RecursionError before its first example."""
    exploration = explore(RECURSIVE, Boxes(fixed=True), FuzzBudget(max_examples=20, seed=1))
    assert exploration.finding is None and exploration.completed.examples >= 20


def test_shrinking_stops_at_its_budget_and_says_the_case_is_not_the_smallest() -> None:
    full = explore(SIZER, Boxes(), FuzzBudget(max_examples=3000, seed=7))
    bounded = explore(SIZER, Boxes(), FuzzBudget(max_examples=3000, seed=7, shrink_examples=3))
    assert full.completed.shrink_stopped is None
    assert bounded.finding is not None and bounded.finding.problems
    assert bounded.completed.shrink_stopped == "shrinking stopped after 3 sequences (--shrink-examples)"
    assert bounded.completed.examples < full.completed.examples
    timed = explore(SIZER, Boxes(), FuzzBudget(max_examples=3000, seed=7, shrink_time_s=0))
    assert timed.finding is not None and timed.completed.shrink_stopped == "shrinking stopped after 0 s (--shrink-time)"


class Creates(Boxes):
    def __init__(self) -> None:
        super().__init__(fixed=True)
        self.models: List[Dict[str, Any]] = []

    def run(self, action: Action, desired: Dict[str, Any], previous: Optional[Dict[str, Any]]) -> OperationResult:
        if action in (Action.CREATE, Action.UPDATE):
            self.models.append(desired)
        return super().run(action, desired, previous)


def test_pinned_properties_are_in_every_model_and_never_drawn() -> None:
    runner = Creates()
    pins = parse_pins(['Name=existing-box', 'Size=42'])
    assert pins == (("Name", "existing-box"), ("Size", 42))  # JSON when it reads as JSON, else the string written
    assert explore(SIZER, runner, FuzzBudget(max_examples=30, seed=1, pins=pins)).finding is None
    assert runner.models and all(m["Name"] == "existing-box" and m["Size"] == 42 for m in runner.models)


def test_a_pin_the_schema_cannot_take_is_a_clear_error() -> None:
    with pytest.raises(CfnrunError, match="--set Nope: Cfnrun::Test::Sizer has no property Nope"):
        explore(SIZER, Boxes(), FuzzBudget(max_examples=1, pins=(("Nope", 1),)))
    with pytest.raises(CfnrunError, match="--set Id: Id is readOnly"):
        explore(SIZER, Boxes(), FuzzBudget(max_examples=1, pins=(("Id", "box-1"),)))
    with pytest.raises(CfnrunError, match=r"^--set Size: Cfnrun::Test::Sizer's schema does not take this value \(500 is greater than the maximum of 100\)$"):
        explore(SIZER, Boxes(), FuzzBudget(max_examples=1, pins=(("Size", 500),)))
    with pytest.raises(CfnrunError, match=r"^--set Secret: .* does not take this value \(it breaks minLength: 4\)$"):  # a writeOnly value is never shown
        explore(SIZER, Boxes(), FuzzBudget(max_examples=1, pins=(("Secret", "ab"),)))
    with pytest.raises(CfnrunError, match="write Prop=value"):
        parse_pins(["Name"])
