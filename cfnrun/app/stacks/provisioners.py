"""Which provisioner a stack's resource goes to, by its type."""
from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Optional

from cfnrun.stacks.template.declarations import is_custom_resource
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
        aws_type_exists: Callable[[str], bool] = lambda type_name: True,
    ) -> None:
        self.aws_type_exists = aws_type_exists
        self.user_types = user_types
        self.served_types = served_types
        self.aws_types = aws_types
        self.custom_resources = custom_resources
        self.own_types = own_types or {}

    def unrecognized(self, type_names: Iterable[str]) -> List[str]:
        """The AWS::* types among ``type_names`` the service does not have (a misspelled ``AWS::S3::Buckett``), each once:
        the service refuses the template at the call. A type of another namespace that is not served fails its resource
        when it comes to it (``for_type``), with what cfnrun serves."""
        unknown: List[str] = []
        for type_name in type_names:
            if type_name.startswith("AWS::") and type_name not in self.own_types and type_name not in unknown:
                if not is_custom_resource(type_name) and not self.aws_type_exists(type_name):
                    unknown.append(type_name)
        return unknown

    def for_type(self, type_name: str) -> Provisioner:
        if type_name in self.own_types:
            return self.own_types[type_name]
        if is_custom_resource(type_name):
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
