"""CAPABILITY_IAM and CAPABILITY_NAMED_IAM: which resources of a template need them, and what a call that did not acknowledge them is told.

As botocore's CreateStack ``Capabilities`` documentation lists them: the eight IAM types below need either
capability; one given a custom name (its name property set) needs CAPABILITY_NAMED_IAM, which covers the
unnamed ones too. What is not acknowledged is refused with InsufficientCapabilitiesException
``Requires capabilities : [CAPABILITY_IAM]`` (or ``[CAPABILITY_NAMED_IAM]``); ValidateTemplate and
GetTemplateSummary name the capability and the types that need it (``CapabilitiesReason``).
The rule reads the resources as declared: a resource whose Condition is false still counts.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection, Iterable, List, Mapping, Optional, Tuple

CAPABILITY_IAM = "CAPABILITY_IAM"
CAPABILITY_NAMED_IAM = "CAPABILITY_NAMED_IAM"

# The types that affect permissions, each with the property that gives it a custom name (None: it has no such name;
# AccessKey's UserName and UserToGroupAddition's GroupName name another resource, not this one).
IAM_TYPES: Mapping[str, Optional[str]] = {
    "AWS::IAM::AccessKey": None,
    "AWS::IAM::Group": "GroupName",
    "AWS::IAM::InstanceProfile": "InstanceProfileName",
    "AWS::IAM::ManagedPolicy": "ManagedPolicyName",
    "AWS::IAM::Policy": None,
    "AWS::IAM::Role": "RoleName",
    "AWS::IAM::User": "UserName",
    "AWS::IAM::UserToGroupAddition": None,
}


@dataclass(frozen=True)
class IamAcknowledgement:
    """What a template asks the caller to acknowledge: ``capability`` (CAPABILITY_IAM, or CAPABILITY_NAMED_IAM when one
    is named) because of ``types`` (in template order, each once)."""

    capability: str
    types: Tuple[str, ...]

    @property
    def reason(self) -> str:
        """ValidateTemplate's and GetTemplateSummary's CapabilitiesReason."""
        return f"The following resource(s) require capabilities: [{', '.join(self.types)}]"

    def missing(self, acknowledged: Collection[str]) -> Optional[str]:
        """The capability the call lacks, or None when what it acknowledged covers the template."""
        if CAPABILITY_NAMED_IAM in acknowledged or self.capability in acknowledged:
            return None
        return self.capability


def iam_acknowledgement(resources: Iterable[Tuple[str, Mapping[str, Any]]]) -> Optional[IamAcknowledgement]:
    """What the resources (type and Properties of each, in template order) need acknowledged; None when they touch no IAM."""
    types: List[str] = []
    named = False
    for type_name, properties in resources:
        if type_name not in IAM_TYPES:
            continue
        if type_name not in types:
            types.append(type_name)
        name_property = IAM_TYPES[type_name]
        named = named or (name_property is not None and isinstance(properties, Mapping) and properties.get(name_property) is not None)
    if not types:
        return None
    return IamAcknowledgement(CAPABILITY_NAMED_IAM if named else CAPABILITY_IAM, tuple(types))


def insufficient_capabilities(capability: str) -> str:
    """The service's InsufficientCapabilitiesException message (and a FAILED change set's StatusReason)."""
    return f"Requires capabilities : [{capability}]"
