"""A stack's template body → its checked declarations, or the ValidationError the service would answer.

The order is the service's: the text must decode (JSON or YAML, ``model/template_text.py``),
then have a template's structure, then use only transforms and functions that exist (here:
that run locally), then name only what it declares. Parameter values, conditions and the
dependency graph depend on the operation and come later (``parameters``, ``conditions``,
``dependencies``); lint (``lint.py``) is the engine's separate step, as it reads the text.
"""
from __future__ import annotations

from cfnrun.model.template_text import TemplateDecodeError, decode_template
from cfnrun.stacks.template.declarations import StackTemplate, parse_template
from cfnrun.stacks.template.dependencies import check_references
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.limits import check_quotas
from cfnrun.stacks.template.literal_functions import check_literal_functions
from cfnrun.stacks.template.transforms import check_functions, check_transforms


def load_stack_template(body: str) -> StackTemplate:
    """The template of a CreateStack/UpdateStack/CreateChangeSet/ValidateTemplate call, checked; TemplateError if not."""
    try:
        document = decode_template(body)
    except TemplateDecodeError as error:
        where = f" (line {error.line}, column {error.column})" if error.line is not None else ""
        raise TemplateError(f"Template format error: {error.syntax} not well-formed. {error.problem}{where}") from None
    if isinstance(document, dict):
        check_quotas(document)
        check_transforms(document)
    template = parse_template(document)
    check_functions(template)
    check_references(template)
    check_literal_functions(template.document)
    return template
