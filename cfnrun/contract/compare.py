"""Compare what was requested with what a handler returned, the way the contract means it.

writeOnly properties are not compared; arrays whose schema says ``insertionOrder: false``
are compared regardless of order, and ``uniqueItems`` arrays as sets. A difference the schema's
``propertyTransform`` explains (the service's normal form of a requested value) is none.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Iterator, Tuple

from cfnrun.contract.property_transform import transformed
from cfnrun.model.schema import ResourceSchema


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _same_type(a: Any, b: Any) -> bool:
    return isinstance(a, bool) == isinstance(b, bool) and (
        isinstance(a, (int, float)) and isinstance(b, (int, float)) or type(a) is type(b)
    )


def mismatches(requested: Dict[str, Any], returned: Dict[str, Any], schema: ResourceSchema) -> Iterator[Tuple[str, str]]:
    """(pointer, what differs) for each requested value the returned model does not carry."""
    found = list(_compare(schema.without_write_only(requested), returned, schema.document, "", schema))
    if not found:
        yield from found
        return
    normalized, problems = transformed(requested, schema)  # the usual case never gets here: nothing differs
    yield from problems
    if normalized is None:
        yield from found
    else:
        yield from _compare(schema.without_write_only(normalized), returned, schema.document, "", schema)


def _compare(wanted: Any, got: Any, fragment: Dict[str, Any], pointer: str, schema: ResourceSchema) -> Iterator[Tuple[str, str]]:
    fragment = schema.subschema(fragment)
    if isinstance(wanted, dict) and isinstance(got, dict):
        properties = fragment.get("properties") or {}
        for key, value in wanted.items():
            where = f"{pointer}/{key}"
            if key not in got:
                yield where, f"requested {_key(value)}, but the returned model has no {key}"
                continue
            yield from _compare(value, got[key], properties.get(key) or {}, where, schema)
        return
    if isinstance(wanted, list) and isinstance(got, list):
        if fragment.get("insertionOrder") is False or fragment.get("uniqueItems") is True:
            a = sorted(_key(item) for item in wanted)
            b = sorted(_key(item) for item in got)
            if fragment.get("uniqueItems") is True:
                a, b = sorted(set(a)), sorted(set(b))
            if a != b:
                yield pointer, f"requested {_key(wanted)}, returned {_key(got)} (compared regardless of order)"
            return
        if len(wanted) != len(got):
            yield pointer, f"requested {len(wanted)} item(s), returned {len(got)}: {_key(got)}"
            return
        items: Dict[str, Any] = fragment["items"] if isinstance(fragment.get("items"), dict) else {}
        for index, (a_item, b_item) in enumerate(zip(wanted, got)):
            yield from _compare(a_item, b_item, items, f"{pointer}/{index}", schema)
        return
    if not _same_type(wanted, got) or wanted != got:
        yield pointer, f"requested {_key(wanted)}, returned {_key(got)}"
