"""Schema patterns are ECMA-262 regular expressions, evaluated as such everywhere cfnrun evaluates one."""
from __future__ import annotations

import json

from fakes import schema

from cfnrun.contract.checker import ContractChecker
from cfnrun.contract.violations import CHECKER_FAILED, REQUEST_VALID
from cfnrun.model.patterns import ecma_regex, ecma_search, unusable_patterns
from cfnrun.model.protocol import Action
from cfnrun.model.schema_validator import SchemaValidator

# From the ApplicationAutoscaling ScheduledAction schema (community-registry-extensions): UTF-16 surrogate pairs.
AWS_TEXT = "^[\\u0020-\\uD7FF\\uE000-\\uFFFD\\uD800\\uDC00-\\uDBFF\\uDFFF\\r\\n\\t]*$"


def test_ecmascript_semantics_not_pythons() -> None:
    assert ecma_search("^\\d+$", "123") and ecma_search("^\\d+$", "٣") is False  # ECMA \d is ASCII; re's is any digit
    assert ecma_search("^a$", "a\n") is False  # ECMA $ does not match before a final newline; re's does
    assert ecma_search("b", "abc")  # not anchored
    assert ecma_search(AWS_TEXT, "hello 😀") and ecma_search(AWS_TEXT, "bell \x07") is False
    assert ecma_search("^[a-z\\-_]+$", "a-b_c")  # Annex B escapes many schemas use
    assert ecma_regex("(") is None and ecma_search("(", "x") is None
    assert list(unusable_patterns({"properties": {"A": {"pattern": "("}, "B": {"pattern": AWS_TEXT}}})) == [("/properties/A/pattern", "(")]


def test_a_pattern_json_decoding_split_into_surrogate_characters_still_compiles() -> None:
    decoded = json.loads('"^[\\ud800-\\udbff]$"')  # lone halves, as characters
    assert ecma_regex(decoded) is not None


def test_the_validator_reads_pattern_properties_and_additional_properties_the_same_way() -> None:
    validator = SchemaValidator({
        "type": "object",
        "patternProperties": {"^\\d+$": {"type": "integer"}},
        "additionalProperties": False,
    })
    assert [e.message for e in validator.iter_errors({"1": 1})] == []
    assert [e.message for e in validator.iter_errors({"1": "x"})] == ["'x' is not of type 'integer'"]
    assert [e.message for e in validator.iter_errors({"٣": 1})] == ["'٣' does not match any of the regexes: '^\\\\d+$'"]


def test_an_update_on_an_aws_style_schema_is_checked_not_given_up() -> None:
    aws = schema()
    aws.document["properties"]["Name"]["pattern"] = AWS_TEXT
    checker = ContractChecker(aws, Action.UPDATE, {"Id": "t", "Name": "bell \x07"}, {"Id": "t", "Name": "fine"})
    found = checker.check_request()
    assert CHECKER_FAILED not in [v.rule for v in found]
    assert [v.rule for v in found if v.rule is REQUEST_VALID] == [REQUEST_VALID]  # the bad value is caught
