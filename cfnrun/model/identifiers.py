"""Cloud Control resource identifiers: the primary identifier's values as one string.

One property: its value. Several (a composite identifier): the values in schema order
joined with ``|``, or a JSON object naming each property.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from cfnrun.model.schema import ResourceSchema, pointer_to_path

SEPARATOR = "|"


class IdentifierError(ValueError):
    """The identifier does not name every primary identifier property."""


def identifier_names(schema: ResourceSchema) -> List[str]:
    """The top-level properties the primary identifier names, in schema order."""
    return [pointer_to_path(pointer)[0] for pointer in schema.primary_identifier if pointer_to_path(pointer)]


def _typed(schema: ResourceSchema, name: str, text: str) -> Any:
    """The identifier part as the schema types the property (an integer id stays an integer)."""
    declared = (schema.document.get("properties") or {}).get(name) or {}
    kind = schema.subschema(declared).get("type")
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
    except ValueError:
        raise IdentifierError(f"{name} is a {kind}; {text!r} is not one") from None
    return text


def identifier_model(schema: ResourceSchema, identifier: str) -> Dict[str, Any]:
    """The model a READ, UPDATE or DELETE request carries for ``identifier``."""
    names = identifier_names(schema)
    if not names:
        raise IdentifierError(f"{schema.type_name} declares no primaryIdentifier")
    if identifier.lstrip().startswith("{"):
        try:
            given = json.loads(identifier)
        except json.JSONDecodeError as error:
            raise IdentifierError(f"the identifier is not valid JSON: {error.msg}") from None
        missing = [name for name in names if name not in given] if isinstance(given, dict) else names
        if missing:
            raise IdentifierError(f"the identifier object lacks {', '.join(missing)}")
        return {name: given[name] for name in names}
    parts = identifier.split(SEPARATOR) if len(names) > 1 else [identifier]
    if len(parts) != len(names):
        raise IdentifierError(
            f"{schema.type_name}'s primary identifier has {len(names)} parts ({SEPARATOR.join(names)}); "
            f"{identifier!r} has {len(parts)}"
        )
    return {name: _typed(schema, name, part) for name, part in zip(names, parts)}


def identifier_of(schema: ResourceSchema, model: Optional[Dict[str, Any]]) -> Optional[str]:
    """The identifier of a model, or None while it lacks a primary identifier value."""
    names = identifier_names(schema)
    if not model or not names or any(model.get(name) in (None, "") for name in names):
        return None
    return SEPARATOR.join(str(model[name]) for name in names)
