"""cfn-lint's validator classes are made once per set of keywords: the same findings, fewer classes built."""
from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from cfnlint.context.context import Context
from cfnlint.jsonschema import validators
from cfnlint.jsonschema._filter import FunctionFilter

from cfnrun.stacks.template.lint import lint_template
from cfnrun.stacks.template.lint import _runner
from cfnrun.stacks.template.lint_attributes import RULES as ATTRIBUTE_RULES
from cfnrun.stacks.template.lint_attributes import passes_without, reads_only, skipping_without
from cfnrun.stacks.template import lint_contexts
from cfnrun.stacks.template.lint_contexts import copies_as_init
from cfnrun.stacks.template.lint_classes import ENUM_RULE, FIELDS_READERS, enum_found_first, fields_once, remembering

ROOT = Path(__file__).resolve().parents[2]

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

# every way a resource gives (or not) the attributes E3016 and W3011 check, findings of both among them
ATTRIBUTES = """\
Conditions:
  Never: !Equals [a, b]
Resources:
  Plain: {Type: AWS::SNS::Topic}
  Kept: {Type: AWS::SNS::Topic, DeletionPolicy: Retain}
  Replaced: {Type: AWS::SNS::Topic, UpdateReplacePolicy: Retain}
  Both: {Type: AWS::SNS::Topic, DeletionPolicy: Retain, UpdateReplacePolicy: Retain}
  Deleted: {Type: AWS::SNS::Topic, DeletionPolicy: Delete}
  Chosen: {Type: AWS::SNS::Topic, DeletionPolicy: !If [Never, Retain, Delete]}
  Version: {Type: AWS::Lambda::Version, DeletionPolicy: Retain, Properties: {FunctionName: f}}
  Group:
    Type: AWS::AutoScaling::AutoScalingGroup
    UpdatePolicy: {AutoScalingRollingUpdate: {MinInstancesInService: x, Bogus: 1}}
    Properties: {MinSize: "1", MaxSize: "2"}
  NotAllowed: {Type: AWS::SNS::Topic, UpdatePolicy: {AutoScalingRollingUpdate: {}}}
  Selected:
    Type: AWS::Lambda::Alias
    UpdatePolicy: !Select [0, [{CodeDeployLambdaAliasUpdate: {ApplicationName: a, DeploymentGroupName: d}}]]
    Properties: {FunctionName: f, FunctionVersion: "1", Name: n}
  Referenced: {Type: AWS::SNS::Topic, UpdatePolicy: !Ref AWS::NoValue}
  Custom: {Type: Custom::Thing, Properties: {ServiceToken: x}, DeletionPolicy: Snapshot}
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


def _as_cfn_lint_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """Undo every touch of cfn-lint's (``lint_classes``, ``lint_attributes``) for the rest of the test, checking each was made."""
    assert getattr(validators.create, "remembers", False)
    monkeypatch.setattr(validators, "create", validators.create.__wrapped__)
    for module in map(importlib.import_module, FIELDS_READERS):
        assert getattr(module.fields, "remembers", False)
        monkeypatch.setattr(module, "fields", module.fields.__wrapped__)
    rules = {rule.id: rule for rule in _runner("us-east-1").rules.values()}
    rule_globals = type(rules[ENUM_RULE]).enum.__globals__
    assert getattr(rule_globals["enum"], "remembers", False)
    monkeypatch.setitem(rule_globals, "enum", rule_globals["enum"].__wrapped__)
    for rule_id in ATTRIBUTE_RULES:
        assert getattr(rules[rule_id].validate, "remembers", False)
        monkeypatch.setattr(rules[rule_id], "validate", rules[rule_id].validate.__wrapped__)
    assert getattr(Context.evolve, "remembers", False)
    monkeypatch.setattr(Context, "evolve", Context.evolve.__wrapped__)
    module_names = Context.__dict__["module_names"]
    assert getattr(module_names.func, "remembers", False)
    as_it_is = functools.cached_property(module_names.func.__wrapped__)
    as_it_is.__set_name__(Context, "module_names")
    monkeypatch.setattr(Context, "module_names", as_it_is)


def test_the_findings_are_those_of_cfn_lint_making_every_class(monkeypatch: pytest.MonkeyPatch) -> None:
    remembered = [str(finding) for finding in lint_template(TEMPLATE)]  # the first lint installs the remembering create
    _as_cfn_lint_is(monkeypatch)
    made_each_time = [str(finding) for finding in lint_template(TEMPLATE)]
    assert len(remembered) >= 10
    assert remembered == made_each_time


def _repo_templates() -> List[Path]:
    found = []
    for folder in ("bench", "samples", "tests/fixtures"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".yml", ".yaml", ".json", ".template") and path.is_file() and re.search(r'^Resources:|"Resources"\s*:', path.read_text(errors="replace"), re.M):
                found.append(path)
    return found


def _served_schemas() -> List[Dict[str, Any]]:
    """Every resource schema in the repository (one per type name): the lint checks their types' properties too."""
    schemas: Dict[str, Dict[str, Any]] = {}
    for path in sorted([*(ROOT / "samples").rglob("*.json"), *(ROOT / "tests/fixtures").rglob("*.json")]):
        try:
            document = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(document, dict) and isinstance(document.get("typeName"), str) and "properties" in document and "handlers" in document:
            schemas.setdefault(document["typeName"], document)
    return list(schemas.values())


REPO_TEMPLATES = _repo_templates()


def test_the_repository_has_the_templates_compared() -> None:
    assert len(REPO_TEMPLATES) >= 20
    assert len(_served_schemas()) >= 5


@pytest.mark.parametrize("template", [*REPO_TEMPLATES, "TEMPLATE", "ATTRIBUTES"], ids=lambda template: str(template).replace(str(ROOT), "."))
def test_every_template_in_the_repository_finds_what_cfn_lint_finds_as_it_is(template: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    body = {"TEMPLATE": TEMPLATE, "ATTRIBUTES": ATTRIBUTES}.get(str(template)) or Path(template).read_text()
    schemas = _served_schemas()
    touched = [(finding.rule_id, finding.line, finding.column, finding.message, finding.path) for finding in lint_template(body, schemas)]
    _as_cfn_lint_is(monkeypatch)
    as_it_is = [(finding.rule_id, finding.line, finding.column, finding.message, finding.path) for finding in lint_template(body, schemas)]
    assert touched == as_it_is


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


def test_the_attribute_rules_still_find_what_they_find_where_their_attributes_are_given() -> None:
    found = {finding.rule_id for finding in lint_template(ATTRIBUTES)}
    assert set(ATTRIBUTE_RULES) <= found


def test_the_attribute_rules_are_not_run_on_resources_without_their_attributes(monkeypatch: pytest.MonkeyPatch) -> None:
    lint_template(ATTRIBUTES)  # installs the skipping validate
    rules = {rule.id: rule for rule in _runner("us-east-1").rules.values()}
    ran: List[str] = []
    for rule_id in ATTRIBUTE_RULES:
        inner = rules[rule_id].validate.__wrapped__

        def counting(validator: Any, keywords: Any, instance: Any, schema: Any, inner: Any = inner, rule_id: str = rule_id) -> Iterator[Any]:
            ran.append(rule_id)
            yield from inner(validator, keywords, instance, schema)

        monkeypatch.setattr(rules[rule_id], "validate", skipping_without(counting, ATTRIBUTE_RULES[rule_id]))
    lint_template(TEMPLATE.replace('["1", "2", "3"]', str([str(index) for index in range(40)])))
    assert ran.count("E3016") == 40  # the forty queues' UpdatePolicy; not the bucket's or the function's, which have none
    assert ran.count("W3011") == 0
    ran.clear()
    lint_template(ATTRIBUTES)
    assert ran.count("W3011") == 7 and ran.count("E3016") == 4


@pytest.mark.parametrize(
    ("schema", "passes"),
    [
        ({"properties": {"UpdatePolicy": False}, "additionalProperties": True}, True),
        ({"allOf": [{"if": {"required": ["Type"]}, "then": {"properties": {"UpdatePolicy": {"$ref": "#/x"}}}, "else": True}]}, True),
        ({"anyOf": [{"required": ["UpdatePolicy"]}, {"properties": {"UpdatePolicy": False}}]}, True),
        ({"anyOf": [{"required": ["UpdatePolicy"]}]}, False),  # no branch holds without it
        ({"required": ["UpdatePolicy"]}, False),
        ({"properties": {"Type": {"const": "AWS::SNS::Topic"}}}, False),  # another attribute read
        ({"additionalProperties": False}, False),
        ({"then": {"properties": {"UpdatePolicy": False}}}, False),  # a then without its if: not read as one
        ({"$ref": "#/definitions/x"}, False),
        ({"oneOf": [True]}, False),  # a keyword not read here: not shown
        (True, True),
        (False, False),
    ],
)
def test_a_schema_passes_without_the_attributes_only_where_every_keyword_shows_it(schema: Any, passes: bool) -> None:
    assert passes_without(schema, ("UpdatePolicy",)) is passes


def test_a_rule_whose_code_names_another_attribute_is_not_skipped() -> None:
    def reads_update_policy(validator: Any, keywords: Any, instance: Any, schema: Any) -> Any:
        return instance.get("UpdatePolicy"), instance.get("Type")

    def reads_condition(validator: Any, keywords: Any, instance: Any, schema: Any) -> Any:
        return [instance.get(name) for name in ("Condition",)]

    assert reads_only(reads_update_policy, ("UpdatePolicy",))
    assert not reads_only(reads_condition, ("UpdatePolicy",))


@pytest.mark.parametrize(
    ("instance", "runs"),
    [
        ({"Type": "AWS::SNS::Topic"}, False),
        ({"Type": "AWS::SNS::Topic", "UpdatePolicy": {}}, True),
        ({"Fn::If": ["C", {"Type": "AWS::SNS::Topic", "UpdatePolicy": {}}, {}]}, True),  # one function in the resource's place
        ("Resource", True),
    ],
)
def test_the_rule_runs_unless_the_resource_plainly_lacks_its_attributes(instance: Any, runs: bool) -> None:
    ran: List[Any] = []

    def validate(validator: Any, keywords: Any, instance: Any, schema: Any) -> Iterator[str]:
        ran.append(instance)
        yield "found"

    class Validator:
        function_filter = FunctionFilter(add_cfn_lint_keyword=False)

    assert list(skipping_without(validate, ("UpdatePolicy",))(Validator(), "Resources/*", instance, {})) == (["found"] if runs else [])
    Validator.function_filter = FunctionFilter()  # cfn-lint's own keyword would be added: as it is
    assert list(skipping_without(validate, ("UpdatePolicy",))(Validator(), "Resources/*", instance, {})) == ["found"]


def test_a_context_evolved_by_copy_is_the_one_cfn_lint_makes() -> None:
    lint_template(ATTRIBUTES)  # installs the copying evolve
    context = Context(resources={"Stack": "not a module"}, ref_values={"A": 1}, strict_types=True)
    as_it_is = Context.evolve.__wrapped__
    for given in ({}, {"strict_types": False}, {"ref_values": {"B": 2}}, {"ref_values": {"A": 3}, "functions": ["Ref"]}):
        copied, made = Context.evolve(context, **dict(given)), as_it_is(context, **dict(given))
        assert copied == made and copied.__dict__ == made.__dict__ and type(copied) is Context
    assert context.ref_values == {"A": 1}  # merged into a new mapping, as cfn-lint does
    with pytest.raises(TypeError):
        Context.evolve(context, no_such_field=1)  # cfn-lint's own evolve answers a keyword that is not a field


def test_module_names_are_listed_once_per_resources_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    lint_template(ATTRIBUTES)

    class Resource:
        def __init__(self, type_name: str) -> None:
            self.type = type_name

    listed: List[Any] = []
    once = Context.__dict__["module_names"]
    assert getattr(once.func, "remembers", False)

    def listing(context: Any) -> Any:
        listed.append(context)
        return once.func.__wrapped__(context)

    remembered = lint_contexts.module_names_once(listing)
    resources = {"Mod": Resource("My::Thing::MODULE"), "Topic": Resource("AWS::SNS::Topic"), "App": Resource("AWS::Serverless::Application")}
    context = Context(resources=resources)
    siblings = [context.evolve(strict_types=False), context.evolve(functions=["Ref"]), context]
    assert [remembered(sibling) for sibling in siblings] == [("Mod", "App")] * 3
    assert len(listed) == 1  # listed once for the three contexts sharing the mapping
    other = Context(resources={"Topic": Resource("AWS::SNS::Topic")})
    assert remembered(other) == () and len(listed) == 2


def test_a_class_that_does_more_than_set_its_fields_or_evolves_otherwise_is_left_as_it_is() -> None:
    lint_template(ATTRIBUTES)
    evolve_1x = Context.evolve.__wrapped__

    @dataclasses.dataclass(frozen=True)
    class Counted:
        count: int = 0
        evolve = evolve_1x

        def __post_init__(self) -> None:
            pass

    @dataclasses.dataclass(frozen=True)
    class Hidden:
        count: int = 0
        later: int = dataclasses.field(init=False, default=0)
        evolve = evolve_1x

    @dataclasses.dataclass(frozen=True)
    class Plain:
        count: int = 0
        evolve = evolve_1x

    @dataclasses.dataclass(frozen=True)
    class Other:
        count: int = 0

        def evolve(self, **kwargs: Any) -> "Other":
            kwargs.setdefault("count", self.count + 1)  # not what 1.x's evolve does
            return Other(**kwargs)

    assert copies_as_init(Context) and copies_as_init(Plain)
    assert not copies_as_init(Counted)  # a __post_init__
    assert not copies_as_init(Hidden)  # a field __init__ does not take
    assert not copies_as_init(Other)
