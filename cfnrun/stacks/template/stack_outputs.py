"""``Fn::GetStackOutput``: another stack's output, read without an Export (CDK ≥ 2.253's cross-region references).

The argument is ``{StackName, OutputName[, Region, RoleArn]}`` (cfn-lint's schema for the
function: the two first required, each a string or a function giving one). Locally every stack
is in serve's one region and account, so ``Region`` must be that region and ``RoleArn`` is read
and not assumed. What the service answers when the stack or output is missing is not published;
cfnrun words it as DescribeStacks does (``Stack with id X does not exist``) and names the output.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from cfnrun.stacks.template.errors import TemplateError

GET_STACK_OUTPUT = "Fn::GetStackOutput"
KEYS = ("StackName", "OutputName", "Region", "RoleArn")
# A local stack's output by (stack name or id, output name): None when the stack has no such output; KeyError: no such stack.
StackOutputLookup = Callable[[str, str], Optional[str]]


def stack_output_argument(argument: Any, resolve: Callable[[Any, str], Any]) -> Mapping[str, str]:
    """The resolved arguments, checked: StackName and OutputName strings; no other keys."""
    if not isinstance(argument, dict) or not {"StackName", "OutputName"} <= set(argument) or set(argument) - set(KEYS):
        raise TemplateError(f"Template error: {GET_STACK_OUTPUT} takes an object with StackName and OutputName "
                            "(and optionally Region, RoleArn)")
    values = {key: resolve(value, key) for key, value in argument.items()}
    for key, value in values.items():
        if not isinstance(value, str) or not value:
            raise TemplateError(f"Template error: {GET_STACK_OUTPUT}'s {key} must be a non-empty string")
    return values


def read_stack_output(arguments: Mapping[str, str], lookup: StackOutputLookup, region: str) -> str:
    """The output's value, or the TemplateError that says which stack or output is missing."""
    wanted_region = arguments.get("Region")
    if wanted_region is not None and wanted_region != region:
        raise TemplateError(f"Template error: {GET_STACK_OUTPUT} of region {wanted_region}: cfnrun's local stacks are all "
                            f"in {region}")
    name, output = arguments["StackName"], arguments["OutputName"]
    try:
        value = lookup(name, output)
    except KeyError:
        raise TemplateError(f"Stack with id {name} does not exist") from None
    if value is None:
        raise TemplateError(f"Template error: stack {name} has no output {output} ({GET_STACK_OUTPUT})")
    return value
