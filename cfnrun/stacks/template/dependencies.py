"""Which resources wait for which: the dependency graph of a stack, and its orders for create and delete.

A resource depends on every resource it names — by Ref, Fn::GetAtt or an Fn::Sub variable, in its
Properties or any other attribute — and on its DependsOn. Only what the operation will run
counts: resources whose Condition is false do not exist, and of an ``Fn::If`` only the branch
taken (``!If [HasDb, !Ref Db, !Ref AWS::NoValue]`` does not need ``Db`` when ``HasDb`` is false).
Naming a resource that does not exist, or depending on oneself through others, is refused with
the service's words. The graph gives the engine layers (each layer's resources can run together)
and, at any moment, the resources ready to start, for create/update (dependencies first) and,
reversed, for delete (dependants first).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Any, Dict, FrozenSet, Iterator, List, Mapping, Optional, Set, Tuple

from cfnrun.stacks.template.declarations import ResourceDeclaration, StackTemplate
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.intrinsics import get_att_target, is_function, sub_arguments, sub_variables
from cfnrun.stacks.template.pseudo import PSEUDO_PARAMETERS


@dataclass(frozen=True)
class Reference:
    """One name a value uses: by Ref (a parameter, pseudo parameter or resource) or by attribute (a resource)."""

    name: str
    by_attribute: bool
    attribute: Optional[str] = None  # the attribute read, when the template names it literally (a change set's CausingEntity)


def references(value: Any, conditions: Optional[Mapping[str, bool]] = None) -> Iterator[Reference]:
    """Every name ``value`` uses; with ``conditions``, only in the Fn::If branches taken, else in all of them."""
    if is_function(value):
        [(function, argument)] = value.items()
        if function == "Ref" and isinstance(argument, str):
            yield Reference(argument, by_attribute=False)
            return
        if function == "Fn::GetAtt":
            try:
                logical_id, attribute = get_att_target(argument)
            except TemplateError:
                return  # resolving it says what is wrong, where
            yield Reference(logical_id, by_attribute=True, attribute=attribute if isinstance(attribute, str) else None)
            yield from references(attribute, conditions)
            return
        if function == "Fn::Sub":
            yield from _sub_references(argument, conditions)
            return
        if function == "Fn::If" and conditions is not None and isinstance(argument, list) and len(argument) == 3:
            taken = conditions.get(argument[0]) if isinstance(argument[0], str) else None
            if taken is not None:
                yield from references(argument[1] if taken else argument[2], conditions)
                return
    if isinstance(value, dict):
        for item in value.values():
            yield from references(item, conditions)
    elif isinstance(value, list):
        for item in value:
            yield from references(item, conditions)


def _sub_references(argument: Any, conditions: Optional[Mapping[str, bool]]) -> Iterator[Reference]:
    try:
        text, variables = sub_arguments(argument)
    except TemplateError:
        return  # refused as the template arrives (``transforms.check_functions``)
    yield from references(variables, conditions)
    for name in sub_variables(text):
        if name in variables:
            continue
        logical_id, dot, attribute = name.partition(".")
        yield Reference(logical_id, by_attribute=True, attribute=attribute) if dot else Reference(name, by_attribute=False)


def _resource_values(resource: ResourceDeclaration) -> List[Any]:
    return [resource.properties, resource.metadata, resource.creation_policy, resource.update_policy,
            resource.deletion_policy, resource.update_replace_policy]


def check_references(template: StackTemplate) -> None:
    """Refuse, before anything runs, a template that names what it does not declare (every branch counts)."""
    names = set(template.parameters) | set(PSEUDO_PARAMETERS)
    for name, expression in template.conditions.items():
        for reference in references(expression):
            if reference.by_attribute or reference.name not in names:
                raise TemplateError(f"Template format error: Unresolved dependencies [{reference.name}]. "
                                    "Cannot reference resources in the Conditions block of the template", f"Conditions.{name}")
    names |= set(template.resources)
    for logical_id, resource in template.resources.items():
        where = f"Resources.{logical_id}"
        _check_names(_resource_values(resource), template, names, "Resources", where)
        unknown = [name for name in resource.depends_on if name not in template.resources]
        if unknown:
            raise TemplateError(f"Template format error: Unresolved resource dependencies [{', '.join(unknown)}] in the "
                                "Resources block of the template", f"{where}.DependsOn")
    for name, output in template.outputs.items():
        _check_names([output.value, output.export_name], template, names, "Outputs", f"Outputs.{name}")


def _check_names(values: List[Any], template: StackTemplate, names: Set[str], block: str, where: str) -> None:
    for reference in references(values):
        if reference.by_attribute and reference.name not in template.resources:
            raise TemplateError(f"Template error: instance of Fn::GetAtt references undefined resource {reference.name}", where)
        if reference.name not in names:
            raise TemplateError(f"Template format error: Unresolved resource dependencies [{reference.name}] in the "
                                f"{block} block of the template", where)


def active_resources(template: StackTemplate, conditions: Mapping[str, bool]) -> Dict[str, ResourceDeclaration]:
    """The resources this operation runs: those without a Condition, or whose Condition holds."""
    return {logical_id: resource for logical_id, resource in template.resources.items()
            if resource.condition is None or conditions[resource.condition]}


def resource_dependencies(resource: ResourceDeclaration, template: StackTemplate, conditions: Mapping[str, bool]) -> FrozenSet[str]:
    """The resources ``resource`` waits for, as the operation's conditions select them."""
    named = {reference.name for reference in references(_resource_values(resource), conditions)}
    return frozenset((named & template.resources.keys()) | set(resource.depends_on))  # the names looked up, no set of every resource


@dataclass(frozen=True)
class DependencyGraph:
    """Each resource of the operation and the resources it waits for (all of them in the graph)."""

    dependencies: Mapping[str, FrozenSet[str]]

    def dependants(self, logical_id: str) -> FrozenSet[str]:
        """The resources that wait for ``logical_id``."""
        return frozenset(other for other, needs in self.dependencies.items() if logical_id in needs)

    def reversed(self) -> "DependencyGraph":
        """The graph for deleting: each resource waits for its dependants to be gone."""
        return DependencyGraph({logical_id: self.dependants(logical_id) for logical_id in self.dependencies})

    def ready(self, done: AbstractSet[str]) -> Tuple[str, ...]:
        """The resources not in ``done`` whose dependencies all are: those that can start now (the engine leaves out
        the ones it already started)."""
        return tuple(logical_id for logical_id, needs in self.dependencies.items() if logical_id not in done and needs <= done)

    def layers(self) -> List[Tuple[str, ...]]:
        """The resources in waves: each wave needs only earlier waves."""
        done: Set[str] = set()
        waves: List[Tuple[str, ...]] = []
        while len(done) < len(self.dependencies):
            wave = self.ready(done)
            if not wave:
                raise _circular(self.dependencies, done)
            waves.append(wave)
            done.update(wave)
        return waves

    def creation_order(self) -> List[str]:
        """One order in which creating the resources one by one respects every dependency."""
        return [logical_id for wave in self.layers() for logical_id in wave]

    def deletion_order(self) -> List[str]:
        """One order in which deleting the resources one by one removes dependants first."""
        return list(reversed(self.creation_order()))


def _circular(dependencies: Mapping[str, FrozenSet[str]], done: AbstractSet[str]) -> TemplateError:
    """The resources on a cycle among those never ready (a resource merely waiting for a cycle is left out)."""
    stuck = {logical_id for logical_id in dependencies if logical_id not in done}
    on_cycle = [logical_id for logical_id in dependencies if logical_id in stuck and _reaches(logical_id, logical_id, dependencies, stuck)]
    return TemplateError(f"Circular dependency between resources: [{', '.join(on_cycle)}]")


def _reaches(start: str, target: str, dependencies: Mapping[str, FrozenSet[str]], within: Set[str]) -> bool:
    seen: Set[str] = set()
    pending = [name for name in dependencies[start] if name in within]
    while pending:
        name = pending.pop()
        if name == target:
            return True
        if name not in seen:
            seen.add(name)
            pending.extend(other for other in dependencies[name] if other in within)
    return False


def dependency_graph(template: StackTemplate, conditions: Mapping[str, bool]) -> DependencyGraph:
    """The graph of the resources this operation runs; the service's error when one names a resource that will not
    exist (its Condition is false) or when resources depend on each other in a circle."""
    active = active_resources(template, conditions)
    graph: Dict[str, FrozenSet[str]] = {}
    for logical_id, resource in active.items():
        needs = resource_dependencies(resource, template, conditions)
        absent = sorted(name for name in needs if name not in active)
        if absent:
            raise TemplateError(f"Template format error: Unresolved resource dependencies [{', '.join(absent)}] in the "
                                "Resources block of the template", f"Resources.{logical_id}")
        graph[logical_id] = needs
    built = DependencyGraph(graph)
    built.layers()  # a circle is an error now, before anything runs
    return built


def output_dependencies(template: StackTemplate, conditions: Mapping[str, bool]) -> Dict[str, FrozenSet[str]]:
    """For each output this operation shows (its Condition holds), the resources its Value and Export name use; an
    output that uses a resource this operation leaves out (its Condition is false) is refused, as the service refuses
    it before it starts."""
    active = active_resources(template, conditions)
    shown: Dict[str, FrozenSet[str]] = {}
    for name, output in template.outputs.items():
        if output.condition is not None and not conditions[output.condition]:
            continue
        needs = {reference.name for reference in references([output.value, output.export_name], conditions)}
        needs &= set(template.resources)
        absent = sorted(needs - set(active))
        if absent:
            raise TemplateError(f"Unresolved resource dependencies [{', '.join(absent)}] in the "  # no prefix: the service's
                                "Outputs block of the template", f"Outputs.{name}")
        shown[name] = frozenset(needs)
    return shown
