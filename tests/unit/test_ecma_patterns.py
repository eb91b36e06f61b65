"""Schema patterns are ECMA-262 regular expressions, evaluated as such everywhere cfnrun evaluates one."""
from __future__ import annotations

import json

import pytest

from fakes import schema

from cfnrun.contract.checker import ContractChecker
from cfnrun.contract.violations import CHECKER_FAILED, REQUEST_VALID
from cfnrun.model.patterns import PatternTimeout, ecma_find, ecma_regex, ecma_search, may_backtrack, unusable_patterns
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


@pytest.mark.parametrize(
    "pattern, backtracks",
    [
        ("^(a+)+$", True), ("^(a|aa)*$", True), ("(a{1,3})+", True), (r"^(\d+)\1$", True), ("a*a*a*b", True),
        ("^arn:aws(-[a-z]+)*:iam::[0-9]{12}:role/.+$", True), ("((a|aa))+", True), ("(.*a){10}", True),
        ("^(-[a-z]+)?$", False), ("^(?:[a-z]+)$", False),
        ("^[a-z0-9-]{1,32}$", False), ("^note-[0-9a-f]{12}$", False), ("(ab)+", False), ("(a{3})+", False), ("[(]a+[)]+", False),
    ],
)
def test_a_pattern_that_may_backtrack_is_told_from_one_that_cannot(pattern: str, backtracks: bool) -> None:
    assert may_backtrack(pattern) is backtracks


def test_a_match_that_may_backtrack_is_made_in_a_process_a_deadline_stops() -> None:
    # The same verdicts as in the calling thread, for what finishes...
    assert ecma_find("^arn:aws(-[a-z]+)*:iam::[0-9]{12}:role/.+$", "arn:aws-cn:iam::123456789012:role/r") is True
    assert ecma_find("^(a+)+$", "aaaa") is True
    long_value = "x" * 5000 + "y"
    assert ecma_find("y$", long_value) is True and ecma_find("^x+z", long_value) is False
    # ...and a PatternTimeout for what would run for hours; the next match works again.
    with pytest.raises(PatternTimeout, match=r"pattern '\^\(a\+\)\+\$': matching it did not finish within 2 s"):
        ecma_find("^(a+)+$", "a" * 35 + "!")
    # A value as long or longer (an array of them) is refused without a match: one limit for them all.
    for length in range(36, 86):
        with pytest.raises(PatternTimeout, match="a value at least as long did not finish matching it within 2 s"):
            ecma_find("^(a+)+$", "a" * length + "?")
    assert ecma_search("^(a+)+$", "a" * 36 + "!") is None  # for callers that only filter: no verdict
    assert ecma_find("^(a+)+$", "aaa") is True
