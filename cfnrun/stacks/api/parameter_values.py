"""A stack's ``Parameters`` as DescribeStacks writes them: each value as given (NoEcho ones masked) and, for the
``AWS::SSM::Parameter::Value<...>`` types, the ``ResolvedValue`` Systems Manager held when the last operation read it."""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from cfnrun.stacks.blueprint import Blueprint
from cfnrun.stacks.records import NO_ECHO_MASK, Stack


def shown_parameter_list(stack: Stack, blueprint: Optional[Blueprint]) -> List[Dict[str, Any]]:
    """DescribeStacks' ``Parameters``."""
    return parameter_list(stack.shown_parameters(), blueprint.resolved_values if blueprint is not None else {}, stack.no_echo)


def parameter_list(shown: Mapping[str, str], resolved: Mapping[str, str], no_echo: Sequence[str]) -> List[Dict[str, Any]]:
    """``Parameters`` of DescribeStacks and DescribeChangeSet: ``shown`` (masked already) with each SSM type's ``ResolvedValue``."""
    members: List[Dict[str, Any]] = []
    for key, value in shown.items():
        member: Dict[str, Any] = {"ParameterKey": key, "ParameterValue": value}
        if key in resolved:
            member["ResolvedValue"] = NO_ECHO_MASK if key in no_echo else resolved[key]
        members.append(member)
    return members
