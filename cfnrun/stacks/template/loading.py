"""A stack's template body → its checked declarations, or the ValidationError the service would answer.

The order is the service's: the text must decode (JSON or YAML, ``model/template_text.py``),
then have a template's structure, then use only transforms and functions that exist (here:
that run locally), then name only what it declares. Parameter values, conditions and the
dependency graph depend on the operation and come later (``parameters``, ``conditions``,
``dependencies``); lint (``lint.py``) is the engine's separate step, as it reads the text.
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Dict, Mapping, Optional

from cfnrun.model.template_text import TemplateDecodeError, decode_template
from cfnrun.stacks.template.declarations import StackTemplate, parse_template
from cfnrun.stacks.template.dependencies import check_references
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.includes import IncludeReader
from cfnrun.stacks.template.limits import check_quotas
from cfnrun.stacks.template.literal_functions import check_literal_functions
from cfnrun.stacks.template.modules import ModuleInfo, expand_modules_with_info, uses_modules
from cfnrun.stacks.template.macros import MacroRunner
from cfnrun.stacks.template.transforms import TemplateTransforms, check_functions, check_transforms
from cfnrun.stacks.template.null_values import check_null_values


def load_stack_template(
    body: str, parameter_values: Optional[Mapping[str, str]] = None, module_fragments: Optional[Mapping[str, Mapping[str, Any]]] = None,
    read_include: Optional[IncludeReader] = None, run_macro: Optional[MacroRunner] = None,
) -> StackTemplate:
    """The template of a CreateStack/UpdateStack/CreateChangeSet/ValidateTemplate call, checked; TemplateError if not.

    ``parameter_values`` (the operation's, by name) are what ``Fn::ForEach`` collections that
    refer to parameters iterate over; a parameter not given has its Default. ``module_fragments``
    (by ``...::MODULE`` type name) expand the template's modules, after its loops. ``read_include``
    reads an ``AWS::Include`` Location and ``run_macro`` runs one of the account's macros; without them, those
    transforms are refused. Every transform runs before anything else is read, in the service's order (``transforms.py``).
    """
    module_info: Dict[str, ModuleInfo] = {}
    macro_output: Optional[Dict[str, Any]] = None
    try:
        document = decode_template(body)
    except TemplateDecodeError as error:
        where = f" (line {error.line}, column {error.column})" if error.line is not None else ""
        raise TemplateError(f"Template format error: {error.syntax} not well-formed. {error.problem}{where}") from None
    if isinstance(document, dict):
        transforms = TemplateTransforms(parameter_values, read_include, run_macro)
        document = transforms.apply(document)
        macro_output = document if transforms.ran_macros else None
    if not isinstance(document, dict):  # a body, or a macro's answer, that is no object: refused in the service's words
        parse_template(document)
    check_transforms(document)
    if module_fragments is not None and uses_modules(document):
        document, module_info = expand_modules_with_info(document, module_fragments)
    check_null_values(document)
    check_quotas(document)  # on the template as processed (loops and modules expanded), as the service counts
    template = parse_template(document)
    if module_info or macro_output is not None:
        template = replace(template, module_info=module_info, macro_output=macro_output)
    check_functions(template)
    check_references(template)
    check_literal_functions(template.document)
    return template


def processed_body(body: str, processed: Mapping[str, Any]) -> str:
    """GetTemplate's ``Processed`` stage: the template as read (``StackTemplate.document``) in JSON when its
    transforms or modules rewrote it, else the body as sent."""
    try:
        unchanged = decode_template(body) == processed
    except TemplateDecodeError:
        unchanged = False
    return body if unchanged else json.dumps(processed, indent=2)
