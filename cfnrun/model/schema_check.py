"""``cfnrun validate``: is a resource (or hook) schema a valid draft-07 document that follows
the resource (or hook) schema rules? Every problem comes with a JSON pointer into the schema.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List

from jsonschema import Draft7Validator

from cfnrun.model.patterns import unusable_patterns
from cfnrun.model.schema import MAX_TIMEOUT_MINUTES, MIN_TIMEOUT_MINUTES, ResourceSchema

TYPE_NAME = re.compile(r"^[a-zA-Z0-9]{2,64}::[a-zA-Z0-9]{2,64}::[a-zA-Z0-9]{2,64}$")
POINTER_LISTS = (
    "readOnlyProperties",
    "writeOnlyProperties",
    "createOnlyProperties",
    "conditionalCreateOnlyProperties",
    "deprecatedProperties",
    "nonPublicProperties",
)
HANDLERS = ("create", "read", "update", "delete", "list")
HOOK_HANDLERS = ("preCreate", "preUpdate", "preDelete")
HOOK_HANDLER_KEYS = ("targetNames", "permissions")  # all a hook handler may say (cloudformation-cli's hook meta-schema)
DISALLOWED_IN_PROPERTIES = {
    "if": "conditional subschemas (if/then/else) are not allowed in a resource schema",
    "then": "conditional subschemas (if/then/else) are not allowed in a resource schema",
    "else": "conditional subschemas (if/then/else) are not allowed in a resource schema",
    "not": "'not' is not allowed in a resource schema",
    "propertyNames": "propertyNames is not allowed: describe the keys with patternProperties instead",
}


@dataclass(frozen=True)
class SchemaProblem:
    pointer: str
    message: str
    severity: str = "error"

    def line(self) -> str:
        return f"{self.severity}: {self.pointer or '/'}: {self.message}"


def _escape(part: Any) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")


def check_schema(schema: ResourceSchema, hook: bool = False) -> List[SchemaProblem]:
    return list(_check_hook(schema) if hook else _check(schema))


def looks_like_hook(document: Dict[str, Any]) -> bool:
    """A schema file alone: is it a hook's (its handlers are invocation points)?"""
    handlers = document.get("handlers")
    return isinstance(handlers, dict) and any(name in HOOK_HANDLERS for name in handlers)


def _draft_07(document: Dict[str, Any]) -> Iterator[SchemaProblem]:
    for error in Draft7Validator(Draft7Validator.META_SCHEMA).iter_errors(document):
        yield SchemaProblem("".join(f"/{_escape(p)}" for p in error.absolute_path), f"not valid draft-07: {error.message}")


def _check_hook(schema: ResourceSchema) -> Iterator[SchemaProblem]:
    document = schema.document
    yield from _draft_07(document)
    type_name = document.get("typeName")
    if not isinstance(type_name, str) or not TYPE_NAME.match(type_name):
        yield SchemaProblem("/typeName", f"typeName {type_name!r} must look like Organization::Service::Hook")
    if not isinstance(document.get("description"), str) or not document.get("description"):
        yield SchemaProblem("/description", "a hook schema needs a description")
    if document.get("additionalProperties") is not False:
        yield SchemaProblem("/additionalProperties", "must be false at the top level, as cfn's hook meta-schema requires")
    configuration = document.get("typeConfiguration")
    if not isinstance(configuration, dict):
        yield SchemaProblem("/typeConfiguration", "a hook schema declares its typeConfiguration (an object schema, possibly with no properties)")
    elif configuration.get("additionalProperties") is not False:
        yield SchemaProblem("/typeConfiguration/additionalProperties", "must be false: every configuration property is declared")
    yield from _hook_handlers(document)
    for pointer, pattern in unusable_patterns(document):
        yield SchemaProblem(pointer, f"{pattern!r} is not an ECMAScript regular expression (resource schema patterns are ECMA-262): cfnrun does not check values against it", "warning")


def _hook_handlers(document: Dict[str, Any]) -> Iterator[SchemaProblem]:
    handlers = document.get("handlers")
    if not isinstance(handlers, dict) or not handlers:
        yield SchemaProblem("/handlers", f"a hook declares at least one handler: {', '.join(HOOK_HANDLERS)}")
        return
    for name, handler in handlers.items():
        pointer = f"/handlers/{_escape(name)}"
        if name not in HOOK_HANDLERS:
            yield SchemaProblem(pointer, f"unknown hook handler {name!r}: use {', '.join(HOOK_HANDLERS)}")
            continue
        if not isinstance(handler, dict):
            yield SchemaProblem(pointer, "a handler must be an object")
            continue
        names = handler.get("targetNames")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
            yield SchemaProblem(f"{pointer}/targetNames", "list the target types this handler runs for, e.g. [\"AWS::S3::Bucket\"] (wildcards allowed)")
        if not isinstance(handler.get("permissions"), list):
            yield SchemaProblem(f"{pointer}/permissions", "each handler lists the permissions it needs (an array, possibly empty)")
        for key in handler:
            if key not in HOOK_HANDLER_KEYS:
                yield SchemaProblem(f"{pointer}/{_escape(key)}", f"a hook handler takes only {' and '.join(HOOK_HANDLER_KEYS)}")


def _check(schema: ResourceSchema) -> Iterator[SchemaProblem]:
    document = schema.document
    yield from _draft_07(document)
    yield from _top_level(document)
    properties: Dict[str, Any] = document["properties"] if isinstance(document.get("properties"), dict) else {}
    for name, fragment in properties.items():
        yield from _fragment(fragment, f"/properties/{_escape(name)}")
    for name, fragment in (document.get("definitions") or {}).items():
        yield from _fragment(fragment, f"/definitions/{_escape(name)}")
    yield from _pointer_lists(schema)
    yield from _handlers(document)
    yield from _cfn_validate_warnings(document)
    for pointer, pattern in unusable_patterns(document):
        yield SchemaProblem(pointer, f"{pattern!r} is not an ECMAScript regular expression (resource schema patterns are ECMA-262): cfnrun does not check values against it", "warning")


def _declared_properties(fragment: Any, pointer: str) -> Iterator[tuple]:
    """(pointer, name, fragment) of every property declared in a shape, at any depth."""
    if not isinstance(fragment, dict):
        return
    for name, sub in (fragment.get("properties") or {}).items() if isinstance(fragment.get("properties"), dict) else []:
        child = f"{pointer}/properties/{_escape(name)}"
        yield child, name, sub
        yield from _declared_properties(sub, child)
    if isinstance(fragment.get("items"), dict):
        yield from _declared_properties(fragment["items"], f"{pointer}/items")


UNIQUE_OBJECTS = (
    "uniqueItems array of objects: the models.py cfn generate writes for Python reads it into a set (set_or_none), "
    "which cannot hold objects, so every request with a value here fails in the support library before the handler "
    "runs (unhashable type: 'dict'); drop uniqueItems (insertionOrder: false says order does not matter)"
)


def _is_object(document: Dict[str, Any], items: Any) -> bool:
    """Are an array's items objects (declared so, or a local $ref to a definition that is)?"""
    if isinstance(items, dict) and isinstance(items.get("$ref"), str) and items["$ref"].startswith("#/definitions/"):
        items = (document.get("definitions") or {}).get(items["$ref"][len("#/definitions/"):])
    return isinstance(items, dict) and (items.get("type") == "object" or "properties" in items)


def _cfn_validate_warnings(document: Dict[str, Any]) -> Iterator[SchemaProblem]:
    """The warnings ``cfn validate`` prints: arrays without insertionOrder, no tagging, lowercase names."""
    shapes = [("", document)] + [
        (f"/definitions/{_escape(name)}", sub) for name, sub in (document.get("definitions") or {}).items()
    ]
    for base, shape in shapes:
        for pointer, name, fragment in _declared_properties(shape, base):
            if not isinstance(fragment, dict):
                continue
            if fragment.get("type") == "array" and "insertionOrder" not in fragment:
                yield SchemaProblem(
                    pointer, "array without insertionOrder: say whether order matters (cfn validate warns too)", "warning"
                )
            if str(name)[:1].islower():
                yield SchemaProblem(pointer, f"property {name!r} starts with a lowercase letter; CloudFormation's do not", "warning")
            if fragment.get("type") == "array" and fragment.get("uniqueItems") is True and _is_object(document, fragment.get("items")):
                yield SchemaProblem(pointer, UNIQUE_OBJECTS, "warning")
    if "tagging" not in document:
        yield SchemaProblem("/tagging", "no tagging section: say whether the resource is taggable (cfn validate warns too)", "warning")


def _top_level(document: Dict[str, Any]) -> Iterator[SchemaProblem]:
    type_name = document.get("typeName")
    if not isinstance(type_name, str) or not TYPE_NAME.match(type_name):
        yield SchemaProblem("/typeName", f"typeName {type_name!r} must look like Organization::Service::Resource")
    if not isinstance(document.get("description"), str) or not document.get("description"):
        yield SchemaProblem("/description", "a resource schema needs a description")
    if not isinstance(document.get("properties"), dict) or not document["properties"]:
        yield SchemaProblem("/properties", "a resource needs at least one property")
    if document.get("additionalProperties") is not False:
        yield SchemaProblem("/additionalProperties", "must be false at the top level: every property of a resource is declared")
    if not document.get("primaryIdentifier"):
        yield SchemaProblem("/primaryIdentifier", "a resource needs a primaryIdentifier")


def _fragment(fragment: Any, pointer: str) -> Iterator[SchemaProblem]:
    if not isinstance(fragment, dict):
        return
    for keyword, why in DISALLOWED_IN_PROPERTIES.items():
        if keyword in fragment:
            yield SchemaProblem(f"{pointer}/{keyword}", why)
    if "additionalProperties" in fragment and fragment["additionalProperties"] is not False:
        yield SchemaProblem(
            f"{pointer}/additionalProperties",
            "additionalProperties may only be false in a property: define extra keys with patternProperties",
        )
    if "properties" in fragment and "patternProperties" in fragment:
        yield SchemaProblem(pointer, "properties and patternProperties cannot be used together in one shape")
    for keyword in ("properties", "patternProperties"):
        for name, sub in (fragment.get(keyword) or {}).items():
            yield from _fragment(sub, f"{pointer}/{keyword}/{_escape(name)}")
    if isinstance(fragment.get("items"), dict):
        yield from _fragment(fragment["items"], f"{pointer}/items")
    for keyword in ("allOf", "anyOf", "oneOf"):
        for index, sub in enumerate(fragment.get(keyword) or []):
            yield from _fragment(sub, f"{pointer}/{keyword}/{index}")


def _resolves(schema: ResourceSchema, pointer: str) -> bool:
    """Does a property pointer (``/properties/A/B``, ``/properties/Tags/*/Key``) name a declared property?"""
    parts = pointer.split("/")[1:]
    if len(parts) < 2 or parts[0] != "properties":
        return False
    fragment: Dict[str, Any] = {"properties": schema.document.get("properties") or {}}
    for part in parts[1:]:
        fragment = schema.subschema(fragment)
        if part == "*":
            items = fragment.get("items")
            if not isinstance(items, dict):
                return False
            fragment = items
            continue
        children = fragment.get("properties") or {}
        if part not in children:
            return False
        fragment = children[part]
    return True


def _pointer_lists(schema: ResourceSchema) -> Iterator[SchemaProblem]:
    document = schema.document
    lists = {key: document.get(key) for key in ("primaryIdentifier", *POINTER_LISTS) if key in document}
    for key, pointers in lists.items():
        if not isinstance(pointers, list):
            continue
        for index, pointer in enumerate(pointers):
            if not isinstance(pointer, str) or not _resolves(schema, pointer):
                yield SchemaProblem(f"/{key}/{index}", f"{pointer!r} does not name a property declared in /properties")
    for group_index, group in enumerate(document.get("additionalIdentifiers") or []):
        for index, pointer in enumerate(group if isinstance(group, list) else []):
            if not isinstance(pointer, str) or not _resolves(schema, pointer):
                yield SchemaProblem(
                    f"/additionalIdentifiers/{group_index}/{index}", f"{pointer!r} does not name a property declared in /properties"
                )
    read_only, write_only = set(schema.read_only_properties), set(schema.write_only_properties)
    for pointer in sorted(read_only & write_only):
        yield SchemaProblem("/writeOnlyProperties", f"{pointer} is both readOnly and writeOnly: it could never be set nor read")
    for pointer in sorted(read_only & set(schema.create_only_properties)):
        yield SchemaProblem("/createOnlyProperties", f"{pointer} is both readOnly and createOnly: users cannot set it", "warning")
    for pointer in schema.primary_identifier:
        if pointer in write_only:
            yield SchemaProblem("/primaryIdentifier", f"{pointer} is writeOnly: an identifier must be readable")


def _handlers(document: Dict[str, Any]) -> Iterator[SchemaProblem]:
    handlers = document.get("handlers")
    if handlers is None:
        return
    if not isinstance(handlers, dict):
        yield SchemaProblem("/handlers", "handlers must be an object")
        return
    for name, handler in handlers.items():
        pointer = f"/handlers/{_escape(name)}"
        if name not in HANDLERS:
            yield SchemaProblem(pointer, f"unknown handler {name!r}: use {', '.join(HANDLERS)}")
            continue
        if not isinstance(handler, dict):
            yield SchemaProblem(pointer, "a handler must be an object")
            continue
        if not isinstance(handler.get("permissions"), list):
            yield SchemaProblem(f"{pointer}/permissions", "each handler lists the permissions it needs (an array, possibly empty)")
        timeout = handler.get("timeoutInMinutes")
        if timeout is not None and (
            not isinstance(timeout, int) or isinstance(timeout, bool) or not MIN_TIMEOUT_MINUTES <= timeout <= MAX_TIMEOUT_MINUTES
        ):
            yield SchemaProblem(
                f"{pointer}/timeoutInMinutes",
                f"timeoutInMinutes is {timeout!r}; it must be a whole number from {MIN_TIMEOUT_MINUTES} to {MAX_TIMEOUT_MINUTES}",
            )
