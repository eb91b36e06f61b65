"""Transforms and functions: what a template may use locally, refused before anything runs when it is more.

CloudFormation runs a template's transforms (macros) before anything else. Locally
``AWS::LanguageExtensions`` works: ``Fn::Length``, ``Fn::ToJsonString``,
``Fn::FindInMap`` with a ``DefaultValue`` and intrinsic functions in
``DeletionPolicy``/``UpdateReplacePolicy`` are worked out where they are used
(``intrinsics.py``, ``policies.py``); ``Fn::ForEach`` rewrites the template into many
resources before it is read (``foreach.py``). ``AWS::Serverless-2016-10-31`` is expanded by
aws-sam-translator (``serverless.py``). Every other transform is refused: ``AWS::Include``
(``Fn::Transform``) and the account's own macros, each with the transform named. Without the transform, its functions are unknown to the service too, and refused with
its words.
"""
from __future__ import annotations

from typing import Any, Iterator, Mapping, Tuple

from cfnrun.stacks.template.declarations import StackTemplate, transform_names
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.intrinsics import SUPPORTED_FUNCTIONS, is_function, unsupported_function
from cfnrun.stacks.template.serverless import SERVERLESS

LANGUAGE_EXTENSIONS = "AWS::LanguageExtensions"
SUPPORTED_TRANSFORMS = (LANGUAGE_EXTENSIONS, SERVERLESS)
LANGUAGE_EXTENSION_FUNCTIONS = ("Fn::Length", "Fn::ToJsonString")
FOR_EACH = "Fn::ForEach"


def check_transforms(document: Mapping[str, Any]) -> None:
    """Refuse, before the template is read further, transforms that cannot run locally (the service runs them first)."""
    for name in transform_names(document.get("Transform")):
        if name not in SUPPORTED_TRANSFORMS:
            raise TemplateError(f"Transform {name} is not supported locally: cfnrun runs {', '.join(SUPPORTED_TRANSFORMS)} "
                                "only (macros need the account)",
                                "Transform")
    if LANGUAGE_EXTENSIONS in transform_names(document.get("Transform")):
        return  # its Fn::ForEach loops are expanded next (foreach.py)
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
    # DeletionPolicy/UpdateReplacePolicy given by an intrinsic function need no transform: the service's core language
    # takes them (policies.py works them out)


def _check_function(where: str, function: str, argument: Any, extensions: bool) -> None:
    if function == "Fn::Transform":
        name = argument.get("Name") if isinstance(argument, dict) else argument
        raise TemplateError(f"Transform {name} is not supported locally (Fn::Transform runs macros, which need the account)", where)
    allowed: Tuple[str, ...] = SUPPORTED_FUNCTIONS if extensions else tuple(
        name for name in SUPPORTED_FUNCTIONS if name not in LANGUAGE_EXTENSION_FUNCTIONS
    )
    if function not in allowed:
        raise unsupported_function(function, allowed).at(where)
    if function == "Fn::FindInMap" and isinstance(argument, list) and len(argument) == 4 and not extensions:
        raise TemplateError(f"Template error: Fn::FindInMap with a DefaultValue needs the {LANGUAGE_EXTENSIONS} transform", where)


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
