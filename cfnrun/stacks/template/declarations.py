"""A template document as typed declarations: what each section declares, checked as the service checks it.

Only structure is checked here (sections, logical ids, members and their shapes); what the
values mean — parameter constraints, conditions, intrinsic functions, references between
resources — is each its own module's job. Resource properties stay raw: they are resolved only
when their resource is about to be created, once the resources they reference exist.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from cfnrun.stacks.template.errors import TemplateError, format_error
from cfnrun.stacks.template.parameter_types import is_parameter_type

TEMPLATE_FORMAT_VERSION = "2010-09-09"
SECTIONS = (
    "AWSTemplateFormatVersion", "Description", "Metadata", "Parameters", "Rules", "Mappings", "Conditions",
    "Transform", "Resources", "Outputs", "Hooks",
)
RESOURCE_ATTRIBUTES = (
    "Type", "Properties", "DependsOn", "Condition", "DeletionPolicy", "UpdateReplacePolicy", "Metadata",
    "CreationPolicy", "UpdatePolicy", "Version",
)
PARAMETER_ATTRIBUTES = (
    "Type", "Default", "AllowedValues", "AllowedPattern", "MinLength", "MaxLength", "MinValue", "MaxValue",
    "NoEcho", "Description", "ConstraintDescription",
)
OUTPUT_ATTRIBUTES = ("Value", "Export", "Condition", "Description")
DELETION_POLICIES = ("Delete", "Retain", "RetainExceptOnCreate", "Snapshot")
UPDATE_REPLACE_POLICIES = ("Delete", "Retain", "Snapshot")
MAX_LOGICAL_ID_LENGTH = 255

_LOGICAL_ID = re.compile(r"[A-Za-z0-9]+")

Policy = Union[str, Dict[str, Any]]  # a dict: an intrinsic function (Fn::If, Ref), worked out by policies.py


def is_custom_resource(type_name: str) -> bool:
    """Is ``type_name`` a custom resource's (``Custom::Name`` or ``AWS::CloudFormation::CustomResource``), which a function
    backs and whose properties and attributes are whatever that function takes and answers?"""
    return type_name.startswith("Custom::") or type_name == "AWS::CloudFormation::CustomResource"


@dataclass(frozen=True)
class ParameterDeclaration:
    """One entry of the Parameters section, its values as the service reads them (numbers as text)."""

    name: str
    type: str
    default: Optional[str] = None
    allowed_values: Tuple[str, ...] = ()
    allowed_pattern: Optional[str] = None
    min_length: Optional[int] = None
    max_length: Optional[int] = None
    min_value: Optional[float] = None
    max_value: Optional[float] = None
    no_echo: bool = False
    description: Optional[str] = None
    constraint_description: Optional[str] = None


@dataclass(frozen=True)
class ResourceDeclaration:
    """One entry of the Resources section; Properties raw (intrinsic functions unresolved)."""

    logical_id: str
    type: str
    properties: Dict[str, Any] = field(default_factory=dict)
    depends_on: Tuple[str, ...] = ()
    condition: Optional[str] = None
    deletion_policy: Optional[Policy] = None
    update_replace_policy: Optional[Policy] = None
    metadata: Optional[Dict[str, Any]] = None
    creation_policy: Optional[Dict[str, Any]] = None
    update_policy: Optional[Dict[str, Any]] = None


@dataclass(frozen=True)
class OutputDeclaration:
    """One entry of the Outputs section; Value and Export.Name raw."""

    name: str
    value: Any
    export_name: Any = None
    condition: Optional[str] = None
    description: Optional[str] = None


@dataclass(frozen=True)
class StackTemplate:
    """A template's declarations; ``document`` is the decoded template itself (what GetTemplate returns)."""

    document: Dict[str, Any]
    resources: Dict[str, ResourceDeclaration]
    parameters: Dict[str, ParameterDeclaration] = field(default_factory=dict)
    mappings: Dict[str, Dict[str, Dict[str, Any]]] = field(default_factory=dict)
    conditions: Dict[str, Any] = field(default_factory=dict)
    outputs: Dict[str, OutputDeclaration] = field(default_factory=dict)
    transforms: Tuple[str, ...] = ()
    description: Optional[str] = None
    module_info: Dict[str, Dict[str, str]] = field(default_factory=dict)  # ModuleInfo of what modules made, by logical id
    # the template as the account's macros left it (modules not yet expanded), when they ran: what a restart reads back
    macro_output: Optional[Dict[str, Any]] = None

    @property
    def no_echo_parameters(self) -> Tuple[str, ...]:
        """Names of the parameters whose values are shown as ``****``."""
        return tuple(name for name, declared in self.parameters.items() if declared.no_echo)


def parse_template(document: Any) -> StackTemplate:
    """The declarations of a decoded template; a TemplateError worded as the service words it when malformed."""
    if not isinstance(document, dict):
        raise format_error("unsupported structure.")  # the service's words for a macro's answer that is no template
    unknown = [str(key) for key in document if key not in SECTIONS]
    if unknown:
        raise format_error(f"Invalid template property or properties [{', '.join(unknown)}]")
    version = document.get("AWSTemplateFormatVersion")
    if version is not None and str(version) != TEMPLATE_FORMAT_VERSION:
        raise format_error(f"Unsupported template format version {version}; the only version is {TEMPLATE_FORMAT_VERSION}")
    description = document.get("Description")
    if description is not None and not isinstance(description, str):
        raise format_error("Every Description member must be a string")
    resources = _section(document, "Resources")
    if not resources:
        raise format_error("At least one Resources member must be defined.")
    conditions = _section(document, "Conditions")
    parsed = StackTemplate(
        document=document,
        parameters=parameter_declarations(document),
        mappings={name: _mapping(name, value) for name, value in _section(document, "Mappings").items()},
        conditions=conditions,
        resources={logical_id: _resource(logical_id, value, conditions) for logical_id, value in resources.items()},
        outputs={name: _output(name, value, conditions) for name, value in _section(document, "Outputs").items()},
        transforms=transform_names(document.get("Transform")),
        description=description,
    )
    clash = sorted(set(parsed.parameters) & set(parsed.resources))
    if clash:
        raise format_error(f"Parameters and Resources share the logical ids [{', '.join(clash)}]")
    return parsed


def _section(document: Dict[str, Any], name: str) -> Dict[str, Any]:
    value = document.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise format_error(f"Any {name} member must be an object.")
    return value


def _logical_id(kind: str, name: Any) -> str:
    if not isinstance(name, str) or not _LOGICAL_ID.fullmatch(name):
        raise format_error(f"{kind} name {name} is non alphanumeric.")
    if len(name) > MAX_LOGICAL_ID_LENGTH:
        raise format_error(f"{kind} name {name[:40]}... is longer than {MAX_LOGICAL_ID_LENGTH} characters.")
    return name


def _refuse_unknown(value: Dict[str, Any], known: Sequence[str], kind: str) -> None:
    """A parameter's, resource's or output's first attribute the service does not know, refused in its words."""
    unknown = next((str(key) for key in value if key not in known), None)
    if unknown is not None:
        raise TemplateError(f"Invalid template {kind} property '{unknown}'")  # the service's words have no prefix here


def scalar_text(value: Any) -> Optional[str]:
    """A scalar as text, the way the service turns numbers and booleans into strings; None for anything else."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    return value if isinstance(value, str) else None


def _text(value: Any) -> str:
    text = scalar_text(value)
    return str(value) if text is None else text


def parameter_declarations(document: Dict[str, Any]) -> Dict[str, ParameterDeclaration]:
    """A template's Parameters section, read as the service reads it (TemplateError when it would refuse it)."""
    return {name: _parameter(name, value) for name, value in _section(document, "Parameters").items()}


def _parameter(name: Any, value: Any) -> ParameterDeclaration:
    name = _logical_id("Parameter", name)
    if not isinstance(value, dict):
        raise format_error(f"[/Parameters/{name}] Every Parameters object must be an object")
    _refuse_unknown(value, PARAMETER_ATTRIBUTES, "parameter")
    declared_type = value.get("Type")
    if declared_type is None:
        raise format_error(f"[/Parameters/{name}] Every Parameters object must contain a Type member.")
    if not isinstance(declared_type, str) or not is_parameter_type(declared_type):
        raise format_error(f"Unrecognized parameter type: {declared_type}")
    default = value.get("Default")
    if isinstance(default, list):
        default = ",".join(_text(item) for item in default)
    allowed = value.get("AllowedValues")
    if allowed is not None and not isinstance(allowed, list):
        raise format_error(f"[/Parameters/{name}/AllowedValues] AllowedValues must be a list")
    try:
        return ParameterDeclaration(
            name=name,
            type=declared_type,
            default=None if default is None else _text(default),
            allowed_values=tuple(_text(item) for item in allowed or ()),
            allowed_pattern=None if value.get("AllowedPattern") is None else str(value["AllowedPattern"]),
            min_length=_optional(value, "MinLength", int),
            max_length=_optional(value, "MaxLength", int),
            min_value=_optional(value, "MinValue", float),
            max_value=_optional(value, "MaxValue", float),
            no_echo=_text(value.get("NoEcho", False)).lower() == "true",
            description=None if value.get("Description") is None else str(value["Description"]),
            constraint_description=None if value.get("ConstraintDescription") is None else str(value["ConstraintDescription"]),
        )
    except ValueError as error:
        raise format_error(f"[/Parameters/{name}] {error}") from None


def _optional(value: Dict[str, Any], key: str, kind: Any) -> Any:
    if value.get(key) is None:
        return None
    try:
        return kind(float(value[key])) if kind is int else kind(value[key])
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be a number, not {value[key]!r}") from None


def _mapping(name: Any, value: Any) -> Dict[str, Dict[str, Any]]:
    """A mapping is two levels of keys over values that are texts (numbers, booleans) or lists: the service names the
    member whose value is not a map, and refuses a third level or a function (a ``Ref``) as a value — read from its
    answers as LocalStack recorded them against AWS (tests/aws/services/cloudformation/engine/test_mappings.snapshot.json)."""
    name = _logical_id("Mapping", name)
    if not isinstance(value, dict) or not value:
        raise format_error(f"Every Mappings member {name} must be a map")
    for key, level in value.items():
        if not isinstance(level, dict):
            raise format_error(f"Every Mappings member {key} must be a map")
        if any(isinstance(attribute, dict) for attribute in level.values()):
            raise format_error("Every Mappings attribute must be a String or a List.")
    return value


def _reference_to_condition(condition: Any, where: str, conditions: Mapping[str, Any]) -> Optional[str]:
    if condition is None:
        return None
    if not isinstance(condition, str):
        raise format_error(f"[{where}/Condition] a Condition must be the name of a condition")
    if condition not in conditions:
        raise format_error(f"Unresolved condition dependency {condition} in {where}")
    return condition


def _resource(logical_id: Any, value: Any, conditions: Mapping[str, Any]) -> ResourceDeclaration:
    logical_id = _logical_id("Resource", logical_id)
    where = f"/Resources/{logical_id}"
    if not isinstance(value, dict):
        raise format_error(f"[{where}] Every Resources object must be an object")
    _refuse_unknown(value, RESOURCE_ATTRIBUTES, "resource")
    resource_type = value.get("Type")
    if resource_type is None:
        raise format_error(f"[{where}] Every Resources object must contain a Type member.")
    if not isinstance(resource_type, str) or not resource_type:
        raise format_error(f"[{where}/Type] the Type of a resource must be a string")
    properties = value.get("Properties")
    if properties is not None and not isinstance(properties, dict):
        raise format_error(f"[{where}/Properties] Properties must be an object")
    depends_on = value.get("DependsOn")
    if isinstance(depends_on, str):
        depends_on = [depends_on]
    if depends_on is not None and not (isinstance(depends_on, list) and all(isinstance(item, str) for item in depends_on)):
        raise format_error(f"[{where}/DependsOn] DependsOn must be a logical id or a list of them")
    for key in ("Metadata", "CreationPolicy", "UpdatePolicy"):
        if value.get(key) is not None and not isinstance(value[key], dict):
            raise format_error(f"[{where}/{key}] {key} must be an object")
    return ResourceDeclaration(
        logical_id=logical_id,
        type=resource_type,
        properties=properties or {},
        depends_on=tuple(dict.fromkeys(depends_on or ())),
        condition=_reference_to_condition(value.get("Condition"), where, conditions),
        deletion_policy=_policy(value.get("DeletionPolicy"), "DeletionPolicy", DELETION_POLICIES, logical_id),
        update_replace_policy=_policy(value.get("UpdateReplacePolicy"), "UpdateReplacePolicy", UPDATE_REPLACE_POLICIES, logical_id),
        metadata=value.get("Metadata"),
        creation_policy=value.get("CreationPolicy"),
        update_policy=value.get("UpdatePolicy"),
    )


def _policy(value: Any, attribute: str, allowed: Tuple[str, ...], logical_id: str) -> Optional[Policy]:
    if value is None or isinstance(value, dict):  # an intrinsic function: worked out with the stack's values (policies.py)
        return value
    if value not in allowed:
        raise format_error(f"Unrecognized {attribute} {value} for resource {logical_id}; it must be one of [{', '.join(allowed)}]")
    return str(value)


def is_function(value: Any) -> bool:
    """Is ``value`` an intrinsic function call (a one-key object whose key is Ref or Fn::*)?"""
    if not isinstance(value, dict) or len(value) != 1:
        return False
    [key] = value
    return key == "Ref" or (isinstance(key, str) and key.startswith("Fn::"))


def _output(name: Any, value: Any, conditions: Mapping[str, Any]) -> OutputDeclaration:
    name = _logical_id("Output", name)
    where = f"/Outputs/{name}"
    if not isinstance(value, dict):
        raise format_error(f"[{where}] Every Outputs member must be an object")
    _refuse_unknown(value, OUTPUT_ATTRIBUTES, "output")
    if value.get("Value") is None:
        raise format_error("Every Outputs member must contain a Value object")
    if isinstance(value["Value"], list) or (isinstance(value["Value"], dict) and not is_function(value["Value"])):
        # the service's words as users quote its CreateStack answers (aws-cloudformation/cfn-lint#485, org-formation-cli#15)
        kind = "List" if isinstance(value["Value"], list) else "Map"
        raise format_error(f"The Value field of every Outputs member must evaluate to a String and not a {kind}.")
    export = value.get("Export")
    if export is not None and not (isinstance(export, dict) and export.get("Name") is not None):
        raise format_error(f"Output {name} is malformed. The Name field of every Export member must be specified.")
    description = value.get("Description")
    return OutputDeclaration(
        name=name,
        value=value["Value"],
        export_name=None if export is None else export["Name"],
        condition=_reference_to_condition(value.get("Condition"), where, conditions),
        description=None if description is None else str(description),
    )


def transform_names(value: Any) -> Tuple[str, ...]:
    """The names in a Transform section: one name, a list, or macros given as {Name, Parameters}."""
    if value is None:
        return ()
    names = []
    for item in value if isinstance(value, list) else [value]:
        name = item.get("Name") if isinstance(item, dict) else item  # {"Name": "AWS::Include", "Parameters": {...}}
        if not isinstance(name, str):
            raise format_error("a Transform is the name of a transform or macro, or a list of them")
        names.append(name)
    return tuple(names)
