"""Guard rules evaluated with CloudFormation Guard (the ``guardpycfn`` binding), and its report read as a verdict.

Guard reports each rule as compliant, not compliant or not applicable; a hook's input fails when
any rule is not compliant, and what a person needs to read is the rules' own custom messages
(``<< ... >>``), gathered from every failing clause, with Guard's own wording when a rule has none.
A rules text that does not parse (or cannot be evaluated) is an error, named with where the rules
came from, not a verdict.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Tuple

from cfnrun.model.errors import CfnrunError

PLACE = re.compile(r"at line (\d+) at column (\d+)")


class GuardError(CfnrunError):
    """Rules Guard could not parse or evaluate."""


@dataclass(frozen=True)
class GuardVerdict:
    passed: bool
    failures: Tuple[Tuple[str, str], ...] = ()  # (rule name, message) for each rule that is not compliant

    @property
    def reason(self) -> str:
        return "; ".join(f"Rule [{rule}] failed: {message}" for rule, message in self.failures)


def _tidy(message: str) -> str:
    return " ".join(message.split())


def _messages(node: Any, key: str) -> Iterator[str]:
    """Every non-empty ``messages.<key>`` anywhere under ``node``, in report order."""
    if isinstance(node, dict):
        messages = node.get("messages")
        if isinstance(messages, dict) and isinstance(messages.get(key), str) and messages[key].strip():
            yield _tidy(messages[key])
        for name, value in node.items():
            if name != "messages":
                yield from _messages(value, key)
    elif isinstance(node, list):
        for item in node:
            yield from _messages(item, key)


def _rule_message(rule: Dict[str, Any]) -> str:
    custom = list(dict.fromkeys(_messages(rule, "custom_message")))
    if custom:
        return " ".join(custom)
    own = list(dict.fromkeys(_messages(rule, "error_message")))
    return " ".join(own) if own else "not compliant"


def read_verdict(report: Any, source: str) -> GuardVerdict:
    """The verdict in what ``guardpycfn.validate_with_guard`` returned for rules from ``source``; GuardError when it is an error."""
    if not isinstance(report, dict) or report.get("tool") != "guard":
        raise GuardError(f"Guard returned something cfnrun cannot read for rules {source}: {report!r:.200}")
    if not report.get("success"):
        raise GuardError(_error_text(str(report.get("error") or "unknown error"), source))
    result = report.get("result")
    if not isinstance(result, dict):
        return GuardVerdict(True)  # a rules text with no rule in it (only comments): nothing to fail
    failures: List[Tuple[str, str]] = []
    for entry in result.get("not_compliant") or []:
        rule = entry.get("Rule") if isinstance(entry, dict) else None
        if isinstance(rule, dict):
            failures.append((str(rule.get("name") or "?"), _rule_message(rule)))
    return GuardVerdict(result.get("status") != "FAIL" and not failures, tuple(failures))


def _error_text(error: str, source: str) -> str:
    if "Parser Error" in error or "Parsing Error" in error:
        place = PLACE.search(error)
        where = f" at line {place.group(1)}, column {place.group(2)}" if place else ""
        return f"Guard rules {source} do not parse{where}"  # where only: Guard's own text quotes the file, which may be anything
    if "must be non-empty" in error:
        return f"Guard rules {source} are empty"
    return f"Guard rules {source} cannot be evaluated: {error}"


def evaluate(rules: str, document: Dict[str, Any], source: str) -> GuardVerdict:
    """Evaluate ``rules`` (read from ``source``) against ``document``; GuardError when they do not parse or evaluate."""
    import guardpycfn  # a native library: loaded when a Guard hook first evaluates, not when cfnrun starts

    try:
        report = guardpycfn.validate_with_guard(json.dumps(document, default=str), rules, False)
    except Exception as error:  # noqa: B902 - the binding's own failures are the rules' error, named with their source
        raise GuardError(f"Guard could not evaluate rules {source}: {type(error).__name__}: {error}") from None
    return read_verdict(report, source)

