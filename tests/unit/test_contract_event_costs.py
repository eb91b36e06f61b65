"""What the contract checker skips on each answer serve checks, and that skipping changes no finding."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from cfnrun.contract import event_rules
from cfnrun.contract.compare import compared
from cfnrun.contract.event_rules import EVENT_CHECKS, EventContext, check_event, checks_for
from cfnrun.contract.shape import ShapeValidator
from cfnrun.model.protocol import RESOURCE_ACTIONS, Action
from cfnrun.model.schema import ResourceSchema

CLUSTER = ResourceSchema(json.loads((Path(__file__).resolve().parents[2] / "samples" / "cluster" / "cfnrun-sample-cluster.json").read_text()))
SHAPE = ShapeValidator(CLUSTER)
MODEL = {"ClusterId": "cl-0123456789", "Name": "c-1", "NodeCount": 3, "Status": "ACTIVE"}
# Answers of every status, right and wrong: what each check could find something in
EVENTS: List[Dict[str, Any]] = [
    {"status": "SUCCESS", "resourceModel": MODEL},
    {"status": "SUCCESS", "resourceModel": {"Name": "other", "Extra": None}},
    {"status": "SUCCESS"},
    {"status": "SUCCESS", "resourceModels": [MODEL, {"Name": "x"}]},
    {"status": "SUCCESS", "callbackDelaySeconds": 3, "resourceModel": {"Tags": [None, {"a": None}]}},
    {"status": "IN_PROGRESS", "resourceModel": {**MODEL, "Endpoint": None}, "errorCode": "NotFound", "resourceModels": []},
    {"status": "IN_PROGRESS"},
    {"status": "FAILED"},
    {"status": "FAILED", "errorCode": "Nope", "resourceModel": {"Name": 1}},
    {"status": "DONE", "resourceModel": MODEL},
]


def context(action: Action, event: Dict[str, Any], first: bool = True) -> EventContext:
    return EventContext(action, CLUSTER, SHAPE, {"Name": "c-1", "NodeCount": 2}, event, 1, first)


def test_each_answer_runs_only_the_checks_that_can_find_something_for_its_action() -> None:
    names = {action: [check.__name__ for check in checks_for(action)] for action in RESOURCE_ACTIONS}
    assert names[Action.CREATE] == ["status_and_error_code", "primary_identifier", "model_shape", "final_model", "in_progress_model"]
    assert names[Action.READ] == ["status_and_error_code", "read_and_list", "model_shape", "final_model"]
    assert names[Action.DELETE] == ["status_and_error_code", "delete_model", "model_shape"]
    assert names[Action.LIST] == ["status_and_error_code", "read_and_list", "model_shape"]


@pytest.mark.parametrize("action", RESOURCE_ACTIONS, ids=lambda action: action.value)
def test_a_check_left_out_for_an_action_would_have_found_nothing(action: Action) -> None:
    for event in EVENTS:
        for first in (True, False):
            left_out = [check for check in EVENT_CHECKS if check not in checks_for(action)]
            assert [v for check in left_out for v in check(context(action, event, first))] == []
            every = [v for check in EVENT_CHECKS for v in check(context(action, event, first))]
            assert check_event(context(action, event, first)) == every


def test_nulls_are_named_in_document_order_however_deep() -> None:
    found = check_event(context(Action.READ, {"status": "SUCCESS", "resourceModel": {
        **MODEL, "A": None, "B": [1, None, {"C": None, "D": [None]}], "E": {"F": None}, "G": "x"}}))
    assert [v.pointer for v in found if v.rule.id == "no-null-values"] == [
        "/resourceModel/A", "/resourceModel/B/1", "/resourceModel/B/2/C", "/resourceModel/B/2/D/0", "/resourceModel/E/F"]


def test_a_request_the_answer_carries_is_not_copied_when_the_schema_has_no_write_only(monkeypatch: pytest.MonkeyPatch) -> None:
    copied: List[Any] = []
    real = ResourceSchema.without_write_only
    monkeypatch.setattr(ResourceSchema, "without_write_only", lambda self, model: copied.append(model) or real(self, model))
    assert compared({"Name": "c-1", "NodeCount": 3}, MODEL, CLUSTER) == ([], [])
    assert copied == []
    differences, problems = compared({"Name": "c-2", "NodeCount": 3}, MODEL, CLUSTER)
    assert [(d.pointer, d.kind) for d in differences] == [("/Name", "NOT_EQUAL")] and problems == []
    assert copied == [{"Name": "c-2", "NodeCount": 3}]  # a difference is reported from a copy, as before


def test_in_progress_read_only_names_follow_the_schemas_list() -> None:
    model = {"Name": "c-1", "ClusterId": "cl-0123456789", "Other": 1}
    found = event_rules.in_progress_model(context(Action.CREATE, {"status": "IN_PROGRESS", "resourceModel": model}))
    assert [v.pointer for v in found] == ["/resourceModel/Other"]
    narrower = ResourceSchema({**CLUSTER.document, "readOnlyProperties": ["/properties/Status"]})
    found = event_rules.in_progress_model(EventContext(Action.CREATE, narrower, SHAPE, {"Name": "c-1"}, {"status": "IN_PROGRESS", "resourceModel": model}, 1, True))
    assert [v.pointer for v in found] == ["/resourceModel/ClusterId", "/resourceModel/Other"]
