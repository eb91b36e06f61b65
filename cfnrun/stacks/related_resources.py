"""ListResourceScanRelatedResources: the scanned resources related to given ones through the schemas' ``relationshipRef``.

A property's ``relationshipRef`` (the resource schema's meta-schema: ``typeName`` and ``propertyPath``) says
that its value is the value of that property of a resource of that type. Two scanned resources are related
when one's property so declared (a value, or each item of an array of values) equals the other's named
property, in the models their LIST returned, whichever of the two declares it. Inferred: the service
documents no rule for how it finds related resources; this is the one a schema can state.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from cfnrun.model.schema import ResourceSchema, pointer_to_path
from cfnrun.stacks.resource_scans import ScannedResource


@dataclass(frozen=True)
class Relationship:
    """``type_name``'s ``property_name`` holds the value of ``target_type``'s ``target_property``."""

    type_name: str
    property_name: str
    target_type: str
    target_property: str


def relationships(schema: ResourceSchema) -> List[Relationship]:
    """The type's top-level properties, or their array items, that declare a relationshipRef."""
    found = []
    for name, declared in (schema.document.get("properties") or {}).items():
        fragment = schema.subschema(declared) if isinstance(declared, dict) else {}
        reference = fragment.get("relationshipRef") or schema.subschema(fragment.get("items") or {}).get("relationshipRef")
        if isinstance(reference, dict) and reference.get("typeName") and reference.get("propertyPath"):
            path = pointer_to_path(str(reference["propertyPath"]))
            if len(path) == 1:
                found.append(Relationship(schema.type_name, str(name), str(reference["typeName"]), str(path[0])))
    return found


def _values(properties: Dict[str, Any], name: str) -> Iterator[str]:
    value = properties.get(name)
    for item in value if isinstance(value, list) else [value]:
        if item is not None and not isinstance(item, (dict, list)):
            yield str(item)


def _refers(rel: Relationship, source: ScannedResource, target: ScannedResource) -> bool:
    """Does ``source`` name ``target`` through ``rel``?"""
    if (source.resource_type, target.resource_type) != (rel.type_name, rel.target_type):
        return False
    return bool(set(_values(source.properties, rel.property_name)) & set(_values(target.properties, rel.target_property)))


def _key(resource: ScannedResource) -> Tuple[str, Tuple[Tuple[str, str], ...]]:
    return resource.resource_type, tuple(sorted(resource.identifier.items()))


def related(scanned: Sequence[ScannedResource], given: Sequence[ScannedResource],
            schema_of: Callable[[str], Optional[ResourceSchema]]) -> List[ScannedResource]:
    """The scanned resources related to any of ``given`` (themselves left out), in scan order."""
    schemas = {t: schema_of(t) for t in {r.resource_type for r in scanned}}
    declared = [rel for schema in schemas.values() if schema is not None for rel in relationships(schema)]
    wanted = {_key(r) for r in given}
    found: Set[Tuple[str, Tuple[Tuple[str, str], ...]]] = set()
    for one in given:
        for rel in declared:
            for other in scanned:
                if _refers(rel, one, other) or _refers(rel, other, one):
                    found.add(_key(other))
    return [r for r in scanned if _key(r) in found and _key(r) not in wanted]
