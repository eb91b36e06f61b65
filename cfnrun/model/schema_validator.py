"""The one JSON Schema validator for resource schemas and their fragments: draft-07, ECMA-262 patterns.

jsonschema evaluates ``pattern``, ``patternProperties`` and the ``additionalProperties`` that
depends on them with Python's ``re``; here the three keywords evaluate them with the
ECMAScript engine of ``model/patterns.py`` instead (a value a pattern backtracks on fails its
``pattern`` with why; as a property name it matches no ``patternProperties``). Everything else is
draft-07 as jsonschema implements it.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator

from jsonschema import Draft7Validator, validators
from jsonschema.exceptions import ValidationError

from cfnrun.model.patterns import PatternTimeout, ecma_find, ecma_search


def _matched(patterns: Dict[str, Any], name: str) -> bool:
    return any(ecma_search(pattern, name) for pattern in patterns)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Dict[str, Any]) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    try:
        matched = ecma_find(pattern, instance)
    except PatternTimeout as stopped:  # a value that makes the pattern backtrack: refused, with why
        yield ValidationError(f"the value could not be checked: {stopped}")
        return
    if matched is False:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Dict[str, Any], instance: Any, schema: Dict[str, Any]) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if ecma_search(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional_properties(validator: Any, allowed: Any, instance: Any, schema: Dict[str, Any]) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    properties, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
    extras = sorted((name for name in instance if name not in properties and not _matched(patterns, name)), key=str)
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif allowed is False and extras:
        names = ", ".join(repr(extra) for extra in extras)
        if patterns:
            regexes = ", ".join(repr(pattern) for pattern in sorted(patterns))
            yield ValidationError(f"{names} {'does' if len(extras) == 1 else 'do'} not match any of the regexes: {regexes}")
        else:
            yield ValidationError(f"Additional properties are not allowed ({names} {'was' if len(extras) == 1 else 'were'} unexpected)")


SchemaValidator = validators.extend(
    Draft7Validator,
    {"pattern": _pattern, "patternProperties": _pattern_properties, "additionalProperties": _additional_properties},
)
