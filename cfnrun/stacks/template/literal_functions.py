"""Fn::FindInMap and Fn::Select checked when the call arrives, before anything runs, as the service checks them.

The service refuses ``!FindInMap [Map, Key, Missing]`` ("Template error: Unable to get mapping for
Map::Key::Missing") and ``!Select [5, [a, b]]`` at CreateStack/UpdateStack/CreateChangeSet; the
stack engine resolves functions only when a resource runs. Two checks close the gap:

- ``check_literal_functions``, as the template is read: a call whose arguments hold no other
  function has one value whatever the stack's parameters and resources, so it is resolved with the
  template's mappings alone (ValidateTemplate and GetTemplateSummary run this one too).
- ``check_parameter_functions``, once the operation's parameter values and conditions are known:
  an ``Fn::FindInMap`` whose keys come from parameters and pseudo parameters (not from a resource,
  an import or another stack) is resolved with them. The service refuses a key a parameter names
  that the mapping lacks at CreateChangeSet, with the same text (LocalStack's test of a mapping
  key from a parameter, recorded against AWS: engine/test_mappings.snapshot.json,
  ``test_mapping_with_nonexisting_key``). Inferred, not read: a resource or output whose
  condition is false, and the branch of an ``Fn::If`` not taken, are not looked up.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from cfnrun.stacks.template.declarations import transform_names
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.intrinsics import is_function, resolve
from cfnrun.stacks.template.parameters import ParameterValue
from cfnrun.stacks.template.pseudo import NO_VALUE, PseudoParameters
from cfnrun.stacks.template.transforms import LANGUAGE_EXTENSION_FUNCTIONS, LANGUAGE_EXTENSIONS

CHECKED = ("Fn::FindInMap", "Fn::Select")


class _NeedsTheStack(Exception):
    """The value reads a resource, an export or another stack: it is known only as the operation runs."""


class _EarlyContext:
    """A ResolveContext of what is known before anything runs: the mappings, and the operation's parameter values,
    pseudo parameters and conditions when they are known; whatever else a value reads raises _NeedsTheStack."""

    def __init__(
        self, mappings: Any, parameters: Optional[Mapping[str, ParameterValue]] = None,
        pseudo_parameters: Optional[PseudoParameters] = None, conditions: Optional[Mapping[str, bool]] = None,
    ) -> None:
        self.mappings = mappings if isinstance(mappings, dict) else {}
        self.parameters: Mapping[str, ParameterValue] = parameters or {}
        self._pseudo = pseudo_parameters
        self.conditions: Mapping[str, bool] = conditions or {}

    @property
    def pseudo_parameters(self) -> PseudoParameters:
        if self._pseudo is None:
            raise _NeedsTheStack
        return self._pseudo

    def __getattr__(self, name: str) -> Any:  # ref, get_att, import_value, availability_zones, stack_output
        raise _NeedsTheStack


def check_literal_functions(document: Mapping[str, Any]) -> None:
    """Resolve every Fn::FindInMap and Fn::Select in Resources and Outputs whose arguments are literals."""
    _check(_EarlyContext(document.get("Mappings")), _calls(document, CHECKED, literal_only=True))


def check_parameter_functions(
    document: Mapping[str, Any], parameters: Mapping[str, ParameterValue], pseudo_parameters: PseudoParameters,
    conditions: Mapping[str, bool],
) -> None:
    """Resolve every Fn::FindInMap of the resources and outputs whose condition holds that reads nothing but
    parameters, pseudo parameters and mappings, with this operation's values."""
    context = _EarlyContext(document.get("Mappings"), parameters, pseudo_parameters, conditions)
    _check(context, _calls(document, ("Fn::FindInMap",), literal_only=False, conditions=conditions))


def _check(context: _EarlyContext, calls: Iterator[Tuple[str, Any]]) -> None:
    for where, call in calls:
        try:
            resolve(call, context, where)  # type: ignore[arg-type]
        except _NeedsTheStack:
            continue
        except TemplateError as error:
            raise error.at(where) from None


def _calls(
    document: Mapping[str, Any], names: Tuple[str, ...], literal_only: bool, conditions: Optional[Mapping[str, bool]] = None,
) -> Iterator[Tuple[str, Any]]:
    """Each call of ``names`` in Resources and Outputs (``literal_only``: whose arguments hold no function). With
    ``conditions``, an entry whose condition is false and an ``Fn::If`` branch not taken are left out."""
    pending: List[Tuple[str, Any]] = []
    for section in ("Resources", "Outputs"):
        entries = document.get(section)
        for name, entry in (entries.items() if isinstance(entries, dict) else ()):
            condition = entry.get("Condition") if isinstance(entry, dict) else None
            if conditions is not None and isinstance(condition, str) and not conditions.get(condition, True):
                continue
            pending.append((f"{section}.{name}", entry))
    while pending:
        where, value = pending.pop()
        if is_function(value):
            [(name, argument)] = value.items()
            if name in names and not (literal_only and _has_function(argument)):
                yield where, value
                continue
            taken = _branch_taken(argument, conditions) if name == "Fn::If" else None
            if taken is not None:
                pending.append((f"{where}.Fn::If[{taken}]", argument[taken]))
                continue
        if isinstance(value, dict):
            pending.extend((f"{where}.{key}", item) for key, item in value.items())
        elif isinstance(value, list):
            pending.extend((f"{where}[{index}]", item) for index, item in enumerate(value))


def _branch_taken(argument: Any, conditions: Optional[Mapping[str, bool]]) -> Optional[int]:
    """The index of the Fn::If argument its condition selects, when the conditions are known."""
    if conditions is None or not (isinstance(argument, list) and len(argument) == 3 and isinstance(argument[0], str)):
        return None
    holds = conditions.get(argument[0])
    return None if holds is None else (1 if holds else 2)


def _has_function(value: Any) -> bool:
    if is_function(value):
        return True
    if isinstance(value, dict):
        return any(_has_function(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_function(item) for item in value)
    return False


def processed_language_extensions(
    document: Mapping[str, Any], parameters: Mapping[str, ParameterValue], pseudo_parameters: PseudoParameters,
    conditions: Mapping[str, bool],
) -> Dict[str, Any]:
    """GetTemplate's ``Processed`` stage of a template under AWS::LanguageExtensions, as the service shows it: each
    Fn::Length, Fn::ToJsonString and Fn::FindInMap with a DefaultValue of the resources and outputs worked out with
    the operation's values, and the transform gone from the Transform section (LanguageExtensions' processed templates
    as LocalStack's tests recorded them against AWS, api/test_transformers: ``Value: 3`` for ``Fn::Length: !Ref
    QueueList``, no ``Transform`` left). One that reads a resource cannot be worked out before the stack runs: it is
    left, and so is the transform (inferred: what the service shows then is not recorded)."""
    if LANGUAGE_EXTENSIONS not in transform_names(document.get("Transform")):
        return dict(document)
    context = _EarlyContext(document.get("Mappings"), parameters, pseudo_parameters, conditions)
    left: List[str] = []

    def worked(value: Any, where: str) -> Any:
        if is_function(value):
            [(name, argument)] = value.items()
            if name in LANGUAGE_EXTENSION_FUNCTIONS or name == "Fn::FindInMap" and isinstance(argument, list) and len(argument) == 4:
                try:
                    result = resolve(value, context, where)  # type: ignore[arg-type]
                except (_NeedsTheStack, TemplateError):
                    result = NO_VALUE
                if result is not NO_VALUE:
                    return result
                left.append(where)
                return value
        if isinstance(value, dict):
            return {key: worked(item, f"{where}.{key}") for key, item in value.items()}
        if isinstance(value, list):
            return [worked(item, f"{where}[{index}]") for index, item in enumerate(value)]
        return value

    processed = {key: worked(value, key) if key in ("Resources", "Outputs") else value for key, value in document.items()}
    if not left:
        declared = document.get("Transform")
        others = [item for item in (declared if isinstance(declared, list) else [declared])
                  if (item.get("Name") if isinstance(item, dict) else item) != LANGUAGE_EXTENSIONS]
        if others:
            processed["Transform"] = others if isinstance(declared, list) else others[0]
        else:
            processed.pop("Transform", None)
    return processed
