"""Transforms and functions: every transform a template names, run in the service's order, and the functions it may use.

CloudFormation runs a template's transforms before anything else, as the service orders them
(its "Perform custom processing on CloudFormation templates with template macros" guide): each
``Fn::Transform`` from the most deeply nested outward, those at one place in the order listed,
then the ``Transform`` section in its order. The transforms CloudFormation hosts are macros like
the account's own in that order: ``AWS::Include`` (``includes.py``), ``AWS::Serverless-2016-10-31``
(aws-sam-translator, ``serverless.py``) and ``AWS::LanguageExtensions`` (``Fn::ForEach`` is
expanded in its turn, ``foreach.py``; ``Fn::Length``, ``Fn::ToJsonString``, ``Fn::FindInMap``
with a ``DefaultValue`` and intrinsic functions in ``DeletionPolicy``/``UpdateReplacePolicy``
are worked out where they are used, ``intrinsics.py``, ``policies.py``; it stays in the
processed template). Any other name is one of the account's macros (``macros.py``), run by the
caller's ``MacroRunner``. Without the transform, its functions are unknown to the service too,
and refused with its words.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from cfnrun.stacks.template.declarations import StackTemplate, transform_names
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.foreach import expand_for_each, uses_for_each
from cfnrun.stacks.template.includes import INCLUDE, IncludeReader, include_location, include_sections, included
from cfnrun.stacks.template.intrinsics import (
    CONDITION_FUNCTIONS, SUPPORTED_FUNCTIONS, condition_arguments, find_in_map_arguments, get_att_target, if_arguments, is_function,
    join_arguments, ref_argument, split_arguments, sub_arguments, unsupported_function,
)
from cfnrun.stacks.template.macros import MacroCall, MacroRunner, no_echo_values, not_local, template_parameter_values
from cfnrun.stacks.template.serverless import SERVERLESS, expand_serverless

LANGUAGE_EXTENSIONS = "AWS::LanguageExtensions"
LANGUAGE_EXTENSION_FUNCTIONS = ("Fn::Length", "Fn::ToJsonString")
FOR_EACH = "Fn::ForEach"


class TemplateTransforms:
    """One template's transforms, run in the service's order: ``read_include`` reads an AWS::Include Location,
    ``run_macro`` runs one of the account's macros; without them, those transforms are refused."""

    def __init__(self, parameter_values: Optional[Mapping[str, str]], read_include: Optional[IncludeReader],
                 run_macro: Optional[MacroRunner]) -> None:
        self.parameter_values = parameter_values
        self.read_include = read_include
        self.run_macro = run_macro
        self._values: Dict[str, Any] = {}  # the templateParameterValues of the Fn::Transform calls
        self._secrets: Tuple[str, ...] = ()  # the template's NoEcho parameter values
        self.ran_macros = False  # did one of the account's macros run (the processed template is then theirs)

    def apply(self, document: Mapping[str, Any]) -> Dict[str, Any]:
        """The template with every transform run: ``Fn::Transform`` inner first, then the Transform section in order."""
        declared = document.get("Transform")
        self._values = template_parameter_values(document, self.parameter_values)
        self._secrets = no_echo_values(document, self.parameter_values)
        result: Dict[str, Any] = self._inner(dict(document), "")
        result.pop("Transform", None)
        pending: List[Any] = list(declared) if isinstance(declared, list) else [] if declared is None else [declared]
        transform_names(declared)  # a Transform section that names none is refused in the service's words
        kept: List[Any] = []
        for transform in pending:
            name = transform.get("Name") if isinstance(transform, dict) else transform
            if name == LANGUAGE_EXTENSIONS:
                kept.append(transform)  # its functions are worked out where used: it stays in the processed template
                if uses_for_each(result):
                    result = expand_for_each(result, self.parameter_values)
            elif name == SERVERLESS:
                result = expand_serverless({**result, "Transform": SERVERLESS}, self.parameter_values)
            elif name == INCLUDE:
                read = self._reader(name, "Transform")
                result = include_sections(result, include_location(transform, "Transform"), read)
            else:
                params = (transform.get("Parameters") if isinstance(transform, dict) else None) or {}
                secrets = tuple(dict.fromkeys([*self._secrets, *no_echo_values(result, self.parameter_values)]))
                result = self._macro(MacroCall(str(name), result, params, template_parameter_values(result, self.parameter_values),
                                               "Transform", secrets))
                if not isinstance(result, dict):
                    raise TemplateError(f"Transform {name} returned a fragment that is not a template (an object of sections)",
                                        "Transform")
                result.pop("Transform", None)
        if kept:
            result["Transform"] = kept if isinstance(declared, list) else kept[0]
        return result

    def _inner(self, value: Any, where: str) -> Any:
        if isinstance(value, list):
            return [self._inner(item, f"{where}[{index}]") for index, item in enumerate(value)]
        if not isinstance(value, dict):
            return value
        result: Any = {key: self._inner(item, f"{where}.{key}" if where else str(key)) for key, item in value.items()
                       if key != "Fn::Transform"}
        if "Fn::Transform" not in value:
            return result
        here = f"{where}.Fn::Transform" if where else "Fn::Transform"
        calls = value["Fn::Transform"]
        for call in calls if isinstance(calls, list) else [calls]:
            name = call.get("Name") if isinstance(call, dict) else None
            if not isinstance(name, str):
                raise TemplateError("Template format error: Fn::Transform takes {Name, Parameters}, the transform's name and its "
                                    "parameters", here)
            if name == INCLUDE:
                read = self._reader(name, here)
                result = included(result, include_location(call, here), read, where)
            else:
                params = call.get("Parameters") or {}
                result = self._macro(MacroCall(name, result, params, self._values, here, self._secrets))
        return result

    def _reader(self, name: str, where: str) -> IncludeReader:
        if self.read_include is None:
            raise TemplateError(f"Transform {name} is not supported locally here (no place to read its Location from)", where)
        return self.read_include

    def _macro(self, call: MacroCall) -> Any:
        if self.run_macro is None:
            raise not_local(call.name, call.where)
        self.ran_macros = True
        return self.run_macro(call)


def transforms_called(document: Mapping[str, Any]) -> List[str]:
    """The transforms a template calls (by Transform or Fn::Transform): the account's macros and those CloudFormation
    hosts (AWS::Serverless, AWS::Include, AWS::LanguageExtensions) alike."""
    try:
        named = list(transform_names(document.get("Transform")))
    except TemplateError:
        named = []
    return named + list(_fn_transform_names(document))


def _fn_transform_names(value: Any) -> Iterator[str]:
    if isinstance(value, list):
        for item in value:
            yield from _fn_transform_names(item)
    elif isinstance(value, dict):
        calls = value.get("Fn::Transform")
        for call in calls if isinstance(calls, list) else [] if calls is None else [calls]:
            yield str(call.get("Name") if isinstance(call, dict) else call)
        for key, item in value.items():
            if key != "Fn::Transform":
                yield from _fn_transform_names(item)


def check_transforms(document: Mapping[str, Any]) -> None:
    """Refuse ``Fn::ForEach`` without its transform (the template's transforms have run)."""
    if LANGUAGE_EXTENSIONS in transform_names(document.get("Transform")):
        return
    for section in ("Conditions", "Resources", "Outputs"):
        block = document.get(section)
        for name in block if isinstance(block, dict) else ():
            if isinstance(name, str) and name.startswith(FOR_EACH):
                raise TemplateError(f"{FOR_EACH} needs the {LANGUAGE_EXTENSIONS} transform (Transform: {LANGUAGE_EXTENSIONS})",
                                    f"{section}.{name}")


def check_functions(template: StackTemplate) -> None:
    """Refuse the functions this template uses that do not exist without their transform, or at all."""
    extensions = LANGUAGE_EXTENSIONS in template.transforms
    for where, function, argument in _functions(template.document, ""):
        _check_function(where, function, argument, extensions)
        _check_arguments(where, function, argument, template.conditions)
    # DeletionPolicy/UpdateReplacePolicy given by an intrinsic function need no transform: the service's core language
    # takes them (policies.py works them out)


def _check_function(where: str, function: str, argument: Any, extensions: bool) -> None:
    allowed: Tuple[str, ...] = SUPPORTED_FUNCTIONS if extensions else tuple(
        name for name in SUPPORTED_FUNCTIONS if name not in LANGUAGE_EXTENSION_FUNCTIONS
    )
    if function not in allowed:
        raise unsupported_function(function, allowed).at(where)
    if function == "Fn::FindInMap" and isinstance(argument, list) and len(argument) == 4 and not extensions:
        raise TemplateError(f"Template error: Fn::FindInMap with a DefaultValue needs the {LANGUAGE_EXTENSIONS} transform", where)


def _check_arguments(where: str, function: str, argument: Any, conditions: Mapping[str, Any]) -> None:
    """Arguments the service refuses as the template arrives, whatever the values (LocalStack's tests recorded against
    AWS: an Fn::If naming no declared condition, an Fn::GetAtt of one element, an Fn::Split of something not a list;
    users' reports of ValidateTemplate and CreateStack: a Ref of something not a string, an Fn::Join or Fn::Sub of the
    wrong shape, ``intrinsics.py``), in a resource whose condition is false too (inferred: the shape is the template's)."""
    try:
        if function == "Ref":
            ref_argument(argument)
        if function == "Fn::Join":
            join_arguments(argument)
        if function == "Fn::Sub":
            sub_arguments(argument)
        if function == "Fn::If" and if_arguments(argument)[0] not in conditions:
            raise TemplateError(f"Template error: unresolved condition dependency {argument[0]} in Fn::If")
        if function == "Fn::FindInMap":
            find_in_map_arguments(argument)
        if function == "Fn::GetAtt":
            get_att_target(argument)
        if function == "Fn::Split":
            split_arguments(argument)
        if function in CONDITION_FUNCTIONS:
            condition_arguments(function, argument)
    except TemplateError as error:
        raise error.at(where) from None


def _functions(value: Any, where: str) -> Iterator[Tuple[str, str, Any]]:
    """(where, function, argument) of every intrinsic function call in ``value``, outermost first."""
    if is_function(value):
        [(function, argument)] = value.items()
        yield where, function, argument
    if isinstance(value, dict):
        for key, item in value.items():
            if where == "" and key not in ("Conditions", "Resources", "Outputs"):
                continue  # Metadata, Parameters, Mappings, Rules: not resolved here
            yield from _functions(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _functions(item, f"{where}[{index}]")
