"""The Availability Zones ``Fn::GetAZs`` gives when no AWS endpoint is there to ask: a region's zones as AWS lists them.

The service asks EC2 (DescribeAvailabilityZones, and DescribeSubnets for the default subnets) in
the caller's account; an account sees the zones of a region under letters of its own, and newer
accounts see fewer of the oldest regions' zones, so this table is what a typical account lists
(``docs/reference/templates.md`` says so). A region it does not know gets ``a``, ``b`` and ``c``.
"""
from __future__ import annotations

from typing import Dict, Tuple

_ZONE_LETTERS: Dict[str, str] = {
    "us-east-1": "abcdef", "us-east-2": "abc", "us-west-1": "ac", "us-west-2": "abcd",
    "ca-central-1": "abd", "ca-west-1": "abc", "sa-east-1": "abc", "mx-central-1": "abc",
    "eu-west-1": "abc", "eu-west-2": "abc", "eu-west-3": "abc", "eu-central-1": "abc", "eu-central-2": "abc",
    "eu-north-1": "abc", "eu-south-1": "abc", "eu-south-2": "abc",
    "ap-northeast-1": "acd", "ap-northeast-2": "abcd", "ap-northeast-3": "abc", "ap-east-1": "abc",
    "ap-south-1": "abc", "ap-south-2": "abc", "ap-southeast-1": "abc", "ap-southeast-2": "abc",
    "ap-southeast-3": "abc", "ap-southeast-4": "abc", "ap-southeast-5": "abc", "ap-southeast-7": "abc",
    "me-south-1": "abc", "me-central-1": "abc", "il-central-1": "abc", "af-south-1": "abc",
    "cn-north-1": "abd", "cn-northwest-1": "abc", "us-gov-west-1": "abc", "us-gov-east-1": "abc",
}
UNKNOWN_REGION_LETTERS = "abc"


def listed_zones(region: str) -> Tuple[str, ...]:
    """``region``'s Availability Zones, in alphabetical order, as a typical account lists them."""
    return tuple(f"{region}{letter}" for letter in _ZONE_LETTERS.get(region, UNKNOWN_REGION_LETTERS))
