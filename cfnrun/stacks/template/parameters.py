"""The values a stack's parameters take: given, defaulted or kept from the previous operation, then checked.

Checked as the service checks them, in its order and words: names that the template does not
declare, then parameters left without a value, then each value against its declaration's type
and constraints. ``AllowedPattern`` must match the whole value and is an ECMA-262 regular
expression, as the service reads it (``model/patterns.py``). A ``NoEcho`` parameter's value is
kept for Ref but shown as ``****`` (``NO_ECHO_MASK``) wherever a value leaves the process
(DescribeStacks, events, history, ``--state``: ``Stack.masked``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from cfnrun.model.patterns import PatternTimeout, ecma_find
from cfnrun.stacks.template.declarations import ParameterDeclaration
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.parameter_types import ParameterType, parameter_type

NO_ECHO_MASK = "****"

ParameterValue = Union[str, List[str]]
SsmParameterReader = Callable[[str], str]
"""Reads the value of a Systems Manager parameter by name (the stack engine's; raises TemplateError when absent)."""


@dataclass(frozen=True)
class GivenParameter:
    """One member of a CreateStack/UpdateStack ``Parameters`` list."""

    key: str
    value: Optional[str] = None
    use_previous_value: bool = False


@dataclass(frozen=True)
class ResolvedParameter:
    """A parameter's value for this operation. ``value`` is as given (an SSM type: the parameter's name)."""

    key: str
    value: str
    resolved: ParameterValue
    no_echo: bool = False
    resolved_value: Optional[str] = None  # SSM types: what Systems Manager held (DescribeStacks' ResolvedValue)

    @property
    def shown_value(self) -> str:
        """The value as DescribeStacks, GetTemplateSummary and events show it."""
        return NO_ECHO_MASK if self.no_echo else self.value


def resolve_parameters(
    declarations: Mapping[str, ParameterDeclaration],
    given: Sequence[GivenParameter],
    previous: Optional[Mapping[str, str]] = None,
    ssm_parameter: Optional[SsmParameterReader] = None,
) -> Dict[str, ResolvedParameter]:
    """Every declared parameter's value, or the service's ValidationError text as a TemplateError.

    ``previous`` holds the values of the stack's last operation (by key, unmasked) for
    ``UsePreviousValue``; ``ssm_parameter`` reads ``AWS::SSM::Parameter::Value<...>`` parameters.
    """
    refuse_unknown_keys(declarations, [parameter.key for parameter in given])
    values: Dict[str, str] = {}
    for parameter in given:
        values[parameter.key] = _given_value(parameter, previous or {})
    refuse_missing_values(declarations, values)
    for name, declared in declarations.items():
        if name not in values and declared.default is not None:
            values[name] = declared.default
    return {name: _checked(declared, values[name], ssm_parameter) for name, declared in declarations.items()}


def refuse_unknown_keys(declarations: Mapping[str, ParameterDeclaration], keys: Iterable[str]) -> None:
    """The service's refusal of keys the template does not declare."""
    unknown = [key for key in keys if key not in declarations]
    if unknown:
        raise TemplateError(f"Parameters: [{', '.join(unknown)}] do not exist in the template")


def refuse_missing_values(declarations: Mapping[str, ParameterDeclaration], valued: Iterable[str]) -> None:
    """The service's refusal of declared parameters with no value: not among ``valued`` and without a Default."""
    given = set(valued)
    missing = [name for name, declared in declarations.items() if name not in given and declared.default is None]
    if missing:
        raise TemplateError(f"Parameters: [{', '.join(missing)}] must have values")


def parameter_values(parameters: Mapping[str, ResolvedParameter]) -> Dict[str, ParameterValue]:
    """What ``Ref`` gives for each parameter."""
    return {name: parameter.resolved for name, parameter in parameters.items()}


def _given_value(parameter: GivenParameter, previous: Mapping[str, str]) -> str:
    if not parameter.use_previous_value:
        if parameter.value is None:
            raise TemplateError(f"Invalid input for parameter key {parameter.key}. Need to specify either usePreviousValue as true or a value for the parameter")
        return parameter.value
    if parameter.value is not None:
        raise TemplateError(f"Invalid input for parameter key {parameter.key}. Cannot specify usePreviousValue as true and non empty value for a parameter")
    if parameter.key not in previous:
        raise TemplateError(f"Invalid input for parameter key {parameter.key}. Cannot specify usePreviousValue as true for a parameter key not in the previous template")
    return previous[parameter.key]


def _checked(declared: ParameterDeclaration, value: str, ssm_parameter: Optional[SsmParameterReader]) -> ResolvedParameter:
    meaning = parameter_type(declared.type)
    assert meaning is not None, "declarations.py admits declared types only"
    resolved_value: Optional[str] = None
    text = value
    if meaning.from_ssm:
        if ssm_parameter is None:
            raise TemplateError(
                f"Parameter '{declared.name}' of type {declared.type} is read from Systems Manager: start serve with --moto or --aws-endpoint URL"
            )
        resolved_value = text = ssm_parameter(value)
    items = [item.strip() for item in text.split(",")] if meaning.is_list else [text]
    if meaning.is_list and text == "":
        items = []
    for item in items:
        _check_item(declared, meaning, item)
    return ResolvedParameter(
        key=declared.name,
        value=value,
        resolved=items if meaning.is_list else text,
        no_echo=declared.no_echo,
        resolved_value=resolved_value,
    )


def _check_item(declared: ParameterDeclaration, meaning: ParameterType, item: str) -> None:
    name = declared.name

    def refuse(problem: str) -> TemplateError:
        if declared.constraint_description:
            return TemplateError(f"Parameter '{name}' failed to satisfy constraint: {declared.constraint_description}")
        return TemplateError(f"Parameter '{name}' {problem}")

    if meaning.is_number or declared.min_value is not None or declared.max_value is not None:
        number = _number(item)
        if number is None:
            raise TemplateError(f"Parameter '{name}' must be a number")
        if declared.min_value is not None and number < declared.min_value:
            raise refuse(f"must be a number not less than {_shown(declared.min_value)}")
        if declared.max_value is not None and number > declared.max_value:
            raise refuse(f"must be a number not greater than {_shown(declared.max_value)}")
    if declared.allowed_values and item not in declared.allowed_values:
        raise refuse("must be one of AllowedValues")
    if declared.allowed_pattern is not None:
        try:
            matched = ecma_find(f"^(?:{declared.allowed_pattern})$", item)  # the whole value, as the service matches it
        except PatternTimeout as stopped:
            raise TemplateError(f"Parameter '{name}' could not be checked against its AllowedPattern: {stopped}") from None
        if matched is None:
            raise TemplateError(f"Template format error: AllowedPattern of parameter '{name}' is not a regular expression: {declared.allowed_pattern}")
        if not matched:
            raise refuse(f"must match pattern {declared.allowed_pattern}")
    if declared.min_length is not None and len(item) < declared.min_length:
        raise refuse(f"must contain at least {declared.min_length} characters")
    if declared.max_length is not None and len(item) > declared.max_length:
        raise refuse(f"must contain at most {declared.max_length} characters")


def _number(text: str) -> Optional[float]:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None


def _shown(limit: float) -> str:
    return str(int(limit)) if limit.is_integer() else str(limit)
