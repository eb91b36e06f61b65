"""Compare what was requested with what a handler returned, the way the contract means it.

writeOnly properties are not compared; arrays whose schema says ``insertionOrder: false``
are compared regardless of order, and ``uniqueItems`` arrays as sets. A difference the schema's
``propertyTransform`` explains (the service's normal form of a requested value) is none.
The contract checker, fuzz's read-after-write check and stack drift detection all compare here,
so a model one of them accepts none of the others reports.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Tuple

from cfnrun.contract.property_transform import Problem, transformed
from cfnrun.model.schema import ResourceSchema

ABSENT: Any = None  # the other side of an ADD or a REMOVE: no value there


@dataclass(frozen=True)
class Difference:
    """One place where the returned model does not carry what was requested.

    ``kind`` is in drift detection's words: REMOVE (requested, not returned), ADD (an array item
    returned, not requested), NOT_EQUAL. An array compared as a whole carries its item-by-item
    differences in ``items``; ``detail`` is the contract's one-line wording.
    """

    pointer: str
    kind: str
    expected: Any
    actual: Any
    detail: str
    items: Tuple["Difference", ...] = ()

    def leaves(self) -> Tuple["Difference", ...]:
        """The item-by-item differences of an array, or this one."""
        return self.items or (self,)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _same_type(a: Any, b: Any) -> bool:
    return isinstance(a, bool) == isinstance(b, bool) and (
        isinstance(a, (int, float)) and isinstance(b, (int, float)) or type(a) is type(b)
    )


def compared(requested: Dict[str, Any], returned: Dict[str, Any], schema: ResourceSchema) -> Tuple[List[Difference], List[Problem]]:
    """The differences between a requested and a returned model, and the propertyTransforms that would not evaluate."""
    if not schema.write_only_properties and not any(_compare(requested, returned, schema.document, "", schema)):
        return [], []  # the usual answer: nothing to leave out, nothing differs, so the request is not copied
    found = list(_compare(schema.without_write_only(requested), returned, schema.document, "", schema))
    if not found:
        return [], []
    normalized, problems = transformed(requested, schema)  # the usual case never gets here: nothing differs
    if normalized is not None:
        found = list(_compare(schema.without_write_only(normalized), returned, schema.document, "", schema))
    return found, problems


def mismatches(requested: Dict[str, Any], returned: Dict[str, Any], schema: ResourceSchema) -> Iterator[Tuple[str, str]]:
    """(pointer, what differs) for each requested value the returned model does not carry."""
    found, problems = compared(requested, returned, schema)
    yield from problems
    for difference in found:
        yield difference.pointer, difference.detail


def _compare(wanted: Any, got: Any, fragment: Dict[str, Any], pointer: str, schema: ResourceSchema) -> Iterator[Difference]:
    fragment = schema.subschema(fragment)
    if isinstance(wanted, dict) and isinstance(got, dict):
        properties = fragment.get("properties") or {}
        for key, value in wanted.items():
            where = f"{pointer}/{key}"
            if key not in got:
                yield Difference(where, "REMOVE", value, ABSENT, f"requested {_key(value)}, but the returned model has no {key}")
                continue
            yield from _compare(value, got[key], properties.get(key) or {}, where, schema)
        return
    if isinstance(wanted, list) and isinstance(got, list):
        if fragment.get("insertionOrder") is False or fragment.get("uniqueItems") is True:
            yield from _compare_unordered(wanted, got, fragment, pointer)
            return
        items: Dict[str, Any] = fragment["items"] if isinstance(fragment.get("items"), dict) else {}
        paired = [found for i, (a, b) in enumerate(zip(wanted, got)) for found in _compare(a, b, items, f"{pointer}/{i}", schema)]
        if len(wanted) == len(got):
            yield from paired
            return
        common = tuple(leaf for found in paired for leaf in found.leaves())
        extra = tuple(Difference(f"{pointer}/{i}", "ADD", ABSENT, got[i], "") for i in range(len(wanted), len(got)))
        gone = tuple(Difference(f"{pointer}/{i}", "REMOVE", wanted[i], ABSENT, "") for i in range(len(got), len(wanted)))
        detail = f"requested {len(wanted)} item(s), returned {len(got)}: {_key(got)}"
        yield Difference(pointer, "NOT_EQUAL", wanted, got, detail, common + extra + gone)
        return
    if not _same_type(wanted, got) or wanted != got:
        yield Difference(pointer, "NOT_EQUAL", wanted, got, f"requested {_key(wanted)}, returned {_key(got)}")


def _compare_unordered(wanted: List[Any], got: List[Any], fragment: Dict[str, Any], pointer: str) -> Iterator[Difference]:
    unique = fragment.get("uniqueItems") is True
    a, b = [_key(item) for item in wanted], [_key(item) for item in got]
    if (set(a) == set(b)) if unique else (sorted(a) == sorted(b)):
        return
    gone = [Difference(f"{pointer}/{i}", "REMOVE", wanted[i], ABSENT, "") for i in _unmatched(a, b, unique)]
    extra = [Difference(f"{pointer}/{i}", "ADD", ABSENT, got[i], "") for i in _unmatched(b, a, unique)]
    detail = f"requested {_key(wanted)}, returned {_key(got)} (compared regardless of order)"
    yield Difference(pointer, "NOT_EQUAL", wanted, got, detail, tuple(gone + extra))


def _unmatched(items: List[str], others: List[str], unique: bool) -> Iterator[int]:
    """Indexes of ``items`` with no equal in ``others`` (each of ``others`` matching once, unless items are unique)."""
    pool = Counter(others)
    for index, text in enumerate(items):
        if pool[text] > 0:
            pool[text] -= 0 if unique else 1
        else:
            yield index
