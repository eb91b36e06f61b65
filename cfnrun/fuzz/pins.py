"""Properties a user pins with ``cfnrun fuzz --set Prop=value``: never generated, never shrunk.

A provider that needs an existing resource (a table, a bucket, an ARN) gets past input validation
only when the model names one that exists; pinning it lets fuzzing vary the rest.
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Tuple

from cfnrun.model.errors import CfnrunError
from cfnrun.model.schema import ResourceSchema, pointer_to_path

Pins = Tuple[Tuple[str, Any], ...]  # (top-level property, value), in the order given


def parse_pins(texts: Iterable[str]) -> Pins:
    """``Name=value`` texts; the value is read as JSON when it is JSON, else kept as the string written."""
    pins = []
    for text in texts:
        name, equals, raw = text.partition("=")
        if not equals or not name.strip():
            raise CfnrunError(f"--set {text!r}: write Prop=value (a top-level property of the schema, then its value)")
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        pins.append((name.strip(), value))
    return tuple(pins)


def check_pins(schema: ResourceSchema, pins: Pins) -> None:
    """A CfnrunError for a pin the schema has no writable top-level property for, or whose value that property refuses.

    A value is checked against its property's own schema at once (a refused one would otherwise cost the search for a
    model its whole budget before saying so); what only the whole model can refuse is left to that search."""
    declared = schema.document.get("properties") or {}
    read_only = {pointer_to_path(p)[0] for p in schema.read_only_properties if len(pointer_to_path(p)) == 1}
    for name, value in pins:
        if name not in declared:
            raise CfnrunError(
                f"--set {name}: {schema.type_name} has no property {name}; its properties are {', '.join(sorted(declared))}"
            )
        if name in read_only:
            raise CfnrunError(f"--set {name}: {name} is readOnly: the handler sets it, a request never carries it")
        _check_value(schema, name, value)


def _check_value(schema: ResourceSchema, name: str, value: Any) -> None:
    """The property's schema, its ``$ref``s resolved in the resource schema's definitions, applied to ``value``."""
    from referencing.exceptions import Unresolvable  # jsonschema's: not for the commands that only read --set (history)

    from cfnrun.model.schema_validator import SchemaValidator

    property_schema = (schema.document.get("properties") or {})[name]
    checked = {"definitions": schema.document.get("definitions") or {}, "type": "object", "properties": {name: property_schema}}
    try:
        error = next(SchemaValidator(checked).iter_errors({name: value}), None)
    except Unresolvable:  # a $ref outside the definitions: the search for a model judges the value instead
        return
    if error is None:
        return
    where = "".join(f"/{part}" for part in list(error.absolute_path)[1:])
    write_only = any(pointer_to_path(p)[0] == name for p in schema.write_only_properties)
    said = f"it breaks {error.validator}: {json.dumps(error.validator_value)}" if write_only else error.message  # a writeOnly value is never shown
    raise CfnrunError(f"--set {name}: {schema.type_name}'s schema does not take this value{f' at {where}' if where else ''} ({said})")
