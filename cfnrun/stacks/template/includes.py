"""``AWS::Include``: a template snippet read from a Location and put where the transform stands.

Two places, as the service takes them: the ``Transform`` section (``{Name: AWS::Include,
Parameters: {Location: ...}}``: the snippet's sections join the template's top level), and
``Fn::Transform`` anywhere below (the snippet replaces the ``{"Fn::Transform": ...}`` object, or,
as a key beside others, is merged into the object that holds it). Reading a Location is the
caller's (``IncludeReader``: S3 on the AWS endpoint, or a file); a snippet may not include
another (the service processes one level). Without a reader, ``transforms.py`` refuses the transform.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping

from cfnrun.stacks.template.errors import TemplateError

INCLUDE = "AWS::Include"
IncludeReader = Callable[[str], Any]  # a Location → the snippet, decoded (TemplateError when it cannot be read)


def _include_location(transform: Any, where: str) -> Any:
    if not isinstance(transform, dict) or transform.get("Name") != INCLUDE:
        return None
    location = (transform.get("Parameters") or {}).get("Location")
    if not isinstance(location, str) or not location:
        raise TemplateError(f"{INCLUDE} needs Parameters.Location, the snippet's S3 URI or path", where)
    return location


def uses_include(document: Mapping[str, Any]) -> bool:
    return INCLUDE in repr(document)


def expand_includes(document: Mapping[str, Any], read: IncludeReader) -> Dict[str, Any]:
    """The template with every AWS::Include replaced by its snippet."""
    result: Dict[str, Any] = _expand(dict(document), read, "")
    transforms = result.get("Transform")
    kept: List[Any] = []
    for transform in transforms if isinstance(transforms, list) else [] if transforms is None else [transforms]:
        location = _include_location(transform, "Transform")
        if location is None:
            kept.append(transform)
            continue
        snippet = read(location)
        if not isinstance(snippet, dict):
            raise TemplateError(f"{INCLUDE} at the top level needs a snippet that is an object of sections: {location}", "Transform")
        for section, value in snippet.items():
            if isinstance(value, dict) and isinstance(result.get(section), dict):
                result[section] = {**result[section], **value}
            else:
                result[section] = value
    result.pop("Transform", None)
    if kept:
        result["Transform"] = kept if len(kept) > 1 else kept[0]
    return result


def _expand(value: Any, read: IncludeReader, where: str) -> Any:
    if isinstance(value, dict):
        if "Fn::Transform" in value:
            location = _include_location(value["Fn::Transform"], f"{where}.Fn::Transform" if where else "Fn::Transform")
            if location is not None:
                snippet = read(location)
                rest = {k: v for k, v in value.items() if k != "Fn::Transform"}
                if not rest:
                    return snippet
                if not isinstance(snippet, dict):
                    raise TemplateError(f"{INCLUDE} beside other keys needs a snippet that is an object: {location}", where)
                return {**{k: _expand(v, read, f"{where}.{k}") for k, v in rest.items()}, **snippet}
        return {k: _expand(v, read, f"{where}.{k}" if where else str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(item, read, f"{where}[{index}]") for index, item in enumerate(value)]
    return value
