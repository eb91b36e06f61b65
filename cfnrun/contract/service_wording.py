"""A schema problem as CloudFormation words it when it refuses a resource's properties.

The service checks a registry type's properties with AWS's cloudformation-resource-schema library
(Java, on the everit validator). Its ``ValidationException`` keeps the validator's own message,
``#/Pointer: ...``, for the keywords whose message shows no value (``SAFE_KEYWORDS``: required,
additionalProperties, type, the length and count limits, ...) and replaces every other one with
``#/Pointer: failed validation constraint for keyword [pattern]``, so that no property value is
shown; the messages of all problems are joined by newlines (``buildFullExceptionMessage``). Those
rules are read from that library's source (2026-11-28). The validator's own sentences (``required key
[X] not found``, ``expected type: JSONArray, found: JSONObject``, ...) are the everit library's, as users
quote them in the service's reasons; the words for ``dependencies``, ``contains`` and the combinators
are everit's as far as known, inferred rather than seen in a reason.

Here each of jsonschema's errors (the validator cfnrun runs) is worded that way: ``service_lines``.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Sequence

from cfnrun.model.pattern_worker import BACKTRACKED
from cfnrun.model.patterns import ecma_search

# the keywords whose messages the service shows as the validator words them (cloudformation-resource-schema's list)
SAFE_KEYWORDS = frozenset({
    "required", "minProperties", "maxProperties", "dependencies", "additionalProperties",
    "minLength", "maxLength", "minItems", "maxItems", "uniqueItems", "contains",
    "type", "allOf", "anyOf", "oneOf",
})
# how the validator names JSON types: the Java classes org.json reads them into
_FOUND = ((bool, "Boolean"), (int, "Integer"), (float, "BigDecimal"), (str, "String"), (dict, "JSONObject"), (list, "JSONArray"))
_EXPECTED = {"string": "String", "integer": "Integer", "number": "Number", "boolean": "Boolean", "object": "JSONObject",
             "array": "JSONArray", "null": "Null"}


def pointer(path: Sequence[Any]) -> str:
    """The validator's pointer to a place in the properties: ``#`` for the whole, ``#/Tags/0/Key`` within."""
    return "#" + "".join(f"/{part}" for part in path)


def service_lines(keyword: str, path: Sequence[Any], message: str, schema_value: Any, instance: Any, schema: Any, matched: int = 0) -> str:
    """jsonschema's error (its ``validator``, ``absolute_path``, ``message``, ``validator_value``, ``instance`` and
    ``schema``) as the service's line or lines; ``matched``: how many of a ``oneOf``'s subschemas the value matched."""
    at = pointer(path)
    if keyword not in SAFE_KEYWORDS:
        stopped = f" (cfnrun: {message})" if BACKTRACKED in message else ""  # no verdict: the match was stopped (it names no value)
        return f"{at}: failed validation constraint for keyword [{keyword}]{stopped}"
    return "\n".join(f"{at}: {sentence}" for sentence in _sentences(keyword, message, schema_value, instance, schema, matched))


def _sentences(keyword: str, message: str, value: Any, instance: Any, schema: Any, matched: int) -> List[str]:
    size = len(instance) if isinstance(instance, (str, list, dict)) else 0
    if keyword == "required":
        return [f"required key [{_required_key(message)}] not found"]
    if keyword == "additionalProperties":
        return [f"extraneous key [{key}] is not permitted" for key in _extraneous(instance, schema)]
    if keyword == "type":
        expected = value if isinstance(value, str) else (value[0] if isinstance(value, list) and value else "")
        return [f"expected type: {_EXPECTED.get(str(expected), str(expected))}, found: {_found(instance)}"]
    if keyword in ("minLength", "maxLength"):
        return [f"expected {keyword}: {value}, actual: {size}"]
    if keyword in ("minItems", "maxItems"):
        return [f"expected {'minimum' if keyword == 'minItems' else 'maximum'} item count: {value}, found: {size}"]
    if keyword in ("minProperties", "maxProperties"):
        return [f"{'minimum' if keyword == 'minProperties' else 'maximum'} size: [{value}], found: [{size}]"]
    if keyword == "uniqueItems":
        return ["array items are not unique"]
    if keyword == "dependencies":
        needed = [dependency for name, dependencies in (value.items() if isinstance(value, dict) else ())
                  if isinstance(instance, dict) and name in instance and isinstance(dependencies, list)
                  for dependency in dependencies if dependency not in instance]
        return [f"property [{dependency}] is required" for dependency in needed] or [message]
    if keyword == "contains":
        return ["expected at least one array item to match 'contains' schema"]
    count = len(value) if isinstance(value, list) else 0
    if keyword == "anyOf":
        return [f"no subschema matched out of the total {count} subschemas"]
    if keyword == "oneOf":
        return [f"{matched} subschemas matched instead of one"]
    return [f"only {matched} subschema matches out of {count}"]  # allOf


def _required_key(message: str) -> str:
    """The key jsonschema's ``'X' is a required property`` names."""
    quoted = message[: -len(" is a required property")] if message.endswith(" is a required property") else message
    try:
        return str(ast.literal_eval(quoted))
    except (ValueError, SyntaxError):
        return quoted


def _extraneous(instance: Any, schema: Any) -> List[str]:
    """The keys of ``instance`` that neither ``properties`` nor ``patternProperties`` of ``schema`` allow, in order."""
    if not isinstance(instance, dict) or not isinstance(schema, dict):
        return []
    given = schema.get("properties")
    named: Dict[str, Any] = given if isinstance(given, dict) else {}
    patterns = [p for p in (schema.get("patternProperties") or {}) if isinstance(p, str)]
    return [str(key) for key in instance if key not in named and not any(ecma_search(p, str(key)) for p in patterns)]


def _found(instance: Any) -> str:
    """The Java class org.json reads ``instance`` into (bool before int: a bool is an int in Python)."""
    return next((name for kind, name in _FOUND if isinstance(instance, kind)), "Null")
