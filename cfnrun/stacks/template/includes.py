"""``AWS::Include``: a template snippet read from a Location and put where the transform stands.

Two places, as the service takes them: the ``Transform`` section (``{Name: AWS::Include,
Parameters: {Location: ...}}``: the snippet's sections join the template's top level), and
``Fn::Transform`` anywhere below (the snippet replaces the ``{"Fn::Transform": ...}`` object, or,
as a key beside others, is merged into the object that holds it). Reading a Location is the
caller's (``IncludeReader``: S3 on the AWS endpoint, or a file); a snippet may not include
another (the service processes one level). When each include runs among the template's other
transforms is ``transforms.py``'s (``apply_transforms``).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Mapping

from cfnrun.stacks.template.errors import TemplateError

INCLUDE = "AWS::Include"
IncludeReader = Callable[[str], Any]  # a Location → the snippet, decoded (TemplateError when it cannot be read)


def include_location(transform: Any, where: str) -> str:
    """The Location an AWS::Include call names."""
    location = ((transform.get("Parameters") if isinstance(transform, dict) else None) or {}).get("Location")
    if not isinstance(location, str) or not location:
        raise TemplateError(f"{INCLUDE} needs Parameters.Location, the snippet's S3 URI or path", where)
    return location


def include_sections(document: Mapping[str, Any], location: str, read: IncludeReader) -> Dict[str, Any]:
    """The template (without its Transform section) with the snippet's sections joined to its top level."""
    result = dict(document)
    snippet = read(location)
    if not isinstance(snippet, dict):
        raise TemplateError(f"{INCLUDE} at the top level needs a snippet that is an object of sections: {location}", "Transform")
    for section, value in snippet.items():
        if isinstance(value, dict) and isinstance(result.get(section), dict):
            result[section] = {**result[section], **value}
        else:
            result[section] = value
    return result


def included(siblings: Mapping[str, Any], location: str, read: IncludeReader, where: str) -> Any:
    """What an ``Fn::Transform`` of AWS::Include beside ``siblings`` becomes: the snippet, merged into them if there are any."""
    snippet = read(location)
    if not siblings:
        return snippet
    if not isinstance(snippet, dict):
        raise TemplateError(f"{INCLUDE} beside other keys needs a snippet that is an object: {location}", where)
    return {**siblings, **snippet}
