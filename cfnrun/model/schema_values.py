"""Template values read as a resource schema types them.

A template carries numbers and booleans that came through parameters or Fn::Sub as text
("5", "true"); the service reads them by the property's schema type before it validates
the properties, and sends every primitive to the handler as text (the support library
recasts them by the generated model).
"""
from __future__ import annotations

from typing import Any, Dict, List

from cfnrun.model.schema import ResourceSchema


def _types(fragment: Dict[str, Any]) -> List[str]:
    declared = fragment.get("type")
    return [declared] if isinstance(declared, str) else list(declared or [])


def _scalar(value: str, types: List[str]) -> Any:
    if "string" in types:
        return value
    if "boolean" in types and value in ("true", "false"):
        return value == "true"
    if "integer" in types:
        try:
            return int(value)
        except ValueError:
            pass
    if "number" in types:
        try:
            number = float(value)
        except ValueError:
            return value
        return int(number) if number.is_integer() and "." not in value and "e" not in value.lower() else number
    return value


def typed_like_schema(schema: ResourceSchema, fragment: Dict[str, Any], value: Any) -> Any:
    """``value`` with text that the schema types as a number or boolean read as one; anything else unchanged."""
    fragment = schema.subschema(fragment)
    if isinstance(value, str):
        return _scalar(value, _types(fragment))
    if isinstance(value, list):
        items = fragment.get("items")
        return [typed_like_schema(schema, items, item) for item in value] if isinstance(items, dict) else value
    if isinstance(value, dict):
        properties = fragment.get("properties") or {}
        extra = fragment.get("additionalProperties")
        typed = {}
        for key, item in value.items():
            inner = properties.get(key, extra if isinstance(extra, dict) else None)
            typed[key] = typed_like_schema(schema, inner, item) if isinstance(inner, dict) else item
        return typed
    return value


def typed_properties(schema: ResourceSchema, properties: Dict[str, Any]) -> Dict[str, Any]:
    """A resource's template properties, typed like its schema's top level."""
    return typed_like_schema(schema, schema.document, properties)


def stringify_primitives(value: Any) -> Any:
    """Numbers and booleans as strings, the way CloudFormation sends template values."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, dict):
        return {key: stringify_primitives(item) for key, item in value.items()}
    if isinstance(value, list):
        return [stringify_primitives(item) for item in value]
    return value
