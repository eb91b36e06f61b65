"""A template with its parameters: what one stack operation runs, in the engine's terms, and its factory.

``Blueprints`` makes each operation's blueprint in its stack's environment; ``prepare`` reads the template (``template/``: decoding, declarations, parameters, conditions,
dependencies) once, before the operation starts, so everything the service refuses up front is
refused then. The engine then asks the blueprint, resource by resource, for what it needs:
the resources to run and their order, a resource's properties resolved against the stack as it
stands (``properties``), the attributes other values read from it, the outputs.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from cfnrun.stacks.exports import Exports
from cfnrun.stacks.output_values import list_output_refusal
from cfnrun.stacks.provisioning import NoProvisioner, Provisioners
from cfnrun.stacks.records import StackOutput, StackResource
from cfnrun.stacks.template.availability_zones import listed_zones
from cfnrun.stacks.template.conditions import evaluate_conditions
from cfnrun.stacks.template.declarations import ResourceDeclaration, StackTemplate, is_custom_resource, scalar_text
from cfnrun.stacks.template.dependencies import dependency_graph, output_dependencies, references
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.intrinsics import resolve, sub_variables
from cfnrun.stacks.template.includes import IncludeReader
from cfnrun.stacks.template.stack_outputs import StackOutputLookup, read_stack_output
from cfnrun.stacks.template.literal_functions import check_parameter_functions, processed_language_extensions
from cfnrun.stacks.template.loading import load_stack_template
from cfnrun.stacks.template.macros import MacroRunner
from cfnrun.stacks.template.parameters import GivenParameter, ParameterValue, parameter_values, resolve_parameters
from cfnrun.stacks.template.policies import deletion_policy, update_replace_policy
from cfnrun.stacks.template.pseudo import NO_VALUE, PseudoParameters
from cfnrun.stacks.template.rules import check_rules

TemplateProblem = TemplateError  # what the engine catches: the service's ValidationError text
KNOWN_AFTER_APPLY = "{{changeSet:KNOWN_AFTER_APPLY}}"  # a value a change set cannot know before a resource it uses runs


@dataclass(frozen=True)
class StackEnvironment:
    """What a template's values may read besides its own: the stack, the account, the other stacks' exports."""

    stack_name: str
    stack_id: str
    region: str
    account_id: str
    export: Callable[[str], Optional[str]] = lambda name: None
    ssm_parameter: Optional[Callable[[str], str]] = None
    module_fragments: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # served modules, by type name
    read_include: Optional[IncludeReader] = None  # reads an AWS::Include Location (template/includes.py)
    stack_output: StackOutputLookup = lambda stack, output: None  # Fn::GetStackOutput's (template/stack_outputs.py)
    run_macro: Optional[MacroRunner] = None  # runs one of the account's macros (template/macros.py)
    availability_zones: Callable[[str], Sequence[str]] = listed_zones  # Fn::GetAZs's: a region's zones (the endpoint's EC2 on serve)
    notification_arns: Tuple[str, ...] = ()  # the stack's NotificationARNs for this operation (AWS::NotificationARNs)
    # the first of the values (of one AWS-specific parameter type, AWS::EC2::KeyPair::KeyName ...) naming nothing on the AWS
    # endpoint, None when all exist; None itself without an endpoint (the values are then taken as they are)
    aws_value_missing: Optional[Callable[[str, Sequence[str]], Optional[str]]] = None


@dataclass
class _Values:
    """The ``ResolveContext`` of one resolution: the blueprint's values and the stack's resources as they are now."""

    blueprint: "Blueprint"
    resources: Mapping[str, StackResource]

    @property
    def parameters(self) -> Mapping[str, ParameterValue]:
        return self.blueprint.parameter_values

    @property
    def pseudo_parameters(self) -> PseudoParameters:
        return self.blueprint.pseudo

    @property
    def conditions(self) -> Mapping[str, bool]:
        return self.blueprint.conditions

    @property
    def mappings(self) -> Mapping[str, Mapping[str, Mapping[str, Any]]]:
        return self.blueprint.template.mappings

    def _resource(self, logical_id: str) -> StackResource:
        resource = self.resources.get(logical_id)
        if resource is None or resource.physical_id is None:
            raise TemplateError(f"Template error: resource {logical_id} is not created yet, so it cannot be referenced")
        return resource

    def ref(self, logical_id: str) -> Any:
        return self._resource(logical_id).ref

    def get_att(self, logical_id: str, attribute: str) -> Any:
        resource = self._resource(logical_id)
        if attribute not in resource.attributes:
            raise TemplateError(missing_attribute(resource.type_name, logical_id, attribute, self.blueprint.environment.stack_id))
        return resource.attributes[attribute]

    def import_value(self, name: str) -> Any:
        value = self.blueprint.environment.export(name)
        if value is None:
            raise TemplateError(f"No export named {name} found.")
        return value

    def availability_zones(self, region: str) -> List[str]:
        return list(self.blueprint.environment.availability_zones(region or self.blueprint.environment.region))

    def stack_output(self, arguments: Mapping[str, str]) -> Any:
        environment = self.blueprint.environment
        return read_stack_output(arguments, environment.stack_output, environment.region)


def missing_attribute(type_name: str, logical_id: str, attribute: str, stack_id: str) -> str:
    """What the service says when a resource it made has no ``attribute`` for an Fn::GetAtt that reads it: the resource
    that reads it fails (users' reports of 2022-2025; the service checks the attribute's name against the type when the
    template arrives only for some types, so cfnrun leaves that to the resource, inferred)."""
    if is_custom_resource(type_name):  # the function's Data had no such key
        return f"CustomResource attribute error: Vendor response doesn't contain {attribute} attribute in object {stack_id}|{logical_id}"
    return f"Requested attribute {attribute} does not exist in schema for {type_name}"


@dataclass
class Blueprint:
    template_body: str
    template: StackTemplate
    environment: StackEnvironment
    parameters: Dict[str, str]  # each parameter's value as text, NoEcho ones included (masked where shown)
    parameter_values: Dict[str, ParameterValue]
    conditions: Dict[str, bool]
    dependencies: Dict[str, FrozenSet[str]]
    order: List[str]
    pseudo: PseudoParameters
    no_echo: Tuple[str, ...] = ()
    resolved_values: Dict[str, str] = field(default_factory=dict)  # SSM-typed parameters: what Systems Manager held (ResolvedValue)
    _wanted: Optional[Dict[str, FrozenSet[str]]] = None  # attributes_wanted's answers, found on its first call

    @property
    def description(self) -> Optional[str]:
        return self.template.description

    def same_ssm_values(self, before: Optional["Blueprint"]) -> bool:
        """Did the SSM-typed parameters read what they read for ``before`` (they are read again on every operation)?"""
        return before is None or self.resolved_values == before.resolved_values

    def resource_ids(self) -> List[str]:
        return list(self.order)

    def declaration(self, logical_id: str) -> ResourceDeclaration:
        return self.template.resources[logical_id]

    def type_of(self, logical_id: str) -> str:
        return self.template.resources[logical_id].type

    def metadata(self, logical_id: str) -> Optional[Dict[str, Any]]:
        return self.template.resources[logical_id].metadata

    def resolved_metadata(self, logical_id: str, resources: Mapping[str, StackResource]) -> Any:
        """The resource's Metadata with its intrinsic functions worked out (KNOWN_AFTER_APPLY where they cannot be yet)."""
        declared = self.template.resources[logical_id].metadata
        if declared is None:
            return None
        try:
            return resolve(declared, _Values(self, resources), f"Resources.{logical_id}.Metadata")
        except TemplateError:
            return KNOWN_AFTER_APPLY

    def references_to(self, logical_id: str, others: Set[str]) -> List[str]:
        """The top-level properties of ``logical_id`` whose values use any of ``others``."""
        properties = self.template.resources[logical_id].properties
        return sorted(name for name, value in properties.items() if any(r.name in others for r in references(value, self.conditions)))

    def deletion_policy(self, logical_id: str) -> str:
        declared = self.template.resources.get(logical_id)
        return deletion_policy(declared, _Values(self, {})) if declared is not None else "Delete"

    def update_replace_policy(self, logical_id: str) -> str:
        declared = self.template.resources.get(logical_id)
        return update_replace_policy(declared, _Values(self, {})) if declared is not None else "Delete"

    def attributes_wanted(self, logical_id: str) -> FrozenSet[str]:
        """The attributes the template reads from ``logical_id`` by Fn::GetAtt or Fn::Sub (``${X.Arn}``)."""
        if self._wanted is None:  # once per blueprint, even when the template reads no attribute
            found: Dict[str, Set[str]] = {}
            values = [r.properties for r in self.template.resources.values()] + [
                [o.value, o.export_name] for o in self.template.outputs.values()
            ]
            _collect_attributes(values, found)
            self._wanted = {name: frozenset(names) for name, names in found.items()}
        return self._wanted.get(logical_id, frozenset())

    def properties(self, logical_id: str, resources: Mapping[str, StackResource]) -> Dict[str, Any]:
        """The resource's Properties with every intrinsic function worked out against the stack's resources now."""
        declared = self.template.resources[logical_id]
        resolved = resolve(declared.properties, _Values(self, resources), f"Resources.{logical_id}.Properties")
        return {} if resolved is NO_VALUE or resolved is None else dict(resolved)

    def planned_properties(self, logical_id: str, resources: Mapping[str, StackResource], unknown: Set[str]) -> Dict[str, Any]:
        """The properties as a change plan can know them: each top-level one that uses a resource in ``unknown`` (or
        cannot be worked out yet) is KNOWN_AFTER_APPLY."""
        declared = self.template.resources[logical_id].properties
        values, planned = _Values(self, resources), {}
        for name, value in declared.items():
            if any(r.name in unknown for r in references(value, self.conditions)):
                planned[name] = KNOWN_AFTER_APPLY
                continue
            try:
                resolved = resolve(value, values, f"Resources.{logical_id}.Properties.{name}")
            except TemplateError:
                resolved = KNOWN_AFTER_APPLY
            if resolved is not NO_VALUE:
                planned[name] = resolved
        return planned

    def processed_document(self) -> Dict[str, Any]:
        """The template as GetTemplate's Processed stage shows it: AWS::LanguageExtensions' functions worked out."""
        return processed_language_extensions(self.template.document, self.parameter_values, self.pseudo, self.conditions)

    def outputs(self, resources: Mapping[str, StackResource]) -> List[StackOutput]:
        shown = []
        context = _Values(self, resources)
        for name, output in self.template.outputs.items():
            if output.condition is not None and not self.conditions.get(output.condition, False):
                continue
            value = resolve(output.value, context, f"Outputs.{name}.Value")
            export = resolve(output.export_name, context, f"Outputs.{name}.Export.Name") if output.export_name is not None else None
            shown.append(StackOutput(name, _text(value), output.description, str(export) if export is not None else None))
        return shown

    def outputs_before_resources(self) -> Dict[str, Any]:
        """Each output's Value as the parameters, mappings and conditions alone work it out (KNOWN_AFTER_APPLY where it
        reads a resource or cannot be worked out yet)."""
        worked_out: Dict[str, Any] = {}
        for name, output in self.template.outputs.items():
            try:
                worked_out[name] = resolve(output.value, _Values(self, {}), f"Outputs.{name}.Value")
            except TemplateError:
                worked_out[name] = KNOWN_AFTER_APPLY
        return worked_out

    def output_attribute_reads(self) -> List[AttributeRead]:
        """The attributes the Value of each output whose condition holds reads, paths from the template's root
        (``/Outputs/Name/Value/Fn::GetAtt``)."""
        return [
            read
            for name, output in self.template.outputs.items()
            if output.condition is None or self.conditions.get(output.condition, False)
            for read in attribute_reads(output.value, f"/Outputs/{name}/Value")
        ]

    def imports(self) -> FrozenSet[str]:
        """The export names this stack's values import (those the parameters alone decide)."""
        names: Set[str] = set()
        _collect_imports([r.properties for r in self.template.resources.values()] + [o.value for o in self.template.outputs.values()],
                         _Values(self, {}), names)
        return frozenset(names)


def _text(value: Any) -> str:
    """An output's value as DescribeStacks shows it: a boolean or a number as the service writes it (``true``, not
    Python's ``True``), a list comma-joined."""
    if isinstance(value, list):
        return ",".join(_text(v) for v in value)
    text = scalar_text(value)
    return str(value) if text is None else text


def _collect_attributes(value: Any, found: Dict[str, Set[str]]) -> None:
    for read in attribute_reads(value, ""):
        found.setdefault(read.logical_id, set()).add(read.attribute)


@dataclass(frozen=True)
class AttributeRead:
    """One attribute a template value reads: by Fn::GetAtt, or as an Fn::Sub variable ``${X.Attr}``; ``path`` is where the
    function stands, as a JSON pointer below the value's own (``/Fn::Join/1/0/Fn::GetAtt``)."""

    path: str
    logical_id: str
    attribute: str


def attribute_reads(value: Any, path: str) -> Iterator[AttributeRead]:
    """Each attribute ``value`` reads whose resource and attribute are written as text (one computed by a function is known
    only as it is resolved)."""
    if isinstance(value, dict):
        if len(value) == 1 and "Fn::GetAtt" in value:
            target = value["Fn::GetAtt"]
            if isinstance(target, list) and len(target) == 2 and isinstance(target[0], str) and isinstance(target[1], str):
                yield AttributeRead(f"{path}/Fn::GetAtt", target[0], target[1])
            elif isinstance(target, str) and "." in target:
                logical_id, _, attribute = target.partition(".")
                yield AttributeRead(f"{path}/Fn::GetAtt", logical_id, attribute)
        if len(value) == 1 and "Fn::Sub" in value:
            given = value["Fn::Sub"]
            text = given[0] if isinstance(given, list) and given else given
            named = given[1] if isinstance(given, list) and len(given) > 1 and isinstance(given[1], dict) else {}
            if isinstance(text, str):
                for name in sub_variables(text):
                    logical_id, dot, attribute = name.partition(".")
                    if dot and not logical_id.startswith("AWS:") and name not in named:
                        yield AttributeRead(f"{path}/Fn::Sub", logical_id, attribute)
        for key, item in value.items():
            yield from attribute_reads(item, f"{path}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from attribute_reads(item, f"{path}/{index}")


def _collect_imports(value: Any, context: _Values, names: Set[str]) -> None:
    if isinstance(value, dict):
        if len(value) == 1 and "Fn::ImportValue" in value:
            try:
                names.add(str(resolve(value["Fn::ImportValue"], context)))
            except TemplateError:
                pass  # depends on a resource: known once it runs
            return
        for item in value.values():
            _collect_imports(item, context, names)
    elif isinstance(value, list):
        for item in value:
            _collect_imports(item, context, names)


def pseudo_parameters(environment: StackEnvironment) -> PseudoParameters:
    """The pseudo parameters of a stack in ``environment``."""
    return PseudoParameters(environment.account_id, environment.region, environment.stack_id, environment.stack_name,
                            environment.notification_arns)


def given_values(given: Mapping[str, Optional[str]], previous: Mapping[str, str]) -> Dict[str, str]:
    """The parameter values a template is read with: each given one, UsePreviousValue's (None) from ``previous``."""
    return {k: previous.get(k, "") if v is None else v for k, v in given.items()}


def prepare(
    template_body: str, given: Dict[str, Optional[str]], previous: Mapping[str, str], environment: StackEnvironment,
    loaded: Optional[StackTemplate] = None,
) -> Blueprint:
    """The blueprint of one operation, or the TemplateError the service answers the API call with. ``loaded``: the
    template read from ``template_body`` with these values and this environment already, by the same API call."""
    template = loaded or load_stack_template(template_body, given_values(given, previous), environment.module_fragments,
                                             environment.read_include, environment.run_macro)
    offered = [GivenParameter(key, value, use_previous_value=value is None) for key, value in given.items()]
    resolved = resolve_parameters(template.parameters, offered, previous, environment.ssm_parameter)
    values = parameter_values(resolved)
    pseudo = pseudo_parameters(environment)
    check_rules(template.document.get("Rules"), values, pseudo, template.mappings)  # the Rules section's assertions
    conditions = evaluate_conditions(template.conditions, values, pseudo, template.mappings)
    graph = dependency_graph(template, conditions)
    output_dependencies(template, conditions)  # an output naming a resource left out is refused now, as the service does
    check_parameter_functions(template.document, values, pseudo, conditions)  # a mapping key a parameter names, looked up now
    return Blueprint(
        template_body=template_body,
        template=template,
        environment=environment,
        parameters={name: parameter.value for name, parameter in resolved.items()},
        parameter_values=values,
        conditions=conditions,
        dependencies=dict(graph.dependencies),
        order=graph.creation_order(),
        pseudo=pseudo,
        no_echo=template.no_echo_parameters,
        resolved_values={name: p.resolved_value for name, p in resolved.items() if p.resolved_value is not None},
    )


class Blueprints:
    """The factory of each stack operation's blueprint, in its stack's environment (the account, the region, the other
    stacks' exports). What the service refuses before it starts is refused here, as a TemplateError: a template it
    cannot read, a type no provisioner serves, an import no stack exports."""

    def __init__(
        self, provisioners: Provisioners, exports: Exports, region: str, account_id: str,
        module_fragments: Optional[Mapping[str, Mapping[str, Any]]] = None, read_include: Optional[IncludeReader] = None,
        ssm_parameter: Optional[Callable[[str], str]] = None, availability_zones: Callable[[str], Sequence[str]] = listed_zones,
        aws_value_missing: Optional[Callable[[str, Sequence[str]], Optional[str]]] = None,
    ) -> None:
        self.read_include = read_include
        self.aws_value_missing = aws_value_missing  # looks up AWS-specific parameters' values on the endpoint (StackEnvironment's)
        self.availability_zones = availability_zones
        self.stack_output: StackOutputLookup = lambda stack, output: None  # given once the stacks exist (local_stacks.py)
        self.run_macro: Optional[MacroRunner] = None  # given once the macros exist (local_stacks.py)
        self.provisioners = provisioners
        self.ssm_parameter = ssm_parameter  # reads AWS::SSM::Parameter::Value<...> parameters (None: no AWS endpoint)
        self.exports = exports
        self.region = region
        self.account_id = account_id
        self.module_fragments = module_fragments or {}  # the served modules' fragments, by type name
        # the template the API call being answered read already, with its body and parameter values (``loaded``)
        self._loaded: Optional[Tuple[str, Dict[str, str], StackTemplate]] = None

    @contextmanager
    def loaded(self, template_body: str, values: Mapping[str, str], template: StackTemplate) -> Iterator[None]:
        """While an API call is answered: ``template``, just read from ``template_body`` with ``values`` in this
        environment (macros' answers aside: a template they rewrote is read again), is the one its operation uses
        rather than reading the body a second time."""
        self._loaded = (template_body, dict(values), template) if template.macro_output is None else None
        try:
            yield
        finally:
            self._loaded = None

    def environment(self, stack_name: str, stack_id: str, notification_arns: Sequence[str] = ()) -> StackEnvironment:
        return StackEnvironment(
            stack_name, stack_id, self.region, self.account_id, self.exports.value, self.ssm_parameter,
            module_fragments=self.module_fragments, read_include=self.read_include, stack_output=self.stack_output,
            run_macro=self.run_macro, availability_zones=self.availability_zones, notification_arns=tuple(notification_arns),
            aws_value_missing=self.aws_value_missing,
        )

    def prepare(
        self, template_body: str, given: Dict[str, Optional[str]], previous: Mapping[str, str], stack_name: str, stack_id: str,
        notification_arns: Sequence[str] = (),
    ) -> Blueprint:
        """``given``: each parameter's value, None for UsePreviousValue (of ``previous``, the stack's values);
        ``notification_arns``: the stack's as this operation leaves them (``Ref: AWS::NotificationARNs``)."""
        loaded, self._loaded = self._loaded, None  # read once more by nothing else: it is this operation's to use
        if loaded is not None and (loaded[0] != template_body or loaded[1] != given_values(given, previous)):
            loaded = None
        environment = self.environment(stack_name, stack_id, notification_arns)
        blueprint = prepare(template_body, given, previous, environment, loaded[2] if loaded else None)
        for logical_id in blueprint.resource_ids():
            try:
                self.provisioners.for_type(blueprint.type_of(logical_id))
            except NoProvisioner as error:
                raise TemplateError(str(error)) from None
        for name in sorted(blueprint.imports()):
            if self.exports.value(name) is None:
                raise TemplateError(f"No export named {name} found.")
        refusal = list_output_refusal(blueprint.template, blueprint.conditions, self.provisioners, blueprint.outputs_before_resources())
        if refusal is not None:
            raise TemplateError(refusal)
        return blueprint
