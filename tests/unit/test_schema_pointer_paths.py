"""A schema pointer is read into its path once: the contract checks look the same pointers up in every answer."""
from __future__ import annotations

import json
from pathlib import Path

from cfnrun.contract.checker import ContractChecker
from cfnrun.contract.shape import ShapeValidator
from cfnrun.model import schema as schema_module
from cfnrun.model.protocol import Action
from cfnrun.model.schema import ResourceSchema, pointer_to_path

CLUSTER = json.loads((Path(__file__).resolve().parents[2] / "samples" / "cluster" / "cfnrun-sample-cluster.json").read_text())


def _resource(checker: ContractChecker, index: int) -> None:
    model = {"Name": f"c-{index}", "NodeCount": 1, "ClusterId": f"cl-{index:010x}", "Status": "CREATING"}
    assert checker.check_request() == []
    assert checker.check_event(1, {"status": "IN_PROGRESS", "resourceModel": model, "callbackDelaySeconds": 1}) == []
    assert checker.check_event(2, {"status": "SUCCESS", "resourceModel": {**model, "Status": "ACTIVE", "Endpoint": "e"}}) == []


def test_the_checks_of_every_further_answer_read_no_pointer_again() -> None:
    schema = ResourceSchema(CLUSTER)
    shape = ShapeValidator(schema)
    schema_module._path.cache_clear()
    _resource(ContractChecker(schema, Action.CREATE, {"Name": "c-0", "NodeCount": 1}, None, shape=shape), 0)
    read = schema_module._path.cache_info().misses
    assert 0 < read <= 7  # the schema's pointers: primary, additional, readOnly, createOnly identifiers
    for index in range(1, 20):
        _resource(ContractChecker(schema, Action.CREATE, {"Name": f"c-{index}", "NodeCount": 1}, None, shape=shape), index)
    assert schema_module._path.cache_info().misses == read


def test_a_path_handed_out_is_the_callers_own() -> None:
    path = pointer_to_path("/properties/Tags/*/Key")
    path.append("changed")
    assert pointer_to_path("/properties/Tags/*/Key") == ["Tags", "*", "Key"]
    assert pointer_to_path("/properties/a~1b~0c") == ["a/b~c"]
