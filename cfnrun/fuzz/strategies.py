"""Hypothesis strategies for resource models, read from the resource schema.

A generated model is valid against the schema as the service reads it: types, enums, ranges,
lengths, ``required`` and ``dependencies`` honoured, and every ``pattern`` evaluated as an
ECMA-262 regular expression through cfnrun's one pattern handling (``model/patterns.py``):
hypothesis writes candidates from the pattern as Python reads it, and the ECMAScript engine has
the last word. readOnly properties are never generated: the handler sets them.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Dict, List, Literal, Optional, Set, Tuple

from hypothesis import find, settings
from hypothesis import strategies as st

from cfnrun.contract.validity_proof import prove
from cfnrun.model.patterns import ecma_search
from cfnrun.model.schema import ResourceSchema, pointer_to_path
from cfnrun.model.schema_validator import SchemaValidator

MAX_TEXT = 24  # characters of a generated string when the schema allows more: short cases print well
MAX_ITEMS = 3  # items of a generated array when the schema allows more
MAX_DEPTH = 6  # nesting followed through $ref; deeper, a property is left out when optional, an array is empty when it may be
LAST_DEPTH = 2 * MAX_DEPTH  # deeper, a value is impossible: the oneOf/anyOf branch (or type) needing it is not drawn
JSON_SAFE_INTEGER = 2**53 - 1
_SURROGATES: Tuple[Literal["Cs"]] = ("Cs",)  # halves of UTF-16 pairs: no JSON document holds one alone
_CHARACTERS = st.characters(codec="utf-8", exclude_categories=_SURROGATES)


class _TooDeep(Exception):
    """A required value nested deeper than LAST_DEPTH: a recursive schema's branch that never ends."""


def _text(fragment: Dict[str, Any]) -> st.SearchStrategy[str]:
    low = int(fragment.get("minLength", 0) or 0)
    high = fragment.get("maxLength")
    high = max(low, min(int(high), low + MAX_TEXT)) if isinstance(high, int) else low + MAX_TEXT
    pattern = fragment.get("pattern")
    if not isinstance(pattern, str):
        return st.text(_CHARACTERS, min_size=low, max_size=high)
    try:
        # ASCII: \d and \w are ASCII in ECMAScript; Python's Unicode ones would be drawn, then mostly rejected.
        candidates: st.SearchStrategy[str] = st.from_regex(re.compile(pattern, re.ASCII), fullmatch=_anchored(pattern))
    except (re.error, OverflowError):  # Python cannot read it (surrogate pairs, ECMAScript-only syntax): plain text, filtered below
        candidates = st.text(_CHARACTERS, min_size=low, max_size=high)
    return candidates.filter(lambda text: low <= len(text) <= high and ecma_search(pattern, text) is not False)


def _anchored(pattern: str) -> bool:
    """``^…$``: only whole matches can pass."""
    return pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$")


def _number(fragment: Dict[str, Any], integer: bool) -> st.SearchStrategy[Any]:
    low, high = fragment.get("minimum"), fragment.get("maximum")
    above, below = fragment.get("exclusiveMinimum"), fragment.get("exclusiveMaximum")
    if integer:
        lowest = int(low) if isinstance(low, (int, float)) else -JSON_SAFE_INTEGER
        highest = int(high) if isinstance(high, (int, float)) else JSON_SAFE_INTEGER
        if isinstance(above, (int, float)):
            lowest = max(lowest, int(above) + 1)
        if isinstance(below, (int, float)):
            highest = min(highest, int(below) - 1)
        values: st.SearchStrategy[Any] = st.integers(lowest, highest)
    else:
        values = st.floats(
            min_value=low if isinstance(low, (int, float)) else above if isinstance(above, (int, float)) else None,
            max_value=high if isinstance(high, (int, float)) else below if isinstance(below, (int, float)) else None,
            exclude_min=not isinstance(low, (int, float)) and isinstance(above, (int, float)),
            exclude_max=not isinstance(high, (int, float)) and isinstance(below, (int, float)),
            allow_nan=False, allow_infinity=False, width=32,
        )
    step = fragment.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0:
        values = values.filter(lambda number: (number / step) == int(number / step))
    return values


class ModelStrategies:
    """The strategies of one schema: whole models for CREATE and UPDATE, and any fragment's values."""

    def __init__(self, schema: ResourceSchema) -> None:
        self.schema = schema
        self.read_only: Set[str] = {"/" + "/".join(pointer_to_path(p)) for p in schema.read_only_properties}
        document = {key: value for key, value in schema.document.items() if key not in ("readOnlyProperties",)}
        self._validator = SchemaValidator(document)
        self._proof = prove(self._validator.schema, SchemaValidator.VALIDATORS)  # most drawn models are valid, proven so quickly
        self._built: Dict[Tuple[str, str, int], st.SearchStrategy[Any]] = {}  # a recursive schema meets one fragment many times

    def model(self, pinned: Optional[Dict[str, Any]] = None) -> st.SearchStrategy[Dict[str, Any]]:
        """A model a CREATE may send: every writable property the schema allows, none readOnly, valid against the schema.

        A recursive schema (DynamoDB's AttributeValue: a oneOf whose L and M branches hold AttributeValues) is followed
        to MAX_DEPTH with everything it allows; deeper, only what it requires, and a branch that requires going
        deeper than LAST_DEPTH is not drawn. No model at all: ``st.nothing()`` (fuzz says no valid model comes out).
        ``pinned``: top-level properties every model carries with these values (``--set``)."""
        pinned = pinned or {}
        document = self.schema.document
        if pinned:  # pinned properties are not drawn (nor shrunk): their values are added to every model
            properties = {name: sub for name, sub in (document.get("properties") or {}).items() if name not in pinned}
            required = [name for name in document.get("required") or [] if name not in pinned]
            document = {**document, "properties": properties, "required": required}
        try:
            drawn = self._object(document, "", 0)
        except _TooDeep:
            return st.nothing()
        return (drawn.map(lambda model: {**model, **pinned}) if pinned else drawn).filter(self.valid)

    def valid(self, model: Dict[str, Any]) -> bool:
        """Valid against the schema: proven by the quick proof, else as jsonschema judges it."""
        return self._proof(model) or self._validator.is_valid(model)

    def fill_masked(self, model: Dict[str, Any], mask: str) -> Dict[str, Any]:
        """``model`` with each top-level writeOnly value that history masked replaced by the simplest valid value."""
        filled = dict(model)
        declared = self.schema.document.get("properties") or {}
        for pointer in self.schema.write_only_properties:
            path = pointer_to_path(pointer)
            if len(path) == 1 and filled.get(path[0]) == mask and isinstance(declared.get(path[0]), dict):
                filled[path[0]] = find(self.values(declared[path[0]], f"/{path[0]}"), lambda _: True, settings=settings(database=None))
        return filled

    def values(self, fragment: Dict[str, Any], where: str = "", depth: int = 0) -> st.SearchStrategy[Any]:
        """Values of one schema fragment; ``where``: its path in the model (``/Tags/Key``), for readOnly."""
        fragment = self.schema.subschema(fragment)
        if depth > LAST_DEPTH:
            raise _TooDeep(where)
        key = (json.dumps(fragment, sort_keys=True, default=str), where, depth)
        if key not in self._built:
            self._built[key] = self._values(fragment, where, depth)
        return self._built[key]

    def _values(self, fragment: Dict[str, Any], where: str, depth: int) -> st.SearchStrategy[Any]:
        if "const" in fragment:
            return st.just(fragment["const"])
        if isinstance(fragment.get("enum"), list) and fragment["enum"]:
            return st.sampled_from(fragment["enum"])
        for combinator in ("oneOf", "anyOf"):
            branches = fragment.get(combinator)
            if isinstance(branches, list) and branches:
                base = {key: value for key, value in fragment.items() if key != combinator}
                parts = [{**base, **self.schema.subschema(branch)} for branch in branches]
                if combinator == "oneOf":
                    parts = _one_branch_each(parts)
                return _possible(parts, lambda part: self.values(part, where, depth))
        if isinstance(fragment.get("allOf"), list):
            merged = {key: value for key, value in fragment.items() if key != "allOf"}
            for part in fragment["allOf"]:
                merged.update(self.schema.subschema(part))
            return self.values(merged, where, depth)
        kinds = fragment.get("type")
        if isinstance(kinds, list):
            return _possible([{**fragment, "type": kind} for kind in kinds if isinstance(kind, str)], lambda part: self.values(part, where, depth))
        kind = kinds if isinstance(kinds, str) else _implied_type(fragment)
        if kind == "object":
            return self._object(fragment, where, depth + 1)
        if kind == "array":
            return self._array(fragment, where, depth + 1)
        if kind == "integer":
            return _number(fragment, integer=True)
        if kind == "number":
            return _number(fragment, integer=False)
        if kind == "boolean":
            return st.booleans()
        if kind == "null":
            return st.none()
        return _text(fragment)

    def _array(self, fragment: Dict[str, Any], where: str, depth: int) -> st.SearchStrategy[List[Any]]:
        items: Dict[str, Any] = fragment["items"] if isinstance(fragment.get("items"), dict) else {}
        low = int(fragment.get("minItems", 0) or 0)
        high = fragment.get("maxItems")
        high = max(low, min(int(high), low + MAX_ITEMS)) if isinstance(high, int) else low + MAX_ITEMS
        if depth > MAX_DEPTH:
            high = low
        if high == 0:
            return st.just([])  # its items' strategy is not needed (a recursive schema's would go on forever)
        unique = (lambda item: json.dumps(item, sort_keys=True)) if fragment.get("uniqueItems") is True else None
        return st.lists(self.values(items, f"{where}/*", depth), min_size=low, max_size=high, unique_by=unique)

    def _object(self, fragment: Dict[str, Any], where: str, depth: int) -> st.SearchStrategy[Dict[str, Any]]:
        fragment = self.schema.subschema(fragment)
        properties: Dict[str, Any] = fragment["properties"] if isinstance(fragment.get("properties"), dict) else {}
        required = [name for name in fragment.get("required") or [] if isinstance(name, str)]
        writable = {name: sub for name, sub in properties.items() if f"{where}/{name}" not in self.read_only}
        fixed = {name: self.values(sub, f"{where}/{name}", depth) for name, sub in writable.items() if name in required}
        optional: Dict[str, st.SearchStrategy[Any]] = {}
        if depth <= MAX_DEPTH:
            optional = {name: self.values(sub, f"{where}/{name}", depth) for name, sub in writable.items() if name not in required}
        if not properties and isinstance(fragment.get("patternProperties"), dict) and depth <= MAX_DEPTH:
            return self._pattern_object(fragment["patternProperties"], where, depth)
        return st.fixed_dictionaries(fixed, optional=optional)

    def _pattern_object(self, patterns: Dict[str, Any], where: str, depth: int) -> st.SearchStrategy[Dict[str, Any]]:
        entries = [st.tuples(_text({"pattern": name, "minLength": 1}), self.values(sub, f"{where}/*", depth)) for name, sub in patterns.items()]
        if not entries:
            return st.just({})
        return st.lists(st.one_of(entries), max_size=MAX_ITEMS).map(dict)


def _one_branch_each(parts: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """oneOf's branches, each drawn without the properties only the other branches require.

    A value must match exactly one branch, and branches told apart by what they require (DynamoDB's AttributeValue:
    one of S, N, BOOL, NULL, L or M) are matched by a value that holds what another requires. Drawn with them, most
    values of a branch matched two and were thrown away, and a recursive schema's nested values almost always held
    one such: 150 valid models of AttributeValue took 40 s of draws (measured 2026-11-29).
    """

    def required(part: Dict[str, Any]) -> Set[str]:
        names = part.get("required")
        return {name for name in names if isinstance(name, str)} if isinstance(names, list) else set()

    narrowed = []
    for index, part in enumerate(parts):
        others = set().union(*(required(other) for n, other in enumerate(parts) if n != index)) - required(part)
        properties = part.get("properties")
        if others and isinstance(properties, dict):
            part = {**part, "properties": {name: sub for name, sub in properties.items() if name not in others}}
        narrowed.append(part)
    return narrowed


def _possible(parts: List[Dict[str, Any]], values: Callable[[Dict[str, Any]], st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """Values of any of ``parts`` (oneOf branches, or types) that does not require nesting past LAST_DEPTH."""
    strategies = []
    for part in parts:
        try:
            strategies.append(values(part))
        except _TooDeep:
            continue
    if not strategies:
        raise _TooDeep("every branch")
    return st.one_of(strategies)


def _implied_type(fragment: Dict[str, Any]) -> Optional[str]:
    """The type a fragment without ``type`` describes by its keywords (``properties``: an object...)."""
    if "properties" in fragment or "patternProperties" in fragment:
        return "object"
    if "items" in fragment:
        return "array"
    if any(key in fragment for key in ("minimum", "maximum", "multipleOf")):
        return "number"
    return "string"
