"""An output whose Value is a list: refused when the stack operation is asked for, as the service refuses it.

An output's value is text. What the service answers CreateStack (and UpdateStack, CreateChangeSet) with when a
Value gives a list, as users quote it:

- a ``Ref`` of a list parameter (``List<AWS::EC2::Subnet::Id>``, ``CommaDelimitedList``) and a ``Fn::GetAtt`` of an
  attribute whose schema type is an array (``AWS::DirectoryService::MicrosoftAD``'s ``DnsIpAddresses``):
  ``Template format error: The Value field of every Outputs member must evaluate to a String.``;
- a ``Fn::FindInMap`` that finds a list: ``... must evaluate to a String and not a List.``, the words for a list
  written in the template itself (``template/declarations.py``).

Inferred, not read: that ``Fn::GetAZs``, ``Fn::Split``, ``Fn::Cidr`` and ``Ref: AWS::NotificationARNs`` (whose
values are lists by the functions' definitions) get the first text; that a ``Fn::If`` is judged by the branch its
condition picks; that an output whose Condition is false is not judged; that any other Value that works out, from
the parameters, mappings and conditions alone, to a list gets the second text. A list only a resource's answer shows
(a custom resource's attribute) is not refused: DescribeStacks shows its items joined with commas.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from cfnrun.stacks.provisioning import AttributeNames, NoProvisioner, Provisioners
from cfnrun.stacks.template.declarations import StackTemplate, is_function
from cfnrun.stacks.template.parameter_types import parameter_type

TYPED_LIST = "Template format error: The Value field of every Outputs member must evaluate to a String."
EVALUATED_LIST = "Template format error: The Value field of every Outputs member must evaluate to a String and not a List."
LIST_FUNCTIONS = ("Fn::GetAZs", "Fn::Split", "Fn::Cidr")
LIST_PSEUDO_PARAMETERS = ("AWS::NotificationARNs",)


def typed_as_list(value: Any, template: StackTemplate, conditions: Mapping[str, bool], provisioners: Provisioners) -> bool:
    """Does ``value`` (an output's Value) give a list by what it is: a list parameter's Ref, a list-typed attribute, a
    function whose answer is a list (the branch its condition picks, for Fn::If)?"""
    if not is_function(value):
        return False
    [(name, argument)] = value.items()
    if name == "Ref":
        declared = template.parameters.get(argument) if isinstance(argument, str) else None
        kind = parameter_type(declared.type) if declared is not None else None
        return (kind is not None and kind.is_list) or argument in LIST_PSEUDO_PARAMETERS
    if name == "Fn::GetAtt":
        return _list_attribute(argument, template, provisioners)
    if name == "Fn::If" and isinstance(argument, list) and len(argument) == 3 and isinstance(argument[0], str):
        return typed_as_list(argument[1] if conditions.get(argument[0], False) else argument[2], template, conditions, provisioners)
    return name in LIST_FUNCTIONS


def _list_attribute(argument: Any, template: StackTemplate, provisioners: Provisioners) -> bool:
    if isinstance(argument, str) and "." in argument:
        argument = argument.split(".", 1)
    if not (isinstance(argument, list) and len(argument) == 2 and all(isinstance(part, str) for part in argument)):
        return False
    logical_id, attribute = argument
    declared = template.resources.get(logical_id)
    if declared is None:
        return False
    try:
        provisioner = provisioners.for_type(declared.type)
    except NoProvisioner:
        return False
    if not isinstance(provisioner, AttributeNames) or provisioner.lacks_attribute(declared.type, attribute):
        return False  # an attribute the type lacks is refused as the operation starts (validation.unsupported_attribute)
    return provisioner.attribute_type(declared.type, attribute) == "array"


def list_output_refusal(
    template: StackTemplate, conditions: Mapping[str, bool], provisioners: Provisioners, worked_out: Mapping[str, Any]
) -> Optional[str]:
    """The service's refusal of the first output (in template order) whose Value is a list, or None. ``worked_out``: each
    output's Value as the parameters, mappings and conditions alone give it (anything else where a resource is read)."""
    for name, output in template.outputs.items():
        if output.condition is not None and not conditions.get(output.condition, False):
            continue
        if typed_as_list(output.value, template, conditions, provisioners):
            return TYPED_LIST
        if isinstance(worked_out.get(name), list):
            return EVALUATED_LIST
    return None
