"""GetTemplateSummary's ``ResourceIdentifierSummaries``: which properties identify each type's resources.

The service lists, per resource type of the template, the logical ids of that type and the
properties that identify one (its schema's ``primaryIdentifier``, as ``ResourcesToImport`` takes
them). A type whose schema cfnrun cannot read (neither served nor in cfn-lint's data) is left out;
that it is left out rather than listed without identifiers is inferred, not read.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

PrimaryIdentifier = Callable[[str], Optional[Sequence[str]]]  # a type name → its primaryIdentifier's property names


def identifier_summaries(types: Mapping[str, str], primary_identifier: PrimaryIdentifier) -> List[Dict[str, Any]]:
    """``types``: each resource's type by logical id, in the template's order."""
    summaries: Dict[str, Dict[str, Any]] = {}
    for logical_id, type_name in types.items():
        if type_name not in summaries:
            identifiers = primary_identifier(type_name)
            if not identifiers:
                continue
            summaries[type_name] = {"ResourceType": type_name, "LogicalResourceIds": [], "ResourceIdentifiers": list(identifiers)}
        summaries[type_name]["LogicalResourceIds"].append(logical_id)
    return list(summaries.values())


def property_names(pointers: Sequence[str]) -> List[str]:
    """``/properties/Name`` pointers as the property names the API shows."""
    return [pointer.split("/properties/", 1)[-1] for pointer in pointers]
