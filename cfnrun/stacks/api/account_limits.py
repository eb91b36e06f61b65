"""``DescribeAccountLimits``: the account's CloudFormation quotas, as a new account has them.

StackLimit 2000 and StackOutputsLimit 200 are the defaults the user guide's quotas page ("Understand CloudFormation
quotas") documents for stacks per account and Region and for outputs per template; ConcurrentResourcesLimit 2500 is the
value aws-cli's example output of describe-account-limits shows (the quotas page names no such quota). The names and
their order are botocore's model's (``LimitName``). cfnrun enforces none of them.
"""
from __future__ import annotations

from typing import Any, Dict

ACCOUNT_LIMITS = (("StackLimit", 2000), ("StackOutputsLimit", 200), ("ConcurrentResourcesLimit", 2500))


async def describe_account_limits(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"AccountLimits": [{"Name": name, "Value": value} for name, value in ACCOUNT_LIMITS]}
