"""The document a Guard hook's rules are evaluated against, built as the Hooks user guide documents it.

The guide ("Write Guard rules to evaluate resources for Guard Hooks") gives every target a
``HookContext`` (who is asking, about what, at which invocation point, in which change set). For a
RESOURCE or CLOUD_CONTROL target the resource is under ``Resources.<LogicalId>`` with its ``Type``
and ``Properties`` (the template's own shape), and its current properties under
``Previous.<LogicalId>``, so a rule written for a template (``Resources.*[ Type == 'AWS::S3::Bucket' ]``)
reads the same paths here. The guide's syntax block names those two keys ``ResourceType`` and
``ResourceProperties``, but its example input, its example rules and AWS's Guard hook workshop all use
``Type`` and ``Properties``: cfnrun follows them (inferred). A create has no ``Previous``; a delete's
``Properties`` are empty (the guide) and ``Previous`` holds what the resource has now (inferred from the
Lambda hooks chapter: the guide's Guard page says it is empty too).

For a STACK or CHANGE_SET target the proposed template's own top-level keys (``Resources``,
``Outputs``...) sit beside ``HookContext``, and ``Previous`` is the last deployed template, whole; a
change set adds ``Changes``, its changed resources as a Lambda hook's payload lists them. A stack's
delete has no template. Documents from the hook's ``Options.InputParams`` add top-level keys of their
own; a key named twice (by two documents, or by one and the hook's input) is refused rather than
silently overwritten.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple

import yaml

from cfnrun.model.errors import CfnrunError
from cfnrun.model.hook_protocol import HOOK_TYPE_VERSION
from cfnrun.model.template_text import decode_template
from cfnrun.stacks.hooks import CHANGE_SET_TARGET, INVOCATION_POINT, STACK_TARGET, HookedOperation, managed_hook_model

INPUT_KEYS = ("HookContext", "Resources", "Previous", "Changes")  # the top-level keys the hook's own input may hold


class GuardInputError(CfnrunError):
    """Input parameters that cannot be merged into the hook's input."""


def _resource(type_name: str, properties: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    return {"Type": type_name, "Properties": properties or {}}


def _template(text: Optional[str]) -> Dict[str, Any]:
    """A template (its JSON or YAML text, as a STACK or CHANGE_SET target's document holds it) as data; none on a stack's delete."""
    try:
        template = decode_template(text) if text else {}
    except ValueError:  # a template the operation took is read again here: only a broken one would fail
        return {}
    return template if isinstance(template, dict) else {}


def _hook_context(target: HookedOperation, hook_type: str, target_name: str, target_type: str) -> Dict[str, Any]:
    return {
        "AWSAccountID": target.stack.account_id,
        "StackId": target.stack.stack_id,
        "HookTypeName": hook_type,
        "HookTypeVersion": HOOK_TYPE_VERSION,
        "InvocationPoint": f"{target.action}_{INVOCATION_POINT}",
        "TargetName": target_name,
        "TargetType": target_type,
        "TargetLogicalId": target.logical_id,
        "ChangeSetId": target.change_set_id or "",  # empty unless a change set started the operation (the guide's example)
    }


def _stack_level_input(target: HookedOperation, hook_type: str) -> Dict[str, Any]:
    """A STACK or CHANGE_SET target: the proposed template at the top level, the last deployed one under ``Previous``,
    and a change set's ``Changes``. ``TargetName`` is the stack's name (the guide's field descriptions)."""
    model = managed_hook_model(target) or {}
    template = _template(model.get("template"))
    document: Dict[str, Any] = dict(template)
    document["HookContext"] = _hook_context(target, hook_type, target.stack.stack_name, target.operation)
    previous = model.get("previousTemplate") if target.operation == STACK_TARGET else target.previous_template
    document["Previous"] = _template(previous)
    if target.operation == CHANGE_SET_TARGET:
        document["Changes"] = list(model.get("changedResources") or [])
    return document


def guard_input(target: HookedOperation, hook_type: str) -> Dict[str, Any]:
    """What a Guard hook named ``hook_type`` evaluates for this operation (a resource's, a stack's or a change set's)."""
    if target.model is not None:
        return _stack_level_input(target, hook_type)
    deleting = target.action == "DELETE"
    document: Dict[str, Any] = {
        "HookContext": _hook_context(target, hook_type, target.type_name, "RESOURCE"),
        "Resources": {target.logical_id: _resource(target.type_name, None if deleting else target.properties)},
    }
    previous = target.properties if deleting else target.previous_properties
    if target.action != "CREATE" and previous is not None:
        document["Previous"] = {target.logical_id: _resource(target.type_name, previous)}
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
