"""A hook's configuration as SetTypeConfiguration sets it, and whether it applies to one target.

The shape is the Hooks user guide's ``CloudFormationConfiguration.HookConfiguration``:
``HookInvocationStatus`` (ENABLED | DISABLED; the older ``TargetStacks`` ALL | NONE is read as
the same), ``TargetOperations`` (STACK, RESOURCE, CHANGE_SET, CLOUD_CONTROL; RESOURCE when not
given), ``FailureMode`` (FAIL | WARN), ``Properties`` (the hook's own typeConfiguration),
``TargetFilters`` (``Actions``, ``InvocationPoints``, ``TargetNames``, or a ``Targets`` list of
exact combinations) and ``StackFilters`` (``FilteringCriteria`` ALL | ANY over ``StackNames`` and
``StackRoles``, each with ``Include`` and ``Exclude``; an exclusion always wins). Cloud Control
operations ignore stack filters, as the service does.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from cfnrun.model.errors import CfnrunError

TARGET_OPERATIONS = ("STACK", "RESOURCE", "CHANGE_SET", "CLOUD_CONTROL")
ACTIONS = ("CREATE", "UPDATE", "DELETE")
INVOCATION_POINTS = ("PRE_PROVISION",)


class HookConfigurationError(CfnrunError):
    """A configuration SetTypeConfiguration refuses (the service's CFNRegistryException)."""


@dataclass(frozen=True)
class NameFilter:
    include: Tuple[str, ...] = ()
    exclude: Tuple[str, ...] = ()

    def matches(self, value: Optional[str]) -> bool:
        """An exclusion wins; names may carry the wildcards * and ?, as stack filters allow."""
        if value is not None and _named(value, self.exclude):
            return False
        return not self.include or _named(value, self.include)


@dataclass(frozen=True)
class HookConfiguration:
    enabled: bool = True
    target_operations: Tuple[str, ...] = ("RESOURCE",)
    failure_mode: str = "FAIL"
    properties: Dict[str, Any] = field(default_factory=dict)
    actions: Tuple[str, ...] = ACTIONS
    invocation_points: Tuple[str, ...] = INVOCATION_POINTS
    target_names: Tuple[str, ...] = ()  # empty: every target the hook declares
    targets: Tuple[Tuple[str, str, str], ...] = ()  # (TargetName, Action, InvocationPoint): exact combinations, when given
    stack_names: Optional[NameFilter] = None
    stack_roles: Optional[NameFilter] = None
    filtering_criteria: str = "ALL"

    def applies(
        self, operation: str, action: str, target_name: Optional[str], stack_name: Optional[str], stack_role: Optional[str] = None
    ) -> bool:
        """Does this hook run for ``action`` (CREATE, UPDATE, DELETE) of ``target_name`` in ``operation`` (RESOURCE, ...)?"""
        if not self.enabled or operation not in self.target_operations:
            return False
        if not self._targets(action, target_name):
            return False
        return operation == "CLOUD_CONTROL" or self._stacks(stack_name, stack_role)

    def _targets(self, action: str, target_name: Optional[str]) -> bool:
        if self.targets:
            return any(
                action == wanted_action and point in self.invocation_points and _named(target_name, (name,))
                for name, wanted_action, point in self.targets
            )
        return action in self.actions and (not self.target_names or _named(target_name, self.target_names))

    def _stacks(self, stack_name: Optional[str], stack_role: Optional[str]) -> bool:
        checks = [f.matches(value) for f, value in ((self.stack_names, stack_name), (self.stack_roles, stack_role)) if f is not None]
        if not checks:
            return True
        return all(checks) if self.filtering_criteria == "ALL" else any(checks)


def _named(target_name: Optional[str], patterns: Sequence[str]) -> bool:
    return target_name is not None and any(fnmatch.fnmatchcase(target_name, pattern) for pattern in patterns)


def _strings(value: Any, where: str, allowed: Optional[Sequence[str]] = None) -> Tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise HookConfigurationError(f"{where} must be a list of strings")
    if allowed is not None:
        wrong = [item for item in value if item not in allowed]
        if wrong:
            raise HookConfigurationError(f"{where}: {', '.join(wrong)} is not one of {', '.join(allowed)}")
    return tuple(value)


def _choice(section: Dict[str, Any], key: str, allowed: Sequence[str], default: str) -> str:
    value = section.get(key, default)
    if value not in allowed:
        raise HookConfigurationError(f"HookConfiguration.{key} must be one of {', '.join(allowed)}, not {value!r}")
    return str(value)


def _name_filter(value: Any, where: str) -> Optional[NameFilter]:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise HookConfigurationError(f"{where} must be an object with Include and/or Exclude")
    return NameFilter(_strings(value.get("Include", []), f"{where}.Include"), _strings(value.get("Exclude", []), f"{where}.Exclude"))


def parse_hook_configuration(document: Any) -> HookConfiguration:
    """The configuration in a SetTypeConfiguration ``Configuration`` document; HookConfigurationError says what is wrong."""
    section = document.get("CloudFormationConfiguration", {}).get("HookConfiguration") if isinstance(document, dict) else None
    if not isinstance(section, dict):
        raise HookConfigurationError(
            'a hook\'s configuration is {"CloudFormationConfiguration": {"HookConfiguration": {...}}}: HookConfiguration is missing'
        )
    if "HookInvocationStatus" in section:
        enabled = _choice(section, "HookInvocationStatus", ("ENABLED", "DISABLED"), "ENABLED") == "ENABLED"
    else:
        enabled = _choice(section, "TargetStacks", ("ALL", "NONE"), "NONE") == "ALL"
    properties = section.get("Properties", {})
    if not isinstance(properties, dict):
        raise HookConfigurationError("HookConfiguration.Properties must be an object")
    filters = section.get("TargetFilters") or {}
    if not isinstance(filters, dict):
        raise HookConfigurationError("HookConfiguration.TargetFilters must be an object")
    lists = [key for key in ("TargetNames", "Actions", "InvocationPoints") if key in filters]
    if "Targets" in filters and lists:  # the Hooks user guide's target filters: one form or the other, never both
        raise HookConfigurationError(
            f"TargetFilters cannot have both Targets and {', '.join(lists)}: give each target's TargetName, Action and InvocationPoint in Targets"
        )
    targets: List[Tuple[str, str, str]] = []
    for index, target in enumerate(filters.get("Targets") or []):
        if not isinstance(target, dict) or not all(isinstance(target.get(k), str) for k in ("TargetName", "Action")):
            raise HookConfigurationError(f"TargetFilters.Targets[{index}] needs TargetName and Action")
        targets.append((target["TargetName"], target["Action"], target.get("InvocationPoint", "PRE_PROVISION")))
    stack_filters = section.get("StackFilters")
    if stack_filters is not None and not isinstance(stack_filters, dict):
        raise HookConfigurationError("HookConfiguration.StackFilters must be an object")
    stack_filters = stack_filters or {}
    names = _name_filter(stack_filters.get("StackNames"), "StackFilters.StackNames")
    roles = _name_filter(stack_filters.get("StackRoles"), "StackFilters.StackRoles")
    if stack_filters and names is None and roles is None:
        raise HookConfigurationError("StackFilters needs StackNames or StackRoles")
    return HookConfiguration(
        enabled=enabled,
        target_operations=_strings(section.get("TargetOperations", ["RESOURCE"]), "TargetOperations", TARGET_OPERATIONS),
        failure_mode=_choice(section, "FailureMode", ("FAIL", "WARN"), "FAIL"),
        properties=properties,
        actions=_strings(filters.get("Actions", list(ACTIONS)), "TargetFilters.Actions", ACTIONS),
        invocation_points=_strings(filters.get("InvocationPoints", list(INVOCATION_POINTS)), "TargetFilters.InvocationPoints", INVOCATION_POINTS),
        target_names=_strings(filters.get("TargetNames", []), "TargetFilters.TargetNames"),
        targets=tuple(targets),
        stack_names=names,
        stack_roles=roles,
        filtering_criteria=_choice(stack_filters, "FilteringCriteria", ("ALL", "ANY"), "ALL") if stack_filters else "ALL",
    )
