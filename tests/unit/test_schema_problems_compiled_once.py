"""schema_problems compiles a schema's validator once, and a reloaded schema again."""
from __future__ import annotations

from typing import Any, Dict, List

import pytest

from cfnrun.contract import request_rules
from cfnrun.model import schema_validator
from cfnrun.contract import violations as rules
from cfnrun.model.schema import ResourceSchema


def _schema(max_length: int) -> Dict[str, Any]:
    return {
        "typeName": "Test::Cache::Thing",
        "properties": {"Name": {"type": "string", "maxLength": max_length}},
        "additionalProperties": False,
        "primaryIdentifier": ["/properties/Name"],
    }


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> List[Dict[str, Any]]:
    """Each schema a SchemaValidator is built for, in order."""
    built: List[Dict[str, Any]] = []
    real = schema_validator.SchemaValidator

    def counting(schema: Dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        built.append(schema)
        return real(schema, *args, **kwargs)

    monkeypatch.setattr(schema_validator, "SchemaValidator", counting)  # request_rules imports it when it compiles
    return built


def test_a_second_call_with_the_same_schema_compiles_nothing_new(compiled: List[Dict[str, Any]]) -> None:
    schema = ResourceSchema(_schema(5))
    first = request_rules.schema_problems(schema, {"Name": "toolongname"}, rules.REQUEST_VALID, "/desiredResourceState")
    second = request_rules.schema_problems(schema, {"Name": "far too long"}, rules.REQUEST_VALID, "/desiredResourceState")
    again = request_rules.schema_problems(ResourceSchema(schema.document), {"Extra": 1}, rules.REQUEST_VALID, "")
    assert len(compiled) == 1
    assert [v.pointer for v in first] == ["/desiredResourceState/Name"]
    assert [v.pointer for v in second] == ["/desiredResourceState/Name"]
    assert "Extra" in again[0].message


def test_a_reloaded_schema_is_checked_against_its_new_rules(compiled: List[Dict[str, Any]]) -> None:
    value = {"Name": "sevenchr"}
    assert request_rules.schema_problems(ResourceSchema(_schema(5)), value, rules.REQUEST_VALID, "")
    assert request_rules.schema_problems(ResourceSchema(_schema(50)), value, rules.REQUEST_VALID, "") == []
    assert len(compiled) == 2
