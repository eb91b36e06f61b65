"""Names for AWS::* resources declared without one, made the way CloudFormation makes them, where the endpoint needs one.

The service names such a resource itself: a prefix (the stack's name, or the type's own, such as
``CFN`` for Systems Manager parameters), the logical id and a random suffix of 12 letters and
digits, cut to the type's length limit by shortening the logical id (the rule of
cloudformation-cli's identifier helper, which the AWS providers use). moto's CloudFormation
leaves some types unnamed and breaks on them (an ``AWS::SSM::Parameter`` without ``Name``), so
those get their name here before they go to the endpoint, and keep it on every update.
"""
from __future__ import annotations

import random
import string
from dataclasses import dataclass
from typing import Any, Dict, Optional

GENERATED_NAME_KEY = "cfnrun:generatedName"  # where a resource's generated name is kept, in its record
SUFFIX_LENGTH = 12
_ALPHABET = string.ascii_letters + string.digits


@dataclass(frozen=True)
class NameRule:
    property_name: str
    prefix: Optional[str]  # None: the stack's name
    max_length: int


NAME_RULES: Dict[str, NameRule] = {
    "AWS::SSM::Parameter": NameRule("Name", "CFN", 40),  # what the SSM provider generates (CFN-Logical-random, 40 at most)
}


def generated_name(prefix: str, logical_id: str, max_length: int) -> str:
    """``prefix-logicalId-SUFFIX``, the logical id shortened so the whole fits ``max_length``."""
    suffix = "".join(random.SystemRandom().choice(_ALPHABET) for _ in range(SUFFIX_LENGTH))
    room = max(0, max_length - len(prefix) - len(suffix) - 2)
    return f"{prefix}-{logical_id[:room]}-{suffix}"


def named(type_name: str, stack_name: str, logical_id: str, properties: Dict[str, Any], kept: Optional[str]) -> Optional[str]:
    """The name to give a resource declared without one (``kept``: the one it was given before), or None when it needs none."""
    rule = NAME_RULES.get(type_name)
    if rule is None or properties.get(rule.property_name) is not None:
        return None
    return kept or generated_name(rule.prefix or stack_name, logical_id, rule.max_length)


def with_name(type_name: str, properties: Dict[str, Any], name: Optional[str]) -> Dict[str, Any]:
    if name is None:
        return properties
    return {**properties, NAME_RULES[type_name].property_name: name}
