"""Pseudo parameters: the values CloudFormation predefines for every stack (``AWS::Region``, ``AWS::StackId`` ...).

The partition and URL suffix follow from the region as they do on AWS (``cn-*`` is ``aws-cn`` and
``amazonaws.com.cn``, ``us-gov-*`` is ``aws-us-gov``), so a template that builds ARNs with
``${AWS::Partition}`` gets the ARNs the handlers' endpoint expects. ``AWS::NoValue`` is not a
value but the instruction to drop the property or list item: ``NO_VALUE``, which
``intrinsics.resolve`` removes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Tuple


class _NoValue:
    """``Ref: AWS::NoValue``: the property or list item is removed."""

    def __repr__(self) -> str:
        return "AWS::NoValue"


NO_VALUE: Any = _NoValue()

PSEUDO_PARAMETERS = (
    "AWS::AccountId", "AWS::NotificationARNs", "AWS::NoValue", "AWS::Partition", "AWS::Region", "AWS::StackId",
    "AWS::StackName", "AWS::URLSuffix",
)


@dataclass(frozen=True)
class PseudoParameters:
    """One stack's pseudo parameter values."""

    account_id: str
    region: str
    stack_id: str
    stack_name: str
    notification_arns: Tuple[str, ...] = ()

    @property
    def partition(self) -> str:
        return partition_of(self.region)

    @property
    def url_suffix(self) -> str:
        return "amazonaws.com.cn" if self.region.startswith("cn-") else "amazonaws.com"

    def value(self, name: str) -> Any:
        """What ``Ref`` of the pseudo parameter ``name`` gives; KeyError when it is none."""
        values: Dict[str, Any] = {
            "AWS::AccountId": self.account_id,
            "AWS::NotificationARNs": list(self.notification_arns),
            "AWS::NoValue": NO_VALUE,
            "AWS::Partition": self.partition,
            "AWS::Region": self.region,
            "AWS::StackId": self.stack_id,
            "AWS::StackName": self.stack_name,
            "AWS::URLSuffix": self.url_suffix,
        }
        return values[name]


def partition_of(region: str) -> str:
    """The AWS partition a region belongs to."""
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def stack_id(region: str, account_id: str, stack_name: str, unique: str) -> str:
    """A stack's ARN as CloudFormation writes it (``AWS::StackId``); ``unique`` is its UUID part."""
    return f"arn:{partition_of(region)}:cloudformation:{region}:{account_id}:stack/{stack_name}/{unique}"
