"""Fn::FindInMap and Fn::Select on literal arguments, checked when the template arrives, as the service checks them.

The service refuses ``!FindInMap [Map, Key, Missing]`` ("Template error: Unable to get mapping for
Map::Key::Missing") and ``!Select [5, [a, b]]`` at CreateStack/UpdateStack/CreateChangeSet; the
stack engine resolves functions only when a resource runs. A call whose arguments hold no other
function has one value whatever the stack's parameters and resources, so it is resolved here,
with the template's mappings, and its error is the service's ValidationError.
"""
from __future__ import annotations

from typing import Any, Iterator, List, Mapping, Tuple

from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.intrinsics import is_function, resolve

CHECKED = ("Fn::FindInMap", "Fn::Select")


class _LiteralContext:
    """A ResolveContext for arguments without functions: only the template's mappings are ever read."""

    def __init__(self, mappings: Mapping[str, Any]) -> None:
        self.mappings = mappings
        self.parameters: Mapping[str, Any] = {}
        self.conditions: Mapping[str, bool] = {}

    def __getattr__(self, name: str) -> Any:  # ref, get_att, pseudo parameters: never reached for literal arguments
        raise TemplateError(f"Template error: {name} is not available while checking literal arguments")


def check_literal_functions(document: Mapping[str, Any]) -> None:
    """Resolve every Fn::FindInMap and Fn::Select in Resources and Outputs whose arguments are literals."""
    mappings = document.get("Mappings")
    context = _LiteralContext(mappings if isinstance(mappings, dict) else {})
    for where, call in _literal_calls(document):
        try:
            resolve(call, context, where)  # type: ignore[arg-type]
        except TemplateError as error:
            raise error.at(where) from None


def _literal_calls(document: Mapping[str, Any]) -> Iterator[Tuple[str, Any]]:
    pending: List[Tuple[str, Any]] = [(section, document.get(section)) for section in ("Resources", "Outputs")]
    while pending:
        where, value = pending.pop()
        if is_function(value):
            [(name, argument)] = value.items()
            if name in CHECKED and not _has_function(argument):
                yield where, value
                continue
        if isinstance(value, dict):
            pending.extend((f"{where}.{key}", item) for key, item in value.items())
        elif isinstance(value, list):
            pending.extend((f"{where}[{index}]", item) for index, item in enumerate(value))


def _has_function(value: Any) -> bool:
    if is_function(value):
        return True
    if isinstance(value, dict):
        return any(_has_function(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_function(item) for item in value)
    return False
