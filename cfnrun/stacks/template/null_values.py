"""Null values, refused when the template arrives, as the service refuses them.

CloudFormation answers a template holding a ``null`` (a YAML key left empty, ``Properties:`` with nothing under
it, a JSON ``null``) with a ValidationError naming the first one by its path, with no "Template format error:"
before it: ``[/Outputs/MyOutput/Value] 'null' values are not allowed in templates`` (LocalStack's tests recorded
against AWS, api/test_validations; the first-in-document-order choice is inferred). It is checked on the template as
processed (after its transforms), before its sections are read.
"""
from __future__ import annotations

from typing import Any, Iterator, List, Optional, Tuple

from cfnrun.stacks.template.errors import TemplateError


def check_null_values(document: Any) -> None:
    where = first_null(document)
    if where is not None:
        raise TemplateError(f"[{where}] 'null' values are not allowed in templates")


def first_null(document: Any) -> Optional[str]:
    """The path of the first null in document order (keys as written, list items by index); None if there is none."""
    for path, value in _walk(document):
        if value is None:
            return path
    return None


def _walk(document: Any) -> Iterator[Tuple[str, Any]]:
    pending: List[Tuple[str, Any]] = [("", document)]
    while pending:
        path, value = pending.pop()
        if path:
            yield path, value
        if isinstance(value, dict):
            pending.extend(reversed([(f"{path}/{key}", item) for key, item in value.items()]))
        elif isinstance(value, list):
            pending.extend(reversed([(f"{path}/{index}", item) for index, item in enumerate(value)]))
