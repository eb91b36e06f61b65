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


class _CountedList(list):  # type: ignore[type-arg]
    """A schema's pointer list that counts how often it is read through."""

    reads = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        _CountedList.reads += 1
        return super().__iter__()


def test_a_schemas_pointer_lists_are_read_once_per_list_its_document_holds() -> None:
    document = {**CLUSTER, "writeOnlyProperties": _CountedList(["/properties/Secret"])}
    schema = ResourceSchema(document)
    _CountedList.reads = 0
    for _ in range(10):
        assert schema.write_only_properties == ["/properties/Secret"]
    assert _CountedList.reads == 1
    document["writeOnlyProperties"] = ["/properties/Other", 3]  # another list (a reload, a transform): read again
    assert schema.write_only_properties == ["/properties/Other"]
    del document["writeOnlyProperties"]
    assert schema.write_only_properties == []


def test_a_pointer_list_handed_out_is_the_callers_own() -> None:
    schema = ResourceSchema(CLUSTER)
    handed = schema.read_only_properties
    handed.append("/properties/Changed")
    assert "/properties/Changed" not in schema.read_only_properties
    assert schema.read_only_properties == [p for p in CLUSTER["readOnlyProperties"] if isinstance(p, str)]


def test_a_top_level_property_is_looked_up_not_walked_and_answers_as_the_walk(monkeypatch: object) -> None:
    schema = ResourceSchema(CLUSTER)
    models = [{"Name": "a", "Tags": [{"Key": "k"}]}, {"Name": None}, {}, ["Name"], None, "Name", {"Other": {"Name": "x"}}]
    pointers = ["/properties/Name", "/properties/Tags/*/Key", "/properties/Tags/0", "/properties/Other/Name", "/properties", ""]
    walked = [(schema.has_value(m, p), schema.value_at(m, p)) for m in models for p in pointers]
    walks = []
    walk = schema_module._walk

    def counted(value: object, path: object) -> object:
        walks.append(path)
        return walk(value, path)  # type: ignore[arg-type]

    monkeypatch.setattr(schema_module, "_walk", counted)  # type: ignore[attr-defined]
    assert [(schema.has_value(m, "/properties/Name"), schema.value_at(m, "/properties/Name")) for m in models] == [
        (True, "a"), (True, None), (False, None), (False, None), (False, None), (False, None), (False, None),
    ]
    assert walks == []
    assert [(schema.has_value(m, p), schema.value_at(m, p)) for m in models for p in pointers] == walked
