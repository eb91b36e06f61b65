"""The account's own macros: where a template calls one, and what the call carries.

A macro is named in the ``Transform`` section (``Transform: MyMacro``, or ``{Name, Parameters}``;
its fragment is the whole template but the Transform section, its ``params`` empty) or by
``Fn::Transform: {Name, Parameters}`` below (its fragment is the object holding the call, without
the call; its ``params`` the Parameters as written, unresolved). The fragment it answers replaces
what it was given. Running one is the caller's (``MacroRunner``: the app invokes the macro's
function, ``app/stacks/macros.py``); this module only says what each call is. Every call also
carries ``templateParameterValues``: each parameter the template declares at that point, with
the value the operation gives it, else its Default (the service resolves them first).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from cfnrun.stacks.template.errors import TemplateError

MACRO_TYPE = "AWS::CloudFormation::Macro"


@dataclass(frozen=True)
class MacroCall:
    """One macro's call: its name, the fragment it gets, its ``params`` and the template's parameter values."""

    name: str
    fragment: Any
    params: Mapping[str, Any]
    template_parameter_values: Mapping[str, Any]
    where: str = ""
    secrets: Tuple[str, ...] = ()  # the values of its NoEcho parameters: what the call's console lines mask

    def key(self) -> str:
        """The same call, made again, has the same key (the request id, new each time, is not in it)."""
        parts = [self.name, self.fragment, self.params, self.template_parameter_values]
        try:
            return json.dumps(parts, sort_keys=True, default=str)
        except TypeError:  # keys of mixed types (YAML's 1 beside "a") do not sort: the same reading writes them in the same order
            return json.dumps(parts, default=str)


class TransformFailed(TemplateError):
    """A macro that failed (its function's error, a failure status, no such macro): the service reports it in the operation
    (a FAILED change set, a rolled-back CreateStack) rather than refusing the API call."""

    def at(self, where: str) -> "TemplateError":
        return self if self.where else TransformFailed(self.message, where)


MacroRunner = Callable[[MacroCall], Any]  # a call → the fragment the macro answers; TemplateError in the service's words


def template_parameter_values(document: Mapping[str, Any], given: Optional[Mapping[str, str]]) -> Dict[str, Any]:
    """What a macro gets as ``templateParameterValues``: each declared parameter's value (given, else its Default)."""
    declared = document.get("Parameters")
    values: Dict[str, Any] = {}
    for name, parameter in declared.items() if isinstance(declared, dict) else ():
        value = (given or {}).get(name, parameter.get("Default") if isinstance(parameter, dict) else None)
        if value is None:
            continue
        kind = str(parameter.get("Type", "")) if isinstance(parameter, dict) else ""
        values[name] = [v.strip() for v in str(value).split(",")] if kind.startswith("List<") or kind == "CommaDelimitedList" else value
    return values


def no_echo_values(document: Mapping[str, Any], given: Optional[Mapping[str, str]]) -> Tuple[str, ...]:
    """The values (given, else their Default) of the parameters ``document`` declares NoEcho."""
    declared = document.get("Parameters")
    values = [
        (given or {}).get(name, parameter.get("Default"))
        for name, parameter in (declared.items() if isinstance(declared, dict) else ())
        if isinstance(parameter, dict) and str(parameter.get("NoEcho", "")).lower() == "true"
    ]
    return tuple(str(value) for value in values if value not in (None, ""))


def not_local(name: str, where: str) -> TemplateError:
    """A macro named where no macro can run (no stack engine: a summary of the text alone)."""
    return TemplateError(f"Transform {name} is not supported locally here: macros run when a stack operation "
                         f"(CreateStack, UpdateStack, CreateChangeSet) reads the template", where)
