"""cfn-lint's validator classes are made once per set of keywords: the same findings, fewer classes built."""
from __future__ import annotations

import dataclasses
import importlib
from typing import Any, Dict, Iterator, List

import pytest
from cfnlint.jsonschema import validators
from cfnlint.jsonschema._filter import FunctionFilter

from cfnrun.stacks.template.lint import lint_template
from cfnrun.stacks.template.lint import _RUNNERS
from cfnrun.stacks.template.lint_classes import ENUM_RULE, FIELDS_READERS, enum_found_first, fields_once, remembering

# many findings of many rules, per-resource ones inside an Fn::ForEach among them
TEMPLATE = """\
Transform: AWS::LanguageExtensions
Parameters:
  Env: {Type: String, AllowedValues: [a, b], Default: c}
Conditions:
  IsA: !Equals [!Ref Env, a]
Resources:
  Bucket:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: !Sub "${Missing}-x"
      VersioningConfiguration: {Status: Sometimes}
      Tags: [{Key: k}]
      Bogus: 1
  Fn::ForEach::Queues:
    - I
    - ["1", "2", "3"]
    - Q${I}:
        Type: AWS::SQS::Queue
        UpdatePolicy: {AutoScalingRollingUpdate: {MinInstancesInService: "x"}}
        Properties:
          DelaySeconds: 9999
          QueueName: !Sub "${AWS::StackName}-${I}"
          VisibilityTimeout: !GetAtt Bucket.Nope
  Fn:
    Type: AWS::Lambda::Function
    Condition: IsA
    Properties:
      Runtime: python2.7
      Handler: index.handler
      Role: !Ref Nothing
      Code: {ZipFile: x}
      MemorySize: lots
Outputs:
  Arn: {Value: !GetAtt Fn.Arnx}
"""


class _Rule:
    def check(self, *_: Any) -> Iterator[Any]:
        yield from ()


def _counting(made: List[Dict[str, Any]]) -> Any:
    def create(**arguments: Any) -> type:
        made.append(arguments)
        return type(f"Validator{len(made)}", (), {})

    return create


def test_equal_arguments_get_the_class_made_for_them_and_other_keywords_a_new_one() -> None:
    made: List[Dict[str, Any]] = []
    create = remembering(_counting(made))
    rule = _Rule()
    first = create(validators={"check": rule.check}, function_filter=FunctionFilter(), fn_resolvers={})
    # a bound method is a new object at each lookup, and cfn-lint evolves a new, equal filter for each check
    again = create(validators={"check": rule.check}, function_filter=FunctionFilter(), fn_resolvers={})
    other_rule = create(validators={"check": _Rule().check}, function_filter=FunctionFilter(), fn_resolvers={})
    other_filter = create(validators={"check": rule.check}, function_filter=FunctionFilter(add_cfn_lint_keyword=False), fn_resolvers={})
    assert again is first
    assert other_rule is not first and other_filter is not first and other_rule is not other_filter
    assert len(made) == 3


def test_the_findings_are_those_of_cfn_lint_making_every_class(monkeypatch: pytest.MonkeyPatch) -> None:
    remembered = [str(finding) for finding in lint_template(TEMPLATE)]  # the first lint installs the remembering create
    assert getattr(validators.create, "remembers", False)
    monkeypatch.setattr(validators, "create", validators.create.__wrapped__)
    for module in map(importlib.import_module, FIELDS_READERS):
        assert getattr(module.fields, "remembers", False)
        monkeypatch.setattr(module, "fields", module.fields.__wrapped__)
    (enum_rule,) = [rule for rule in _RUNNERS["us-east-1"].rules.values() if rule.id == ENUM_RULE]
    rule_globals = type(enum_rule).enum.__globals__
    assert getattr(rule_globals["enum"], "remembers", False)
    monkeypatch.setitem(rule_globals, "enum", rule_globals["enum"].__wrapped__)
    made_each_time = [str(finding) for finding in lint_template(TEMPLATE)]
    assert len(remembered) >= 10
    assert remembered == made_each_time


def test_like_resources_build_no_further_classes(monkeypatch: pytest.MonkeyPatch) -> None:
    lint_template(TEMPLATE)
    made: List[Dict[str, Any]] = []
    monkeypatch.setattr(validators, "create", remembering(_counting_then(validators.create.__wrapped__, made)))
    lint_template(TEMPLATE)
    first = len(made)
    lint_template(TEMPLATE.replace('["1", "2", "3"]', str([str(index) for index in range(40)])))
    assert first > 0
    assert len(made) == first  # forty queues are checked with the classes three were


def _counting_then(create: Any, made: List[Dict[str, Any]]) -> Any:
    def counting(**arguments: Any) -> Any:
        made.append(arguments)
        return create(**arguments)

    return counting


def test_a_class_s_fields_are_read_once_and_an_instance_s_each_time() -> None:
    read: List[Any] = []

    def fields(class_or_instance: Any) -> Any:
        read.append(class_or_instance)
        return dataclasses.fields(class_or_instance)

    @dataclasses.dataclass
    class Point:
        x: int = 0

    fields_of = fields_once(fields)
    assert fields_of(Point) is fields_of(Point)
    assert [field.name for field in fields_of(Point)] == ["x"]
    fields_of(Point(1))
    fields_of(Point(2))
    assert read == [Point, Point(1), Point(2)]


@pytest.mark.parametrize(
    ("instance", "enums", "looked_up"),
    [
        ("Q7", ["Env", "Q7", "AWS::StackName"], False),  # plainly one of them: cfn-lint's comparisons are skipped
        ("Q8", ["Env", "Q7"], True),  # not one of them: cfn-lint says so, in its words
        ("5", [5, "6"], True),  # cfn-lint's equal finds "5" and 5 alike: asked
        ("true", ["true"], True),  # and "true" and true: asked
        (5, [5], True),
    ],
)
def test_enum_skips_only_a_plain_string_plainly_allowed(instance: Any, enums: Any, looked_up: bool) -> None:
    asked: List[Any] = []

    def enum(validator: Any, enums: Any, instance: Any, schema: Any) -> Iterator[str]:
        asked.append(instance)
        yield f"{instance!r} is not one of {enums!r}"

    found = list(enum_found_first(enum)(None, enums, instance, {}))
    assert (asked == [instance]) is looked_up
    assert found == ([f"{instance!r} is not one of {enums!r}"] if looked_up else [])


def test_a_create_called_otherwise_than_cfn_lint_1_calls_it_is_passed_through() -> None:
    seen: List[Any] = []

    def create(*given: Any, **named: Any) -> Any:
        seen.append((given, named))
        return object()

    once = remembering(create)
    assert once(validators={}, function_filter=None, fn_resolvers={}) is once(validators={}, function_filter=None, fn_resolvers={})
    once({}, None)  # positional: as it is, every time
    once(validators={}, format_checker=None)  # a keyword cfn-lint 1.x does not pass
    assert len(seen) == 3


def test_another_cfn_lint_major_version_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    import cfnlint.version

    from cfnrun.stacks.template import lint_classes

    monkeypatch.setattr(cfnlint.version, "__version__", "2.0.0")
    monkeypatch.setattr(validators, "create", validators.create.__wrapped__ if hasattr(validators.create, "__wrapped__") else validators.create)
    before = validators.create
    lint_classes.install([])
    assert validators.create is before
