"""A stack's ``Parameters`` as DescribeStacks writes them: each value as given (NoEcho ones masked) and, for the
``AWS::SSM::Parameter::Value<...>`` types, the ``ResolvedValue`` Systems Manager held when the last operation read it."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from cfnrun.stacks.blueprint import Blueprint
from cfnrun.stacks.records import NO_ECHO_MASK, Stack


def shown_parameter_list(stack: Stack, blueprint: Optional[Blueprint]) -> List[Dict[str, Any]]:
    resolved = blueprint.resolved_values if blueprint is not None else {}
    shown: List[Dict[str, Any]] = []
    for key, value in stack.shown_parameters().items():
        member: Dict[str, Any] = {"ParameterKey": key, "ParameterValue": value}
        if key in resolved:
            member["ResolvedValue"] = NO_ECHO_MASK if key in stack.no_echo else resolved[key]
        shown.append(member)
    return shown
