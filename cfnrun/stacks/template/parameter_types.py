"""The Parameters section's type names, and what each means for a value.

CloudFormation checks AWS-specific types (``AWS::EC2::VPC::Id`` ...) against the account's real
resources; locally there is no such account, so they are strings (lists of strings for
``List<...>``) like ``String``. ``AWS::SSM::Parameter::Value<T>`` is the name of a Systems Manager
parameter whose value the stack uses; the stack engine reads it (from the same endpoint the
handlers use) through the callback it gives ``parameters.resolve_parameters``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

AWS_SPECIFIC_TYPES = (
    "AWS::EC2::AvailabilityZone::Name",
    "AWS::EC2::Image::Id",
    "AWS::EC2::Instance::Id",
    "AWS::EC2::KeyPair::KeyName",
    "AWS::EC2::SecurityGroup::GroupName",
    "AWS::EC2::SecurityGroup::Id",
    "AWS::EC2::Subnet::Id",
    "AWS::EC2::Volume::Id",
    "AWS::EC2::VPC::Id",
    "AWS::Route53::HostedZone::Id",
)
SSM_VALUE_PREFIX, SSM_VALUE_SUFFIX = "AWS::SSM::Parameter::Value<", ">"
_SCALARS = ("String", "Number", "AWS::SSM::Parameter::Name") + AWS_SPECIFIC_TYPES


@dataclass(frozen=True)
class ParameterType:
    """What a declared Type means: a list or one value, numbers or text, read from Systems Manager or given."""

    name: str
    is_list: bool
    is_number: bool
    from_ssm: bool


def parameter_type(name: str) -> Optional[ParameterType]:
    """The meaning of a Parameters Type, or None when CloudFormation has no such type."""
    from_ssm = name.startswith(SSM_VALUE_PREFIX) and name.endswith(SSM_VALUE_SUFFIX)
    inner = name[len(SSM_VALUE_PREFIX):-len(SSM_VALUE_SUFFIX)] if from_ssm else name
    if inner == "CommaDelimitedList":
        return ParameterType(name, is_list=True, is_number=False, from_ssm=from_ssm)
    is_list = inner.startswith("List<") and inner.endswith(">")
    item = inner[len("List<"):-1] if is_list else inner
    if item not in _SCALARS or (from_ssm and item in ("Number", "AWS::SSM::Parameter::Name")):
        return None
    if is_list and (item == "AWS::SSM::Parameter::Name" or (item == "String" and not from_ssm)):
        return None  # List<String> exists only as what a Systems Manager parameter holds
    return ParameterType(name, is_list=is_list, is_number=item == "Number", from_ssm=from_ssm)


def aws_specific_item(name: str) -> Optional[str]:
    """The AWS-specific type (``AWS::EC2::VPC::Id`` ...) whose values a parameter of type ``name`` is given: the type
    itself or a ``List<>`` of it; None for any other type (a Systems Manager parameter holding one included: whether the
    service checks what it holds is not documented)."""
    item = name[len("List<"):-1] if name.startswith("List<") and name.endswith(">") else name
    return item if item in AWS_SPECIFIC_TYPES else None


def is_parameter_type(name: str) -> bool:
    return parameter_type(name) is not None
