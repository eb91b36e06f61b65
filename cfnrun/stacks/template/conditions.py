"""The Conditions section worked out: each condition's truth for this operation's parameters.

Conditions are evaluated before any resource exists, so they may use parameters, pseudo
parameters, mappings and each other — never a resource (the service's "Cannot reference
resources in the Conditions block"). A condition that needs itself, directly or through others,
is refused with the conditions of the cycle named.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Mapping

from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.intrinsics import CONDITION_FUNCTIONS, resolve
from cfnrun.stacks.template.parameters import ParameterValue
from cfnrun.stacks.template.pseudo import PseudoParameters


def evaluate_conditions(
    conditions: Mapping[str, Any],
    parameters: Mapping[str, ParameterValue],
    pseudo_parameters: PseudoParameters,
    mappings: Mapping[str, Mapping[str, Mapping[str, Any]]],
) -> Dict[str, bool]:
    """Every condition's value; a TemplateError naming the condition when one cannot be evaluated."""
    scope = _ConditionScope(conditions, parameters, pseudo_parameters, mappings)
    return {name: scope.conditions[name] for name in conditions}


def values_scope(
    parameters: Mapping[str, ParameterValue], pseudo_parameters: PseudoParameters,
    mappings: Mapping[str, Mapping[str, Mapping[str, Any]]], block: str,
) -> "_ConditionScope":
    """A ResolveContext of parameters, pseudo parameters and mappings only, for another section that may not read a
    resource (``block``: its name in the refusal, as ``Rules``) and declares no conditions."""
    return _ConditionScope({}, parameters, pseudo_parameters, mappings, block)


class _LazyConditions(Mapping[str, bool]):
    """Conditions evaluated when first asked for, so that a condition may name any other, in any order."""

    def __init__(self, scope: "_ConditionScope") -> None:
        self._scope = scope
        self._values: Dict[str, bool] = {}
        self._evaluating: List[str] = []

    def __getitem__(self, name: str) -> bool:
        if name in self._values:
            return self._values[name]
        if name not in self._scope.declared:
            raise KeyError(name)
        if name in self._evaluating:
            cycle = self._evaluating[self._evaluating.index(name):]
            raise TemplateError(f"Template format error: Circular dependency between conditions: [{', '.join(cycle)}]")
        self._evaluating.append(name)
        try:
            self._values[name] = self._scope.evaluate(name)
        finally:
            self._evaluating.pop()
        return self._values[name]

    def __contains__(self, name: object) -> bool:
        return name in self._scope.declared

    def __iter__(self) -> Iterator[str]:
        return iter(self._scope.declared)

    def __len__(self) -> int:
        return len(self._scope.declared)


class _ConditionScope:
    """A ResolveContext with no resources: what the Conditions section may see."""

    def __init__(
        self,
        declared: Mapping[str, Any],
        parameters: Mapping[str, ParameterValue],
        pseudo_parameters: PseudoParameters,
        mappings: Mapping[str, Mapping[str, Mapping[str, Any]]],
        block: str = "Conditions",
    ) -> None:
        self.block = block
        self.declared = declared
        self.parameters = parameters
        self.pseudo_parameters = pseudo_parameters
        self.mappings = mappings
        self.conditions = _LazyConditions(self)

    def evaluate(self, name: str) -> bool:
        expression = self.declared[name]
        if isinstance(expression, dict) and len(expression) == 1 and "Condition" in expression:
            referenced = expression["Condition"]
            if not isinstance(referenced, str) or referenced not in self.declared:
                raise TemplateError(f"Template format error: Unresolved condition dependency {referenced} in Conditions.{name}")
            return self.conditions[referenced]
        if not (isinstance(expression, dict) and len(expression) == 1 and next(iter(expression)) in CONDITION_FUNCTIONS):
            raise TemplateError(f"Template format error: Condition {name} must be one of [{', '.join(CONDITION_FUNCTIONS)}] "
                                "or a Condition reference")
        return bool(resolve(expression, self, f"Conditions.{name}"))

    def ref(self, logical_id: str) -> Any:
        raise TemplateError(f"Template format error: Unresolved dependencies [{logical_id}]. "
                            f"Cannot reference resources in the {self.block} block of the template")

    def get_att(self, logical_id: str, attribute: str) -> Any:
        return self.ref(logical_id)

    def import_value(self, name: str) -> Any:
        raise TemplateError(f"Template format error: Fn::ImportValue cannot be used in the {self.block} block of the template")

    def availability_zones(self, region: str) -> List[str]:
        raise TemplateError(f"Template format error: Fn::GetAZs cannot be used in the {self.block} block of the template")

    def stack_output(self, arguments: Mapping[str, str]) -> Any:
        raise TemplateError(f"Template format error: Fn::GetStackOutput cannot be used in the {self.block} block of the template")
