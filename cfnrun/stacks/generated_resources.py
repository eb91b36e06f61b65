"""One resource of a generated template, made from its READ handler's model and its type's schema.

What the IaC generator's user guide page "Resolve write-only properties" and botocore's WarningDetail
document: the template's properties are what READ returns, less the readOnly ones (a template cannot set
them); a writeOnly property READ cannot return becomes a template parameter when it is required and
scalar; one that can be of several types is such a parameter typed String, with a MUTUALLY_EXCLUSIVE_TYPES
warning; of mutually exclusive property sets one is taken, its writeOnly properties made parameters whose
names end in OneOf and whose descriptions say another set may replace them, with a
MUTUALLY_EXCLUSIVE_PROPERTIES warning; an optional one, or an array, is left out with an
UNSUPPORTED_PROPERTIES warning (a parameter cannot hold an array, and whether an optional one was ever set
cannot be known). Each warned property is named by its path (``Code/S3Bucket``), whether it is required,
and its description in the schema. Inferred: the sets are a ``oneOf`` of ``required`` lists where the
property is declared, and the first is taken (the others' writeOnly properties are then optional ones);
a required writeOnly object is left out as an array is; the parameters' names (the logical id and the
property path) and their NoEcho (each stands for a value READ keeps secret).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from cfnrun.model.json_copy import json_copy
from cfnrun.model.schema import ResourceSchema, pointer_to_path

UNSUPPORTED_PROPERTIES, MUTUALLY_EXCLUSIVE_TYPES = "UNSUPPORTED_PROPERTIES", "MUTUALLY_EXCLUSIVE_TYPES"
MUTUALLY_EXCLUSIVE_PROPERTIES = "MUTUALLY_EXCLUSIVE_PROPERTIES"
SCALARS = {"string": "String", "integer": "Number", "number": "Number", "boolean": "String"}
NOT_NAME = re.compile(r"[^A-Za-z0-9]")


@dataclass
class ResourceTemplate:
    """What a resource adds to the template: its properties (parameters' Refs in place of writeOnly values),
    the parameters they refer to, and the WarningDetails."""

    properties: Dict[str, Any]
    parameters: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    warnings: List[Dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class _WriteOnly:
    path: List[str]
    required: bool
    types: Tuple[str, ...]  # the JSON types its schema allows; several when it is one of many
    description: Optional[str]
    exclusive: bool  # in the first of mutually exclusive property sets (a ``oneOf`` of ``required`` lists)


def _declared(schema: ResourceSchema, path: List[str]) -> Tuple[Dict[str, Any], bool, bool]:
    """The schema of the property at ``path``, whether every step to it is required, and whether a step is required
    by the first set of a ``oneOf`` of mutually exclusive property sets (the set the template takes)."""
    fragment: Dict[str, Any] = schema.document
    required, exclusive = True, False
    for step in path:
        if step == "*":
            fragment, required = schema.subschema(fragment.get("items") or {}), False
            continue
        sets = [f.get("required") or [] for f in fragment.get("oneOf") or [] if isinstance(f, dict)]
        chosen = bool(sets) and step in sets[0]
        exclusive = exclusive or chosen
        required = required and (step in (fragment.get("required") or []) or chosen)
        fragment = schema.subschema((fragment.get("properties") or {}).get(step) or {})
    return fragment, required, exclusive


def _types(fragment: Dict[str, Any]) -> Tuple[str, ...]:
    declared = fragment.get("type")
    if isinstance(declared, list):
        return tuple(str(t) for t in declared)
    if declared is None and any(key in fragment for key in ("oneOf", "anyOf")):
        return tuple(sorted({str(f.get("type")) for key in ("oneOf", "anyOf") for f in fragment.get(key, []) if isinstance(f, dict)}))
    return (str(declared),) if declared else ("string",)


def _write_only(schema: ResourceSchema) -> List[_WriteOnly]:
    found = []
    for pointer in schema.write_only_properties:
        path = [str(step) for step in pointer_to_path(pointer)]
        fragment, required, exclusive = _declared(schema, path)
        found.append(_WriteOnly(path, required, _types(fragment), fragment.get("description"), exclusive))
    return found


def _without(schema: ResourceSchema, model: Dict[str, Any], pointers: List[str]) -> Dict[str, Any]:
    pruned = json_copy(model)
    for container, key in reversed(schema.locate(pruned, pointers)):
        del container[key]
    return pruned


def _set(properties: Dict[str, Any], path: List[str], value: Any) -> None:
    for step in path[:-1]:
        properties = properties.setdefault(step, {})
    properties[path[-1]] = value


def resource_template(schema: ResourceSchema, logical_id: str, model: Dict[str, Any]) -> ResourceTemplate:
    """The resource's part of the template, from its READ model: no readOnly property, no writeOnly value."""
    properties = _without(schema, model, schema.read_only_properties + schema.write_only_properties)
    made = ResourceTemplate(properties)
    warned: Dict[str, List[Dict[str, Any]]] = {}
    for write_only in _write_only(schema):
        several = len(write_only.types) > 1  # made a String parameter, whatever types it may be
        as_parameter = write_only.required and "*" not in write_only.path and (several or write_only.types[0] in SCALARS)
        description = write_only.description
        if as_parameter:
            name = NOT_NAME.sub("", logical_id + "".join(write_only.path)) + ("OneOf" if write_only.exclusive else "")
            if write_only.exclusive:
                description = f"{description or '/'.join(write_only.path)} (one of mutually exclusive properties: the other set may replace it)"
            declared: Dict[str, Any] = {"Type": "String" if several else SCALARS[write_only.types[0]], "NoEcho": True}
            if description:
                declared["Description"] = description
            made.parameters[name] = declared
            _set(properties, write_only.path, {"Ref": name})
        kind = (UNSUPPORTED_PROPERTIES if not as_parameter else MUTUALLY_EXCLUSIVE_PROPERTIES if write_only.exclusive
                else MUTUALLY_EXCLUSIVE_TYPES if several else None)
        if kind is not None:
            property_warning = {"PropertyPath": "/".join(write_only.path), "Required": write_only.required}
            if write_only.description:
                property_warning["Description"] = write_only.description
            warned.setdefault(kind, []).append(property_warning)
    made.warnings = [{"Type": kind, "Properties": impacted} for kind, impacted in warned.items()]
    return made


def generated_logical_id(type_name: str, identifier: Dict[str, str], taken: "set[str]") -> str:
    """A logical id for a resource the caller named none for: its type's last two parts, then its identifier
    (letters and digits only), unique in the template (inferred: the service's own scheme is not documented)."""
    parts = type_name.split("::")
    base = NOT_NAME.sub("", "".join(parts[1:]) + "00" + "".join(identifier.values()))[:240] or "Resource"
    name, number = base, 1
    while name in taken:
        number += 1
        name = f"{base}{number}"
    return name
