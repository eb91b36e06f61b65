"""The service's quotas on a template and on the call that brings it, in one place, each with its source.

Sources (read 2026-11-26): the CloudFormation User Guide's quotas page ("Understand CloudFormation
quotas": template body size in a request 51,200 bytes, in an S3 object 1 MB; 500 resources, 200
parameters, 200 outputs, 200 mappings of 200 attributes each) and the service's answer when a
quota is passed (``Template format error: Number of resources, 202, is greater than maximum
allowed, 200`` — quoted in public reports of the old 200-resource quota; the same words are
inferred for parameters, outputs and mappings). The body-size text is the service's framework
wording for a member past its length. The duplicate ParameterKey text is inferred (the service's
exact words were not found). Nesting depth and alias expansion are no documented quota: they are
cfnrun's bounds on what a 51,200-byte text can make (``model/template_text.py``).
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, Mapping, Optional, Set

from cfnrun.stacks.template.errors import TemplateError

TEMPLATE_BODY_BYTES = 51_200  # TemplateBody in a request
TEMPLATE_URL_BYTES = 1_000_000  # a template read from TemplateURL (not served locally: TemplateURL is refused)
RESOURCES = 500
PARAMETERS = 200
OUTPUTS = 200
MAPPINGS = 200
MAPPING_ATTRIBUTES = 200
SECTION_QUOTAS = (("Resources", "resources", RESOURCES), ("Parameters", "parameters", PARAMETERS),
                  ("Outputs", "outputs", OUTPUTS), ("Mappings", "mappings", MAPPINGS))


def body_size_problem(body: str) -> Optional[str]:
    """The ValidationError text for a TemplateBody past 51,200 bytes, or None."""
    if len(body.encode("utf-8")) <= TEMPLATE_BODY_BYTES:
        return None
    return (f"1 validation error detected: Value '{body}' at 'templateBody' failed to satisfy constraint: "
            f"Member must have length less than or equal to {TEMPLATE_BODY_BYTES}")


def check_quotas(document: Mapping[str, Any]) -> None:
    """Refuse a template declaring more resources, parameters, outputs or mappings than the service allows."""
    for section, noun, quota in SECTION_QUOTAS:
        declared = document.get(section)
        count = len(declared) if isinstance(declared, dict) else 0
        if count > quota:
            raise TemplateError(f"Template format error: Number of {noun}, {count}, is greater than maximum allowed, {quota}")
    mappings = document.get("Mappings")
    for name, mapping in (mappings.items() if isinstance(mappings, dict) else ()):
        if isinstance(mapping, dict) and len(mapping) > MAPPING_ATTRIBUTES:
            raise TemplateError(f"Template format error: Number of mapping attributes in {name}, {len(mapping)}, "
                                f"is greater than maximum allowed, {MAPPING_ATTRIBUTES}")


def check_parameter_keys(parameters: Iterable[Dict[str, Any]]) -> None:
    """Refuse a call that gives one ParameterKey more than once (the text is inferred)."""
    seen: Set[Any] = set()
    for parameter in parameters:
        key = parameter.get("ParameterKey")
        if key in seen:
            raise TemplateError(f"Parameters: [{key}] given more than once: give each ParameterKey once")
        seen.add(key)
