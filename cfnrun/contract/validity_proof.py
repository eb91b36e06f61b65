"""A quick proof that a document is valid against a schema, for the documents that are: most of them.

jsonschema builds a validator object for each property it descends into, and the models a stack's
resources send and their handlers answer mostly break nothing. Here a schema is read once into
checks of the draft-07 keywords plain models meet (type, enum, the bounds, the lengths, pattern,
properties, additionalProperties, required, items, minItems, maxItems, and a ``$ref`` to the
schema's own ``#/definitions/...``, beside which draft-07 evaluates nothing else). A document they prove
valid has no error; for any other — a keyword read here fails, a keyword not read here is in the
schema (``allOf``, ``uniqueItems``, another reference...), a value is not plainly typed — the proof says
nothing and the caller asks jsonschema, which names what is wrong. A proof is never looser than
jsonschema: each check accepts a subset of what the keyword accepts there (types exactly ``str``,
``int``, ``float``, ``bool``, ``dict``, ``list``; a pattern through the same ECMAScript engine).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Collection, Dict, List, Set

Proof = Callable[[Any], bool]  # True: valid, certainly; False: not proven (it may still be valid)

READ_HERE = frozenset({
    "type", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern",
    "properties", "additionalProperties", "required", "items", "minItems", "maxItems",
})
_TYPES: Dict[str, Callable[[Any], bool]] = {
    "string": lambda value: type(value) is str,
    "integer": lambda value: type(value) is int,
    "number": lambda value: type(value) is int or type(value) is float,
    "boolean": lambda value: type(value) is bool,
    "object": lambda value: type(value) is dict,
    "array": lambda value: type(value) is list,
    "null": lambda value: value is None,
}


def _unproven(value: Any) -> bool:
    return False


def _proven(value: Any) -> bool:
    return True


def _is_bound(bound: Any) -> bool:
    return type(bound) is int or type(bound) is float


def _is_count(count: Any) -> bool:
    return type(count) is int and count >= 0


def prove(schema: Any, validating: Collection[str]) -> Proof:
    """The proof for ``schema``; ``validating``: every keyword the validator evaluates (its VALIDATORS).

    A schema this cannot read (``"type": [{}]``...) gets a proof of nothing: jsonschema judges every document.
    """
    try:
        return _prove(schema, _Reading(schema, validating))
    except Exception:  # noqa: B902 - an odd schema costs the shortcut, never the check
        return _unproven


def _prove(schema: Any, validating: "_Reading") -> Proof:
    if schema is True:
        return _proven
    if isinstance(schema, dict) and "$ref" in schema:
        return validating.referred(schema["$ref"])  # draft-07: beside a $ref, the other keywords are not evaluated
    if not isinstance(schema, dict) or any(key in validating and key not in READ_HERE for key in schema):
        return _unproven
    closed = _closed_object(schema)  # properties and additionalProperties false: read as one check
    implied = _implied_type(schema)
    checks: List[Proof] = []
    for keyword, value in schema.items():
        if keyword not in READ_HERE or (keyword == "type" and implied) or (closed and keyword == "additionalProperties"):
            continue
        check = _closed(value, validating) if closed and keyword == "properties" else _keyword(keyword, value, schema, validating)
        if check is _unproven:
            return _unproven
        checks.append(check)
    return _every(checks)


# The keywords whose check here accepts only values of one type (see _keyword): beside one of them, that "type" asks nothing more.
_TYPED_BY = {
    "string": ("enum", "pattern", "minLength", "maxLength"),
    "object": ("properties", "required"),
    "array": ("items", "minItems", "maxItems"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"),
}


def _implied_type(schema: Dict[str, Any]) -> bool:
    """Does another keyword's check already demand the one type that ``type`` names (a model's properties are checked with fewer calls)?"""
    name = schema.get("type")
    return isinstance(name, str) and any(keyword in schema for keyword in _TYPED_BY.get(name, ()))


def _closed_object(schema: Dict[str, Any]) -> bool:
    return isinstance(schema.get("properties"), dict) and schema.get("additionalProperties") is False and not schema.get("patternProperties")


_LOCAL_DEFINITION = re.compile(r"#/definitions/([A-Za-z0-9_.-]+)")


class _Reading:
    """One schema being read: the keywords its validator evaluates, and its ``#/definitions/...`` as read so far."""

    def __init__(self, root: Any, validating: Collection[str]) -> None:
        self.root, self.validating = root, validating
        self._based = _has_id(root)  # an $id changes what "#/definitions/..." names under it: not followed here
        self._read: Dict[str, Proof] = {}
        self._reading: Set[str] = set()

    def __contains__(self, keyword: object) -> bool:
        return keyword in self.validating

    def referred(self, ref: Any) -> Proof:
        """The proof of the definition a ``$ref`` names; of nothing for any other reference, or one that refers to itself."""
        named = _LOCAL_DEFINITION.fullmatch(ref) if isinstance(ref, str) else None
        definitions = self.root.get("definitions") if isinstance(self.root, dict) else None
        if self._based or named is None or not isinstance(definitions, dict) or named.group(1) not in definitions or ref in self._reading:
            return _unproven
        if ref not in self._read:
            self._reading.add(ref)
            self._read[ref] = _prove(definitions[named.group(1)], self)
            self._reading.discard(ref)
        return self._read[ref]


def _has_id(node: Any) -> bool:
    if isinstance(node, dict):
        return "$id" in node or any(_has_id(value) for value in node.values())
    if isinstance(node, list):
        return any(_has_id(item) for item in node)
    return False


def _every(checks: List[Proof]) -> Proof:
    if not checks:
        return _proven
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value: first(value) and second(value)

    def proven(value: Any) -> bool:
        for check in checks:
            if not check(value):
                return False
        return True

    return proven


def _keyword(keyword: str, value: Any, schema: Dict[str, Any], validating: "_Reading") -> Proof:  # noqa: C901 - one branch a keyword
    if keyword == "type":
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not names or any(name not in _TYPES for name in names):
            return _unproven
        tests = [_TYPES[name] for name in names]
        return tests[0] if len(tests) == 1 else lambda instance: any(test(instance) for test in tests)
    if keyword == "enum":
        strings = frozenset(item for item in value if type(item) is str) if isinstance(value, list) else frozenset()
        return (lambda instance: type(instance) is str and instance in strings) if strings else _unproven
    if keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return _bound(keyword, value) if _is_bound(value) else _unproven
    if keyword in ("minLength", "maxLength", "minItems", "maxItems"):
        return _size(keyword, value) if _is_count(value) else _unproven
    if keyword == "pattern":
        return _pattern(value) if isinstance(value, str) else _unproven
    if keyword == "properties":
        return _properties(value, validating) if isinstance(value, dict) else _unproven
    if keyword == "additionalProperties":
        return _additional(value, schema, validating)
    if keyword == "required":
        names = value if isinstance(value, list) and all(type(name) is str for name in value) else None
        return (lambda instance: type(instance) is dict and all(name in instance for name in names)) if names is not None else _unproven
    # items: one schema for every item (the list form, with additionalItems, is jsonschema's)
    item = _prove(value, validating) if isinstance(value, dict) or value is True else _unproven
    return (lambda instance: type(instance) is list and all(item(entry) for entry in instance)) if item is not _unproven else _unproven


def _bound(keyword: str, bound: Any) -> Proof:
    if keyword == "minimum":
        return lambda instance: (type(instance) is int or type(instance) is float) and instance >= bound
    if keyword == "maximum":
        return lambda instance: (type(instance) is int or type(instance) is float) and instance <= bound
    if keyword == "exclusiveMinimum":
        return lambda instance: (type(instance) is int or type(instance) is float) and instance > bound
    return lambda instance: (type(instance) is int or type(instance) is float) and instance < bound


def _size(keyword: str, count: int) -> Proof:
    kind = str if keyword.endswith("Length") else list
    if keyword.startswith("min"):
        return lambda instance: type(instance) is kind and len(instance) >= count
    return lambda instance: type(instance) is kind and len(instance) <= count


def _pattern(pattern: str) -> Proof:
    from cfnrun.model.patterns import ecma_find_at_once  # loaded with jsonschema's validator anyway

    def matches(instance: Any) -> bool:
        # Only a match found at once proves anything: one that would need a deadline (a pattern that may backtrack,
        # a long value) is left to jsonschema's check, which runs it once, with its deadline and its words.
        return type(instance) is str and ecma_find_at_once(pattern, instance) is True

    return matches


def _properties(properties: Dict[str, Any], validating: "_Reading") -> Proof:
    pairs = [(name, _prove(sub, validating)) for name, sub in properties.items()]  # one not proven counts where present

    def proven(instance: Any) -> bool:
        if type(instance) is not dict:
            return False
        for name, proof in pairs:
            if name in instance and not proof(instance[name]):
                return False
        return True

    return proven


def _closed(properties: Dict[str, Any], validating: "_Reading") -> Proof:
    """``properties`` with ``additionalProperties: false``: every key of the object declared, and its value proven."""
    proofs = {name: _prove(sub, validating) for name, sub in properties.items()}

    def proven(instance: Any) -> bool:
        if type(instance) is not dict:
            return False
        for name, value in instance.items():
            proof = proofs.get(name)
            if proof is None or not proof(value):
                return False
        return True

    return proven


def _additional(allowed: Any, schema: Dict[str, Any], validating: "_Reading") -> Proof:
    if schema.get("patternProperties"):
        return _unproven  # not read here: the whole subschema is jsonschema's
    declared = schema.get("properties", {})
    if not isinstance(declared, dict):
        return _unproven
    if allowed is True:
        return _proven
    if allowed is False:
        return lambda instance: type(instance) is dict and declared.keys() >= instance.keys()
    extra = _prove(allowed, validating) if isinstance(allowed, dict) else _unproven
    if extra is _unproven:
        return _unproven
    return lambda instance: type(instance) is dict and all(name in declared or extra(value) for name, value in instance.items())
