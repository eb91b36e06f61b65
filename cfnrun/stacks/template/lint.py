"""Lint a stack's template with cfn-lint before a create or update, the served types' schemas included.

cfn-lint refuses nothing: what the service refuses when a template arrives (a template that is
not one, unresolved references, a missing mapping key, a bad Fn::Select, a Number parameter that
is not a number, circular dependencies, an unknown type, the quotas) is refused by cfnrun's own
reading of it (``loading``, ``limits``, ``parameters``, ``intrinsics``, ``dependencies``), in
the service's words and with no rule ids. Everything cfn-lint finds besides is a warning
(``lint_warnings``: printed on serve's console), as the service accepts those templates and at
most fails a resource at run time (a bad Fn::GetAtt in Outputs, E6101, rolls the stack back). cfn-lint
knows every AWS::* type; the types cfnrun serves are given as their resource schemas, which
cfn-lint reads as registry schemas (its ``--registry-schemas DIR`` option). That option alone
makes a type *known* but leaves its properties unchecked in cfn-lint 1.x (property checks look
the type up in the region's table of AWS types, which registry types are not in), so each served
type is also entered in that table here — one private touch of cfn-lint, guarded by
``tests/unit/test_stack_template_lint.py``: a misspelt property of a user's type is an error on
its line, and a correct template lints clean.

Rules left out, because locally they would refuse templates the service accepts:

- ``E1040`` (a GetAtt's value format must match the property's): a user's schema has no
  ``format`` for its attributes, so every GetAtt of a user type into a formatted AWS property
  (a bucket name, an ARN) would be an error;
- ``W3010`` (Availability Zones should not be hard-coded): the endpoint's zones are whatever the
  stack's region says locally, and hard-coding them in a local test template is the point;
- ``E3031`` (a value must match the property's pattern): cfn-lint compiles the schemas' ECMA-262
  patterns with Python's ``re``, which fails on some of them (surrogate ranges in
  ApplicationAutoscaling's ScheduledAction ``Schedule``/``Timezone``: "bad character range")
  and reports its own failure as the template's; a served type's patterns are checked by its
  contract checks (``model/patterns.py``, ECMA-262 semantics) and AWS types' by the endpoint.

cfn-lint is imported on first use (about 0.3-0.8 s; it is not on any start-up path), its validator
classes are made once per set of keywords (``lint_classes.py``), and its
rules are kept per region and working folder (whose ``.cfnlintrc`` cfn-lint reads when they are
made, its ``ignore_checks`` added to ``IGNORED_RULES``), so a lint after the first takes milliseconds. cfn-lint's schema
tables are process-wide, so one lint runs at a time.
"""
from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Tuple

IGNORED_RULES = ("E1040", "W3010", "E3031")

_LOCK = threading.Lock()
_RUNNERS: Dict[Tuple[str, str], Any] = {}  # (region, working folder) -> cfn-lint's runner
_registered: Dict[str, str] = {}  # typeName -> its schema as JSON, as last entered in cfn-lint's tables


@dataclass(frozen=True)
class LintFinding:
    """One cfn-lint match: its rule, message and place (line and column from 1; path like Resources/Note/Properties)."""

    rule_id: str
    message: str
    line: int
    column: int
    severity: str  # "error", "warning" or "informational"
    path: str = ""

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def __str__(self) -> str:
        return f"[{self.rule_id}] {self.message} (line {self.line}, column {self.column})"


def lint_template(body: str, schemas: Iterable[Mapping[str, Any]] = (), region: str = "us-east-1") -> List[LintFinding]:
    """cfn-lint's findings for a template body, given the resource schemas of the served types."""
    from cfnlint.decode.decode import decode_str  # cfn-lint loads only when a stack template is linted

    with _LOCK:
        _register(list(schemas), region)
        template, errors = decode_str(body)
        matches = list(errors or []) if template is None or errors else list(_runner(region).validate_template(template))
    return [_finding(match) for match in matches if match.rule.id not in IGNORED_RULES]


def lint_warnings(findings: Iterable[LintFinding]) -> List[str]:
    """One console line per finding: a warning, never a refusal (the service accepts these templates)."""
    return [f"template lint ({finding.severity}, not refused: the service accepts this template): {finding}" for finding in findings]


def _runner(region: str) -> Any:
    """The region's runner, made in the working folder: cfn-lint reads the ``.cfnlintrc`` there (and in the home folder) when it is made."""
    key = (region, os.getcwd())
    if key not in _RUNNERS:
        from cfnlint.config import ConfigMixIn
        from cfnrun.stacks.template.lint_classes import install
        from cfnlint.runner import Runner

        # a rule list given here replaces the file's: the rules the .cfnlintrc leaves out are added to cfnrun's
        users = (getattr(ConfigMixIn(regions=[region]), "file_args", None) or {}).get("ignore_checks") or []
        _RUNNERS[key] = Runner(ConfigMixIn(regions=[region], ignore_checks=[*IGNORED_RULES, *users]))
        install(_RUNNERS[key].rules.values())
    return _RUNNERS[key]


def _register(schemas: List[Mapping[str, Any]], region: str) -> None:
    """Make cfn-lint's process-wide tables hold exactly these user types, validated in ``region``."""
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER, Schema

    wanted = {str(schema["typeName"]): json.dumps(schema, sort_keys=True) for schema in schemas}
    if wanted != _registered:
        PROVIDER_SCHEMA_MANAGER.reset()  # drops cached schemas (a type's schema may have changed: hot reload)
        registry = PROVIDER_SCHEMA_MANAGER._registry_schemas
        for type_name in set(_registered) - set(wanted):
            registry.pop(type_name, None)
        for type_name, text in wanted.items():
            registry[type_name] = Schema(json.loads(text))
        _registered.clear()
        _registered.update(wanted)
    aws_types = PROVIDER_SCHEMA_MANAGER._load_provider_module(region)
    for type_name in wanted:
        aws_types[type_name] = f"cfnrun-served:{type_name}"


def _finding(match: Any) -> LintFinding:
    path: Tuple[Any, ...] = tuple(getattr(match, "path", None) or ())
    return LintFinding(
        rule_id=match.rule.id,
        message=match.message,
        line=int(match.linenumber or 1),
        column=int(match.columnnumber or 1),
        severity=str(match.rule.severity),
        path="/".join(str(part) for part in path),
    )
