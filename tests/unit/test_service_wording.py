"""Properties refused in the service's words (AWS's cloudformation-resource-schema on the everit validator): the
validator's sentence where it shows no value, ``failed validation constraint for keyword [K]`` where it would."""
from __future__ import annotations

from cfnrun.contract.request_rules import service_problems
from cfnrun.model.schema import ResourceSchema

SCHEMA = ResourceSchema({
    "typeName": "Test::Wording::Thing",
    "definitions": {"Tag": {"type": "object", "properties": {"Key": {"type": "string"}, "Value": {"type": "string"}},
                            "required": ["Key", "Value"], "additionalProperties": False}},
    "properties": {
        "Name": {"type": "string", "minLength": 3, "maxLength": 8, "pattern": "^[a-z]+$"},
        "Size": {"type": "integer", "minimum": 1, "maximum": 5},
        "Mode": {"type": "string", "enum": ["fast", "slow"]},
        "Tags": {"type": "array", "maxItems": 2, "uniqueItems": True, "items": {"$ref": "#/definitions/Tag"}},
        "Ports": {"type": "array", "items": {"type": "integer"}},
        "Labels": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": False},
        "Id": {"type": "string"},
    },
    "required": ["Name", "Size"],
    "additionalProperties": False,
    "primaryIdentifier": ["/properties/Id"],
    "readOnlyProperties": ["/properties/Id"],
})


def test_missing_and_unknown_keys_types_and_limits_are_worded_as_the_validator_words_them() -> None:
    assert service_problems(SCHEMA, {"Colour": "red", "Shade": 2}) == [
        "#: required key [Name] not found",
        "#: required key [Size] not found",
        "#: extraneous key [Colour] is not permitted",
        "#: extraneous key [Shade] is not permitted",
    ]
    problems = service_problems(SCHEMA, {
        "Name": "ab", "Size": 2, "Tags": [{"Key": "a"}, {"Key": "a"}, {"Key": "b", "Value": "c"}], "Ports": ["80", True, 1.5, {}],
        "Labels": {"x-ok": "1", "other": "2"},
    })
    assert sorted(problems) == sorted([
        "#/Name: expected minLength: 3, actual: 2",
        "#/Tags: expected maximum item count: 2, found: 3",
        "#/Tags: array items are not unique",
        "#/Tags/0: required key [Value] not found",
        "#/Tags/1: required key [Value] not found",
        "#/Ports/0: expected type: Integer, found: String",
        "#/Ports/1: expected type: Integer, found: Boolean",
        "#/Ports/2: expected type: Integer, found: BigDecimal",
        "#/Ports/3: expected type: Integer, found: JSONObject",
        "#/Labels: extraneous key [other] is not permitted",
    ])


def test_a_keyword_whose_message_would_show_the_value_is_named_without_it() -> None:
    secret = "Not-A-Name-At-All"
    problems = service_problems(SCHEMA, {"Name": secret, "Size": 9, "Mode": "warp"})
    assert sorted(problems) == sorted([
        "#/Name: expected maxLength: 8, actual: 17",
        "#/Name: failed validation constraint for keyword [pattern]",
        "#/Size: failed validation constraint for keyword [maximum]",
        "#/Mode: failed validation constraint for keyword [enum]",
    ])
    assert not any(secret in line or "warp" in line or "9" in line.split(":", 1)[1] for line in problems)
    assert service_problems(SCHEMA, {"Name": "good", "Size": 3, "Tags": [{"Key": "k", "Value": "v"}]}) == []
