"""The document a Guard hook's rules are evaluated against, built as the Hooks user guide documents it.

For a RESOURCE target the service hands Guard a ``HookContext`` (who is asking, about which
resource, at which invocation point), the resource under ``Resources.<LogicalId>`` with its
``ResourceType`` and ``ResourceProperties``, and on an update its previous properties under
``Previous.<LogicalId>``. For a STACK or CHANGE_SET target every resource of the template is under
``Resources`` in that shape, and ``Previous`` holds the previous template's (a stack update or
delete) or the changed resources' current properties (a change set). Rules written for the
service read the same paths here. Documents from
the hook's ``Options.InputParams`` add top-level keys of their own; a key named twice (by two
documents, or by one and the hook's input) is refused rather than silently overwritten.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Optional, Sequence, Tuple

import yaml

from cfnrun.model.errors import CfnrunError
from cfnrun.model.hook_protocol import HOOK_TYPE_VERSION
from cfnrun.stacks.hooks import INVOCATION_POINT, HookedOperation

INPUT_KEYS = ("HookContext", "Resources", "Previous")  # the top-level keys the hook's own input may hold


class GuardInputError(CfnrunError):
    """Input parameters that cannot be merged into the hook's input."""


def _resource(type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
    return {"ResourceType": type_name, "ResourceProperties": properties}


def _template_resources(text: Optional[str]) -> Dict[str, Any]:
    """A template's resources (JSON text, as a STACK or CHANGE_SET hook gets it) in the Guard input's shape."""
    try:
        template = json.loads(text) if text else {}
    except ValueError:
        return {}
    resources = template.get("Resources") if isinstance(template, dict) else None
    return {
        logical_id: _resource(str(declared.get("Type")), declared.get("Properties") or {})
        for logical_id, declared in (resources or {}).items()
        if isinstance(declared, dict)
    }


def _stack_level_input(target: HookedOperation, hook_type: str) -> Dict[str, Any]:
    """A STACK or CHANGE_SET target: every resource of the template under ``Resources``; under ``Previous``, a stack's
    previous template's, or what a change set changes as it stands now."""
    model = target.model or {}
    context: Dict[str, Any] = {
        "AWSAccountID": target.stack.account_id,
        "StackId": target.stack.stack_id,
        "HookTypeName": hook_type,
        "HookTypeVersion": HOOK_TYPE_VERSION,
        "InvocationPoint": f"{target.action}_{INVOCATION_POINT}",
        "TargetName": target.operation,
        "TargetType": target.operation,
        "TargetLogicalId": target.logical_id,
    }
    if target.change_set_id:
        context["ChangeSetId"] = target.change_set_id
    document: Dict[str, Any] = {"HookContext": context, "Resources": _template_resources(model.get("template"))}
    previous = _template_resources(model.get("previousTemplate"))
    for change in model.get("changedResources") or []:
        before = json.loads(change["beforeContext"]).get("Properties") if change.get("beforeContext") else None
        if isinstance(before, dict):
            previous[change["logicalResourceId"]] = _resource(change["resourceType"], before)
    if previous:
        document["Previous"] = previous
    return document


def guard_input(target: HookedOperation, hook_type: str) -> Dict[str, Any]:
    """What a Guard hook named ``hook_type`` evaluates for this operation (a resource's, a stack's or a change set's)."""
    if target.model is not None:
        return _stack_level_input(target, hook_type)
    document: Dict[str, Any] = {
        "HookContext": {
            "AWSAccountID": target.stack.account_id,
            "StackId": target.stack.stack_id,
            "HookTypeName": hook_type,
            "HookTypeVersion": HOOK_TYPE_VERSION,
            "InvocationPoint": f"{target.action}_{INVOCATION_POINT}",
            "TargetName": target.type_name,
            "TargetType": "RESOURCE",
            "TargetLogicalId": target.logical_id,
            **({"ChangeSetId": target.change_set_id} if target.change_set_id else {}),  # executing a change set
        },
        "Resources": {target.logical_id: _resource(target.type_name, target.properties)},
    }
    if target.action == "UPDATE" and target.previous_properties is not None:
        document["Previous"] = {target.logical_id: _resource(target.type_name, target.previous_properties)}
    return document


def with_input_params(document: Dict[str, Any], params: Sequence[Tuple[str, Any]]) -> Dict[str, Any]:
    """``document`` with each (location, parsed document) of ``Options.InputParams`` added at the top level."""
    merged = dict(document)
    named = {key: "the hook's input" for key in document}
    for location, extra in params:
        if not isinstance(extra, dict):
            raise GuardInputError(f"input parameters {location} must hold an object (a mapping of names to values), not {type(extra).__name__}")
        for key, value in extra.items():
            if key in named:
                raise GuardInputError(f"input parameters {location} set {key}, already set by {named[key]}")
            named[key] = f"input parameters {location}"
            merged[key] = value
    return merged


def read_input_params(text: str, location: str) -> Any:
    """An input parameters file (YAML or JSON, as Guard reads them) as data; GuardInputError when it is neither."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:  # its own text quotes the file's lines: only where, and what kind of mistake
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None)
        kind = f" ({problem})" if isinstance(problem, str) and problem else ""
        raise GuardInputError(f"input parameters {location} are neither JSON nor YAML{where}{kind}") from None
