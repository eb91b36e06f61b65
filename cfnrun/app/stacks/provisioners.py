"""Which provisioner a stack's resource goes to, by its type."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional

from cfnrun.app.stacks.custom_resources import is_custom
from cfnrun.stacks.provisioning import Provisioner, NoProvisioner


class TypeRouter:
    """``Provisioners``: custom resources to the served functions, the types cfnrun itself implements (the hook resources)
    to theirs, AWS::* to the AWS endpoint, the rest to the served types."""

    def __init__(
        self,
        user_types: Provisioner,
        served_types: Callable[[], List[str]],
        aws_types: Provisioner,
        custom_resources: Provisioner,
        own_types: Optional[Dict[str, Provisioner]] = None,
    ) -> None:
        self.user_types = user_types
        self.served_types = served_types
        self.aws_types = aws_types
        self.custom_resources = custom_resources
        self.own_types = own_types or {}

    def for_type(self, type_name: str) -> Provisioner:
        if type_name in self.own_types:
            return self.own_types[type_name]
        if is_custom(type_name):
            return self.custom_resources
        served = self.served_types()
        if type_name in served:
            return self.user_types
        if type_name.startswith("AWS::"):
            return self.aws_types
        raise NoProvisioner(
            f"Template format error: Unrecognized resource types: [{type_name}] (cfnrun serves {', '.join(sorted(served)) or 'no types'}; "
            "add a provider with --provider DIR)"
        )
