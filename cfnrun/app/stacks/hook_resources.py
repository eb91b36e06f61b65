"""``AWS::CloudFormation::GuardHook`` and ``AWS::CloudFormation::LambdaHook`` resources: a stack that declares one
activates a hook for the stacks that follow, as in an account.

Creating the resource adds the hook to the serve's ``HookGate`` under its ``Alias`` (its type name),
updating it replaces its configuration, deleting it removes it. The properties both kinds share
(HookStatus, TargetOperations, FailureMode, TargetFilters, StackFilters) become the hook's
``HookConfiguration``; what runs the hook is each kind's own (``HookKind.build``).
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Protocol

from cfnrun.app.stacks.hook_gate import Hook, HookGate
from cfnrun.model.hook_configuration import HookConfiguration, HookConfigurationError, parse_hook_configuration
from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, Replacement, ResourceWork, property_problem

SHARED = ("HookStatus", "TargetOperations", "FailureMode", "TargetFilters", "StackFilters")


class HookKind(Protocol):
    """One kind of hook declared as a resource (Guard, Lambda)."""

    def problem(self, logical_id: str, properties: Dict[str, Any]) -> Optional[str]:
        """Why these properties cannot make this kind of hook (checked before anything runs), or None."""

    async def build(self, alias: str, properties: Dict[str, Any], configuration: HookConfiguration) -> Hook:
        """The hook these properties declare; ProvisioningFailed when it cannot be made (rules that do not parse...)."""


def hook_configuration(properties: Dict[str, Any]) -> HookConfiguration:
    """The shared properties as the service's HookConfiguration (a hook resource is ENABLED unless it says DISABLED)."""
    section: Dict[str, Any] = {"HookInvocationStatus": properties.get("HookStatus", "ENABLED")}
    for name in SHARED[1:]:
        if name in properties:
            section[name] = properties[name]
    return parse_hook_configuration({"CloudFormationConfiguration": {"HookConfiguration": section}})


def hook_arn(region: str, account_id: str, alias: str) -> str:
    return f"arn:aws:cloudformation:{region}:{account_id}:type/hook/{alias.replace('::', '-')}"


class HookResources:
    """The ``Provisioner`` of the hook-declaring resource types, by type name."""

    def __init__(self, gate: HookGate, kinds: Dict[str, HookKind]) -> None:
        self.gate = gate
        self.kinds = kinds

    def validate(self, type_name: str, logical_id: str, properties: Dict[str, Any]) -> Optional[str]:
        alias = properties.get("Alias")
        if not isinstance(alias, str) or alias.count("::") != 2:
            return property_problem(logical_id, "#/Alias: a hook's Alias is Name::Space::Hook")
        try:
            hook_configuration(properties)
        except HookConfigurationError as error:
            return property_problem(logical_id, f"#: {error}")
        return self.kinds[type_name].problem(logical_id, properties)

    def shown(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        return properties

    def replacement(self, type_name: str, property_path: str) -> Replacement:
        return Replacement.ALWAYS if property_path == "Alias" else Replacement.NEVER

    async def create(self, work: ResourceWork) -> Provisioned:
        alias = str(work.properties["Alias"])
        if alias in self.gate.hooks:
            raise ProvisioningFailed(f"a hook named {alias} is already active on this serve")
        return await self._activate(work, alias)

    async def update(self, work: ResourceWork) -> Provisioned:
        return await self._activate(work, str(work.properties["Alias"]))

    async def delete(self, work: ResourceWork) -> None:
        alias = (work.properties or {}).get("Alias")
        if isinstance(alias, str):
            self.gate.remove(alias)

    async def _activate(self, work: ResourceWork, alias: str) -> Provisioned:
        try:
            configuration = hook_configuration(work.properties)
        except HookConfigurationError as error:
            raise ProvisioningFailed(f"Invalid hook configuration: {error}") from None
        hook = await self.kinds[work.type_name].build(alias, work.properties, configuration)
        self.gate.add(hook)
        arn = hook_arn(work.stack.region, work.stack.account_id, alias)
        return Provisioned(arn, arn, {"HookArn": arn}, None)
