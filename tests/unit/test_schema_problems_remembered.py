"""schema_problems validates a document once: the same properties again (a stack's pre-deployment check, then the
CREATE's request check) get the same violations without another validation."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, List

import pytest

from cfnrun.contract import request_rules
from cfnrun.contract import violations as rules
from cfnrun.model import schema_validator
from cfnrun.model.schema import ResourceSchema


def _schema(pattern: str = "^[a-z]+$") -> ResourceSchema:
    return ResourceSchema({
        "typeName": "Test::Verdict::Thing",
        "properties": {"Name": {"type": "string", "pattern": pattern}, "Size": {"type": "integer"}, "Tags": {"type": "object"}},
        "additionalProperties": False,
        "required": ["Name"],
        "primaryIdentifier": ["/properties/Name"],
    })


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> List[Any]:
    """Each document a schema validator is run on."""
    seen: List[Any] = []
    real = schema_validator.SchemaValidator.iter_errors

    def iter_errors(self: Any, instance: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(instance)
        return real(self, instance, *args, **kwargs)

    monkeypatch.setattr(schema_validator.SchemaValidator, "iter_errors", iter_errors)
    return seen


def test_the_same_properties_are_validated_once_and_answer_the_same(validated: List[Any]) -> None:
    schema = _schema()
    bad = {"Name": "Not Lower", "Size": "3", "Extra": 1}
    first = request_rules.schema_problems(schema, bad, rules.REQUEST_VALID, "")
    again = request_rules.schema_problems(schema, dict(bad), rules.REQUEST_VALID, "/desiredResourceState")
    assert len(validated) == 1
    assert [v.pointer for v in first] == ["/Name", "/Size", ""]
    assert [v.message for v in again] == [v.message for v in first]
    assert [v.pointer for v in again] == ["/desiredResourceState/Name", "/desiredResourceState/Size", "/desiredResourceState"]
    assert request_rules.schema_problems(schema, {"Name": "fine"}, rules.REQUEST_VALID, "") == []
    assert len(validated) == 1  # a valid document is proven so without jsonschema (contract/validity_proof.py)


@pytest.mark.parametrize(
    "one, other",
    [
        ({"Name": "A", "Size": 1}, {"Name": "A", "Size": True}),  # equal in Python, not to a schema
        ({"Name": "A", "Size": 1}, {"Name": "A", "Size": 1.0}),
        ({"Name": "A", "Tags": {"1": "x"}}, {"Name": "A", "Tags": {1: "x"}}),
        ({"Name": "A", "Size": "1"}, {"Size": "1", "Name": "A"}),  # key order: the order violations come in
    ],
    ids=["bool", "float", "key type", "key order"],
)
def test_documents_that_differ_in_type_or_order_are_each_validated(validated: List[Any], one: Any, other: Any) -> None:
    schema = _schema()
    request_rules.schema_problems(schema, one, rules.REQUEST_VALID, "")
    request_rules.schema_problems(schema, other, rules.REQUEST_VALID, "")
    assert validated == [one, other]


def test_what_may_meet_a_patterns_deadline_or_is_not_plain_data_is_validated_each_time(validated: List[Any]) -> None:
    backtracking, plain = _schema("^(a+)+$"), _schema()
    for _ in range(2):
        request_rules.schema_problems(backtracking, {"Name": "aab"}, rules.REQUEST_VALID, "")
        request_rules.schema_problems(plain, {"Name": "a" * 300 + "B"}, rules.REQUEST_VALID, "")
        request_rules.schema_problems(plain, OrderedDict(Name="A"), rules.REQUEST_VALID, "")
    assert len(validated) == 6
