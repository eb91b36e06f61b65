"""The one error a template's semantics raise: the service's ValidationError text, and where it happened.

``message`` is worded as CloudFormation words it ("Template format error: ...", "Template error:
...", "Parameters: [X] must have values"), so the stack engine can answer with it unchanged;
``where`` names the place (``Resources.Bucket.Properties.Name``, ``Outputs.Url``) for the
stack's events and the user, who would otherwise have to search the template for it.
"""
from __future__ import annotations


class TemplateError(ValueError):
    """A template, or the parameters given to it, that CloudFormation would refuse."""

    def __init__(self, message: str, where: str = "") -> None:
        self.message = message
        self.where = where
        super().__init__(f"{message} (at {where})" if where else message)

    def at(self, where: str) -> "TemplateError":
        """This error placed at ``where``, unless it already names a place (the innermost place wins)."""
        return self if self.where else TemplateError(self.message, where)


def format_error(problem: str) -> TemplateError:
    """A structural fault, as the service prefixes it."""
    return TemplateError(f"Template format error: {problem}")
