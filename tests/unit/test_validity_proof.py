"""The quick proof of a document's validity: never looser than jsonschema, and valid models skip jsonschema."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cfnrun.contract.shape import ShapeValidator
from cfnrun.contract.validity_proof import prove
from cfnrun.model import schema_validator
from cfnrun.model.schema import ResourceSchema
from cfnrun.model.schema_validator import SchemaValidator

CLUSTER = json.loads((Path(__file__).resolve().parents[2] / "samples" / "cluster" / "cfnrun-sample-cluster.json").read_text())
RICH: Dict[str, Any] = {
    "type": "object",
    "properties": {
        "Name": {"type": "string", "pattern": "^[a-z][a-z0-9-]{0,9}$", "minLength": 2, "maxLength": 8},
        "Count": {"type": "integer", "minimum": 1, "maximum": 5},
        "Ratio": {"type": ["number", "null"], "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "Mode": {"type": "string", "enum": ["on", "off"]},
        "Flag": {"type": "boolean"},
        "Tags": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "object", "properties": {"Key": {"type": "string"}},
                                                                       "required": ["Key"], "additionalProperties": False}},
        "Extra": {"type": "object", "additionalProperties": {"type": "integer"}},
    },
    "required": ["Name"],
    "additionalProperties": False,
}
# Each property's values on both sides of its keywords' limits (a valid one first, drawn most), of the types jsonschema reads loosely
NEAR_LIMITS: Dict[str, List[Any]] = {
    "Name": ["ab", "a", "abcdefgh", "abcdefghi", "Ab", "a-1", "a" * 40, "a" * 41, 1, None],
    "Count": [0, 1, 5, 6, True, 1.0, "1"],
    "Ratio": [0, 0.5, 1, None, True, float("nan")],
    "Mode": ["on", "x", None],
    "Flag": [True, 0],
    "Tags": [[], [{"Key": "k"}], [{"Key": "k"}] * 3, [{"Key": 1}], [{}], [{"Key": "k", "X": 1}], {"Key": "k"}],
    "Extra": [{}, {"a": 1}, {"a": "1"}, {"a": True}, []],
    "NodeCount": [0, 1, 10, 11, True, 1.0, "1"],
    "Status": ["CREATING", "X", None],
    "ClusterId": ["cl-0123456789", "cl-012345678", "cl-0123456789a"],
    "Endpoint": ["x", 1],
    "Other": [1],
}
NEAR_LIMITS["Tags"] += [[{"Key": "long"}], [{"Key": "kkk"}, {"Key": "k", "Value": 1}]]


def documents(schema: Dict[str, Any]) -> Any:
    """Objects of the schema's properties (now and then one it does not declare), each near its limits."""
    names = sorted(set(schema["properties"]) | {"Other"})
    return st.lists(st.sampled_from(names), max_size=len(names), unique=True).flatmap(
        lambda keys: st.fixed_dictionaries({key: st.sampled_from(NEAR_LIMITS[key][:1] * 6 + NEAR_LIMITS[key]) for key in keys})
    )


REFERRING: Dict[str, Any] = {
    "type": "object",
    "definitions": {
        "Tag": {"type": "object", "properties": {"Key": {"type": "string", "maxLength": 3}}, "required": ["Key"], "additionalProperties": False},
        "Short": {"type": "string", "maxLength": 2},
        "Node": {"type": "object", "properties": {"Next": {"$ref": "#/definitions/Node"}, "Count": {"type": "integer"}}},
    },
    "properties": {
        "Tags": {"type": "array", "items": {"$ref": "#/definitions/Tag"}},
        "Name": {"$ref": "#/definitions/Short", "maxLength": 1},  # draft-07: beside a $ref, maxLength is not evaluated
        "Extra": {"$ref": "#/definitions/Node"},
        "Mode": {"$ref": "#/definitions/Missing"},
    },
}


def test_a_reference_to_the_schemas_own_definitions_is_followed_as_draft_07_does() -> None:
    proof = prove(REFERRING, SchemaValidator.VALIDATORS)
    assert proof({"Tags": [{"Key": "k"}], "Name": "ab"})  # "ab" breaks the maxLength beside the $ref, which is not evaluated
    assert list(SchemaValidator(REFERRING).iter_errors({"Tags": [{"Key": "k"}], "Name": "ab"})) == []
    assert not proof({"Tags": [{"Key": "long"}]})
    assert proof({"Extra": {"Count": 1}})
    assert not proof({"Extra": {"Next": {"Count": 1}}})  # where a definition refers to itself: left to jsonschema
    assert not proof({"Mode": "on"})  # a definition that is not there
    assert not prove({**REFERRING, "definitions": {**REFERRING["definitions"], "Short": {"$id": "other", "type": "string"}}},
                     SchemaValidator.VALIDATORS)({"Name": "ab"})


@pytest.mark.parametrize("schema", [CLUSTER, RICH, REFERRING], ids=["cluster", "rich", "referring"])
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_what_the_proof_calls_valid_jsonschema_finds_nothing_wrong_with(schema: Dict[str, Any], data: st.DataObject) -> None:
    document = data.draw(documents(schema))
    validator = SchemaValidator({key: value for key, value in schema.items() if key not in ("$schema", "$id")})
    if prove(validator.schema, SchemaValidator.VALIDATORS)(document):
        assert list(validator.iter_errors(document)) == []


def test_valid_models_are_proven_so_plainly() -> None:
    proof = prove(RICH, SchemaValidator.VALIDATORS)
    assert proof({"Name": "ab", "Count": 3, "Ratio": 0.5, "Mode": "on", "Flag": False, "Tags": [{"Key": "k"}], "Extra": {"a": 1}})
    assert not proof({"Name": "ab", "Count": 6})
    assert not proof({"Name": "ab", "Count": 1.0})  # an integer to jsonschema, left to it


@pytest.mark.parametrize("keyword", [{"$ref": "#/properties/Other"}, {"uniqueItems": True}, {"allOf": [{"type": "string"}]}, {"format": "uri"}])
def test_a_keyword_not_read_here_leaves_the_whole_document_to_jsonschema(keyword: Dict[str, Any]) -> None:
    schema = {"type": "object", "properties": {"Name": {"type": "string", **keyword}}, "definitions": {"Name": {"type": "string"}}}
    assert not prove(schema, SchemaValidator.VALIDATORS)({"Name": "a"})


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> List[Any]:
    seen: List[Any] = []
    real = schema_validator.SchemaValidator.iter_errors

    def iter_errors(self: Any, instance: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(instance)
        return real(self, instance, *args, **kwargs)

    monkeypatch.setattr(schema_validator.SchemaValidator, "iter_errors", iter_errors)
    return seen


def test_the_contracts_shape_check_runs_jsonschema_only_for_a_model_it_cannot_prove_valid(validated: List[Any]) -> None:
    shape = ShapeValidator(ResourceSchema(CLUSTER))
    for index in range(5):
        assert shape.problems({"Name": f"c-{index}", "NodeCount": 1, "ClusterId": "cl-0123456789", "Status": "CREATING"}) == []
    assert validated == []
    wrong = {"Name": "c", "NodeCount": 11, "Status": "GONE"}
    assert shape.problems(wrong) == [("/NodeCount", "11 is greater than the maximum of 10"), ("/Status", "'GONE' is not one of ['CREATING', 'UPDATING', 'ACTIVE', 'DELETING']")]
    assert validated == [wrong]


@pytest.mark.parametrize("odd", [{"type": [{}]}, {"enum": "on"}, {"minimum": "1"}, {"required": [1]}, {"properties": []}, False])
def test_a_schema_the_proof_cannot_read_proves_nothing_and_raises_nothing(odd: Any) -> None:
    assert not prove({"type": "object", "properties": {"Name": odd}}, SchemaValidator.VALIDATORS)({"Name": "a"})


def test_a_pattern_that_needs_a_deadline_is_left_to_jsonschema_and_never_run_by_the_proof(monkeypatch: pytest.MonkeyPatch) -> None:
    from cfnrun.model import patterns

    sent: List[str] = []
    monkeypatch.setattr(patterns.WORKER, "find", lambda source, flags, text, pattern: sent.append(text) or True)
    proof = prove({"type": "object", "properties": {"Folder": {"type": "string", "pattern": "^(a+)+$"}}}, SchemaValidator.VALIDATORS)
    assert proof({"Folder": "a" * 30 + "!"}) is False  # may backtrack: not proven here (jsonschema runs it, with its deadline)
    assert proof({"Folder": "x"}) is False
    short = prove({"type": "object", "properties": {"Folder": {"type": "string", "pattern": "^[a-z]+$"}}}, SchemaValidator.VALIDATORS)
    assert short({"Folder": "abc"}) is True and short({"Folder": "ABC"}) is False
    assert short({"Folder": "a" * (patterns.CHEAP_TEXT_CHARS + 1)}) is False  # a long value would need the worker too
    assert sent == []


def test_a_cluster_model_is_proven_with_one_call_per_check_it_needs() -> None:
    """A "type" another keyword already demands (a pattern's string) is not checked again, and properties with
    ``additionalProperties: false`` are one walk of the object: serve proves every answer's model this way."""
    proof = prove({"type": "object", "properties": CLUSTER["properties"], "additionalProperties": False}, SchemaValidator.VALIDATORS)
    model = {"ClusterId": "cl-0123456789", "Name": "c-1", "NodeCount": 3, "Status": "ACTIVE", "Endpoint": "x:7000"}
    calls: List[str] = []

    def count(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.endswith("validity_proof.py"):
            calls.append(frame.f_code.co_name)

    sys.setprofile(count)
    try:
        proven = proof(model)
    finally:
        sys.setprofile(None)
    # the object; two patterns; NodeCount's type and its two bounds (joined); Status's enum; Endpoint's type
    assert proven is True and len(calls) == 9, calls
    assert not proof({**model, "Other": 1}) and not proof({**model, "Name": 1}) and not proof({**model, "NodeCount": 11})
