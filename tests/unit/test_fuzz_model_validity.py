"""The fuzzer's filter of drawn models: the quick validity proof first, jsonschema for what it cannot prove; the same verdicts."""
from __future__ import annotations

from typing import Any, Dict, List

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cfnrun.fuzz.strategies import ModelStrategies
from cfnrun.model.schema import ResourceSchema

SCHEMA = ResourceSchema({
    "typeName": "Cfnrun::Test::Shapes",
    "properties": {
        "Name": {"type": "string", "pattern": "^[a-z]{1,8}$"},
        "Size": {"type": "integer", "minimum": 1, "maximum": 100},
        "Tags": {"type": "array", "items": {"$ref": "#/definitions/Tag"}, "uniqueItems": True},
        "Color": {"type": "string", "enum": ["red", "green"]},
    },
    "definitions": {"Tag": {"type": "object", "properties": {"Key": {"type": "string"}}, "required": ["Key"], "additionalProperties": False}},
    "required": ["Name"],
    "primaryIdentifier": ["/properties/Name"],
    "additionalProperties": False,
})
STRATEGIES = ModelStrategies(SCHEMA)
ODD_MODELS: List[Dict[str, Any]] = [
    {"Name": "abc"}, {"Name": "ABC"}, {"Size": 3}, {"Name": "a", "Size": 0}, {"Name": "a", "Size": 1.0}, {"Name": "a", "Extra": 1},
    {"Name": "a", "Tags": [{"Key": "k"}, {"Key": "k"}]}, {"Name": "a", "Tags": [{"Key": "k"}]}, {"Name": "a", "Color": "blue"},
]


def _jsonschema_says(model: Dict[str, Any]) -> bool:
    return bool(STRATEGIES._validator.is_valid(model))


@settings(max_examples=60, suppress_health_check=list(HealthCheck), deadline=None)
@given(st.one_of(STRATEGIES.model(), st.sampled_from(ODD_MODELS)))
def test_the_filter_judges_each_model_as_jsonschema_does(model: Dict[str, Any]) -> None:
    assert STRATEGIES.valid(model) == _jsonschema_says(model)


def test_a_plain_valid_model_is_proven_without_jsonschema() -> None:
    strategies = ModelStrategies(SCHEMA)
    asked: List[Any] = []
    strategies._validator = type("Counting", (), {"is_valid": lambda self, model: asked.append(model) or True})()
    assert strategies.valid({"Name": "abc", "Size": 5, "Color": "red"})
    assert asked == []
    assert strategies.valid({"Name": "abc", "Tags": [{"Key": "k"}]})  # uniqueItems: not read by the proof, so jsonschema is asked
    assert asked == [{"Name": "abc", "Tags": [{"Key": "k"}]}]
