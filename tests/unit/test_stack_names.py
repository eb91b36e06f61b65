"""The StackName the API refuses, in its words: the pattern, the length, both."""
from cfnrun.stacks.names import stack_name_problem

PATTERN = "Member must satisfy regular expression pattern: [a-zA-Z][-a-zA-Z0-9]*"
LENGTH = "Member must have length less than or equal to 128"


def test_a_good_name_of_128_characters_passes() -> None:
    assert stack_name_problem("a" * 128) is None
    assert stack_name_problem("My-stack-2") is None


def test_a_name_over_128_characters_is_refused_for_its_length_only() -> None:
    name = "a" * 129
    assert stack_name_problem(name) == f"1 validation error detected: Value '{name}' at 'stackName' failed to satisfy constraint: {LENGTH}"


def test_a_name_breaking_the_pattern_is_refused_for_the_pattern() -> None:
    assert stack_name_problem("1st") == f"1 validation error detected: Value '1st' at 'stackName' failed to satisfy constraint: {PATTERN}"
    assert stack_name_problem("") is not None


def test_a_name_breaking_both_names_both_pattern_first() -> None:
    name = "_" * 130
    assert stack_name_problem(name) == (
        f"2 validation errors detected: Value '{name}' at 'stackName' failed to satisfy constraint: {PATTERN}; "
        f"Value '{name}' at 'stackName' failed to satisfy constraint: {LENGTH}"
    )
