"""Lint a stack's template with cfn-lint before a create or update, the served types' schemas included.

The service refuses a template it cannot validate (``ValidationError``) and accepts the rest; the
stack engine does the same with cfn-lint's errors and keeps its warnings as notes. cfn-lint
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
  stack's region says locally, and hard-coding them in a local test template is the point.

cfn-lint is imported on first use (about 0.3-0.8 s; it is not on any start-up path) and its
rules are kept per region, so a lint after the first takes milliseconds. cfn-lint's schema
tables are process-wide, so one lint runs at a time.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

IGNORED_RULES = ("E1040", "W3010")

_LOCK = threading.Lock()
_RUNNERS: Dict[str, Any] = {}
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


def lint_errors(findings: Iterable[LintFinding]) -> Optional[str]:
    """The ValidationError text for a template with lint errors, or None when it has none."""
    errors = [finding for finding in findings if finding.is_error]
    if not errors:
        return None
    return "Template format error: " + "; ".join(str(finding) for finding in errors)


def _runner(region: str) -> Any:
    if region not in _RUNNERS:
        from cfnlint.config import ConfigMixIn
        from cfnlint.runner import Runner

        _RUNNERS[region] = Runner(ConfigMixIn(regions=[region], ignore_checks=list(IGNORED_RULES)))
    return _RUNNERS[region]


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
