"""Keep writeOnly values out of violation messages.

Messages quote values (a schema validator says "'hunter22' is too short", a createOnly
check says what changed); for a writeOnly property that would print a secret to the
console, the timeline, --json and every log. Messages are made safe here, once, as the
checker builds them: one about a writeOnly property names the property and the rule, and
no message may quote a writeOnly value of the request or the returned model.
"""
from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, Iterable, Iterator, List, Optional, Set, Tuple

from cfnrun.contract import violations as rules
from cfnrun.contract.violations import Violation
from cfnrun.model.schema import ResourceSchema, pointer_to_path

_SCHEMA_KEYWORD = re.compile(r"not valid against the schema \((\w+)\)")
QUOTABLE_MIN = 4  # shorter values (1, true, "ab") are not searched for in messages, only by pointer
CONTAINERS = ("desiredResourceState", "previousResourceState", "resourceModel", "resourceModels")


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    if value is not None:
        yield value


def _texts(value: Any) -> Set[str]:
    texts = {str(value), repr(value)}
    try:
        texts.add(json.dumps(value))
    except (TypeError, ValueError):
        pass
    return {text for text in texts if len(text) >= QUOTABLE_MIN}


def _model_path(pointer: Optional[str]) -> List[str]:
    """``/resourceModels/0/Secret`` → ``["Secret"]``: the violation's place inside a model."""
    parts = (pointer or "").split("/")[1:]
    if parts[:1] and parts[0] in CONTAINERS:
        parts = parts[2:] if parts[0] == "resourceModels" else parts[1:]
    else:
        return []
    return parts


def _under(path: List[str], write_only: List[str]) -> bool:
    return len(path) >= len(write_only) and all(w in ("*", p) for w, p in zip(write_only, path))


def redact(schema: ResourceSchema, violations: List[Violation], documents: Iterable[Any]) -> List[Violation]:
    """``violations`` with every message that would show a writeOnly value of ``documents`` rewritten."""
    if not violations or not schema.write_only_properties:
        return violations  # the usual case, kept cheap: checks run on every call serve answers
    paths = [(pointer, pointer_to_path(pointer)) for pointer in schema.write_only_properties]
    secrets: Set[str] = set()
    for document in documents:
        for container, key in schema.locate(document, schema.write_only_properties):
            for leaf in _leaves(container[key]):
                secrets |= _texts(leaf)
    return [_safe(violation, secrets, paths) for violation in violations]


def _safe(violation: Violation, secrets: Set[str], paths: List[Tuple[str, List[str]]]) -> Violation:
    path = _model_path(violation.pointer)
    named = next((pointer for pointer, wo in paths if path and _under(path, wo)), None)
    quoted = any(secret in violation.message for secret in secrets)
    if violation.rule is rules.NO_WRITE_ONLY and not quoted:
        return violation  # it names the property, never its value
    if named is None and not quoted:
        return violation
    subject = f"writeOnly property {named}" if named else "a writeOnly value"
    keyword = _SCHEMA_KEYWORD.search(violation.message)  # which schema rule it fails, when a validator said so
    broken = f"fails the schema's {keyword.group(1)}" if keyword else "breaks this rule"
    return dataclasses.replace(violation, message=f"{subject} {broken} (value not shown: it is writeOnly)")
