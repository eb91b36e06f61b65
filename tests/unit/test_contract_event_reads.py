"""A contract check reads an answer's status and resourceModel once, however many rules ask for them."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

from cfnrun.contract.checker import ContractChecker
from cfnrun.model.protocol import Action
from cfnrun.model.schema import ResourceSchema

CLUSTER = json.loads((Path(__file__).resolve().parents[2] / "samples" / "cluster" / "cfnrun-sample-cluster.json").read_text())


class Answer(Dict[str, Any]):
    """An answer that counts the reads of each of its keys."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reads: List[str] = []

    def get(self, key: str, default: Any = None) -> Any:
        self.reads.append(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.reads.append(key)
        return super().__getitem__(key)


def test_the_status_and_model_of_an_answer_are_read_once_per_check() -> None:
    schema = ResourceSchema(CLUSTER)
    checker = ContractChecker(schema, Action.CREATE, {"Name": "c-1", "NodeCount": 1}, None)
    model = {"Name": "c-1", "NodeCount": 1, "ClusterId": "cl-0123456789", "Status": "CREATING"}
    answer = Answer(status="IN_PROGRESS", resourceModel=model, callbackDelaySeconds=1)
    assert checker.check_event(1, answer) == []
    # once for the rules (and the model once more: what the violations' messages are redacted against)
    assert answer.reads.count("status") == 1 and answer.reads.count("resourceModel") == 2
    done = Answer(status="SUCCESS", resourceModel={**model, "Status": "ACTIVE", "Endpoint": "cl-0123456789.local:7000", "Extra": None})
    found = checker.check_event(2, done)
    assert done.reads.count("status") == 1 and done.reads.count("resourceModel") == 2
    assert [v.rule.id for v in found] == [v.rule.id for v in ContractChecker(schema, Action.CREATE, {"Name": "c-1", "NodeCount": 1}, None).check_event(2, dict(done))]
    assert any(v.pointer == "/resourceModel/Extra" for v in found)  # the rules still see the model: its null reported
