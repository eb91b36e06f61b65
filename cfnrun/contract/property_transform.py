"""A schema's ``propertyTransform``: how the service normalizes a requested value, as JSONata.

A resource may return a value in the form the service keeps (``$lowercase(BucketName)``, a name
with a suffix added), not as it was requested. The schema says so in ``propertyTransform``: a
property pointer mapped to a JSONata expression evaluated on the requested model. The service
evaluates them with JSONata, so cfnrun does too (jsonata-python): the requested model,
transformed property by property in the order the schema lists them, is what a returned model
is compared with. An expression that does not evaluate leaves that property as requested and
is reported with its pointer.
"""
from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional, Tuple

from cfnrun.model.schema import ResourceSchema, pointer_to_path

Problem = Tuple[str, str]  # (pointer into the model, what went wrong)


def transformed(requested: Dict[str, Any], schema: ResourceSchema) -> Tuple[Optional[Dict[str, Any]], List[Problem]]:
    """The requested model as the schema's ``propertyTransform`` maps it (None when the schema has none), and what would not evaluate."""
    transforms = schema.document.get("propertyTransform")
    if not isinstance(transforms, dict) or not transforms:
        return None, []
    import jsonata  # only for a schema with transforms, once a returned model differs from the request

    model = copy.deepcopy(requested)
    problems: List[Problem] = []
    for pointer, expression in transforms.items():
        path = pointer_to_path(pointer) if isinstance(pointer, str) else []
        if not path or "*" in path or not isinstance(expression, str):
            continue  # an array element or a malformed entry: nothing to place the value at
        try:
            value = jsonata.Jsonata(expression).evaluate(model)
        except Exception as error:  # noqa: B902 - jsonata's errors are RuntimeErrors of many kinds: reported, never raised
            where = "".join(f"/{part}" for part in path)  # in the model, as the other differences are
            problems.append((where, f"propertyTransform at {pointer} ({expression!r}) does not evaluate, so the value is compared as requested: {error}"))
            continue
        if value is not None:
            _place(model, path, value)
    return model, problems


def _place(model: Dict[str, Any], path: List[str], value: Any) -> None:
    target: Any = model
    for part in path[:-1]:
        if not isinstance(target.get(part), dict):
            return  # the property's parent is not in the request: nothing was asked for there
        target = target[part]
    if path[-1] in target:  # only what was requested is compared, so only that is transformed
        target[path[-1]] = value
