"""Intrinsic functions: a template value with its Ref, Fn::* and condition functions worked out.

``resolve(value, context, where)`` walks a value (a resource's Properties, an output's Value, a
condition) and replaces every function by its result, as the service does at the moment the
value is needed: parameters, pseudo parameters, mappings and conditions come from the context,
and so do the resources — ``context.ref``/``context.get_att`` are the stack engine's, which knows
each resource's physical id and attributes once it exists. ``Ref: AWS::NoValue`` (usually out of
an ``Fn::If``) removes the key or list item that holds it; at the top it is returned as
``NO_VALUE`` for the caller to drop. Errors are worded as the service's and say where they
happened (``where`` is the path of ``value``, e.g. ``Resources.Bucket.Properties``).

Which functions a template may use at all (and which need ``AWS::LanguageExtensions``) is
checked before anything runs, by ``transforms.check_functions``; here every function is known.
"""
from __future__ import annotations

import base64
import ipaddress
import json
import re
from typing import Any, Callable, Dict, List, Mapping, Protocol, Tuple

from cfnrun.stacks.template.declarations import is_function as is_function  # its home: what the template's reading needs too
from cfnrun.stacks.template.declarations import scalar_text
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.parameters import ParameterValue
from cfnrun.stacks.template.pseudo import NO_VALUE, PSEUDO_PARAMETERS, PseudoParameters
from cfnrun.stacks.template.stack_outputs import stack_output_argument

CONDITION_FUNCTIONS = ("Fn::Equals", "Fn::And", "Fn::Or", "Fn::Not")
SUB_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_SUB_NAME = re.compile(r"[A-Za-z0-9_.:]+")


class ResolveContext(Protocol):
    """What ``resolve`` needs from a stack: its values so far and its resources (the stack engine's)."""

    @property
    def parameters(self) -> Mapping[str, ParameterValue]: ...

    @property
    def pseudo_parameters(self) -> PseudoParameters: ...

    @property
    def conditions(self) -> Mapping[str, bool]: ...

    @property
    def mappings(self) -> Mapping[str, Mapping[str, Mapping[str, Any]]]: ...

    def ref(self, logical_id: str) -> Any:
        """The resource's Ref value (its physical id); TemplateError when there is no such resource."""

    def get_att(self, logical_id: str, attribute: str) -> Any:
        """The resource's attribute (``attribute`` may be a dotted path such as ``Endpoint.Address``); TemplateError
        "Requested attribute Y does not exist in schema for T" when it has none such (``blueprint.missing_attribute``)."""

    def import_value(self, name: str) -> Any:
        """The value another stack exported as ``name``; TemplateError "No export named X found." when none did."""

    def availability_zones(self, region: str) -> List[str]:
        """The region's Availability Zones, as Fn::GetAZs gives them."""

    def stack_output(self, arguments: Mapping[str, str]) -> Any:
        """Fn::GetStackOutput: another stack's output (``stack_outputs.py``); TemplateError where it cannot be read."""


def resolve(value: Any, context: ResolveContext, where: str = "") -> Any:
    """``value`` with every intrinsic function replaced by its result; NO_VALUE when it is ``AWS::NoValue``."""
    try:
        if is_function(value):
            [(name, argument)] = value.items()
            handler = _FUNCTIONS.get(name)
            if handler is None:
                raise unsupported_function(name)
            return handler(argument, context, where)
        if isinstance(value, dict):
            resolved = {key: resolve(item, context, f"{where}.{key}" if where else str(key)) for key, item in value.items()}
            return {key: item for key, item in resolved.items() if item is not NO_VALUE}
        if isinstance(value, list):
            items = [resolve(item, context, f"{where}[{index}]") for index, item in enumerate(value)]
            return [item for item in items if item is not NO_VALUE]
        return value
    except TemplateError as error:
        raise error.at(where) from None


def unsupported_function(name: str, supported_functions: Tuple[str, ...] = ()) -> TemplateError:
    """The service's error for a function it does not know (or, without its transform, does not allow)."""
    supported = ", ".join(supported_functions or SUPPORTED_FUNCTIONS)
    return TemplateError(f"Template format error: Encountered unsupported function: {name} Supported functions are: [{supported}]")


def sub_variables(template: str) -> List[str]:
    """The variable names of an Fn::Sub string, ``${!Literal}`` left out."""
    return [name for name in SUB_VARIABLE.findall(template) if not name.startswith("!")]


def get_att_target(argument: Any) -> Tuple[str, Any]:
    """(logical id, attribute) of an Fn::GetAtt argument: ``[Res, Attr]`` or ``"Res.Attr"`` (split at the first dot)."""
    if isinstance(argument, str) and "." in argument:
        logical_id, _, attribute = argument.partition(".")
        argument = [logical_id, attribute]
    if not (isinstance(argument, list) and len(argument) == 2 and isinstance(argument[0], str) and argument[0]
            and (isinstance(argument[1], str) and argument[1] or is_function(argument[1]))):
        raise TemplateError("Template error: every Fn::GetAtt object requires two non-empty parameters, "
                            "the resource name and the resource attribute")
    return argument[0], argument[1]


# The service's words for a function's arguments of the wrong shape, which it refuses as the template arrives whatever the
# values (``transforms.check_functions``): Ref's as caktus/aws-web-stacks#100 quotes it; Fn::Join's as a CreateStack
# ValidationError (bazaarvoice/cloudformation-ruby-dsl#131) and ValidateTemplate (aws-solutions/innovation-sandbox-on-aws#137)
# answer it; Fn::Sub's as ValidateTemplate answers it (serverless-operations/serverless-step-functions#252).
_REF_ARGUMENT = "Template error: every Ref object must have a single String value."
_JOIN_ARGUMENTS = ("Template error: every Fn::Join object requires two parameters, (1) a string delimiter and (2) a list of "
                   "strings to be joined or a function that returns a list of strings (such as Fn::GetAZs) to be joined.")
_SUB_ARGUMENTS = ("Template error: One or more Fn::Sub intrinsic functions don't specify expected arguments. Specify a string "
                  "as first argument, and an optional second argument to specify a mapping of values to replace in the string")


def ref_argument(argument: Any) -> str:
    """The name a Ref names, or the service's error."""
    if not isinstance(argument, str):
        raise TemplateError(_REF_ARGUMENT)
    return argument


def join_arguments(argument: Any) -> Tuple[str, Any]:
    """Fn::Join's delimiter (a string: no function may give it) and its values (a list, or a function giving one)."""
    if isinstance(argument, list) and len(argument) == 2 and isinstance(argument[0], str) \
            and (isinstance(argument[1], list) or is_function(argument[1])):
        return argument[0], argument[1]
    raise TemplateError(_JOIN_ARGUMENTS)


def sub_arguments(argument: Any) -> Tuple[str, Dict[str, Any]]:
    """Fn::Sub's string (no function may give it) and its variable map (empty in the one-string form)."""
    if isinstance(argument, str):
        return argument, {}
    if isinstance(argument, list) and len(argument) == 2 and isinstance(argument[0], str) and isinstance(argument[1], dict):
        return argument[0], argument[1]
    raise TemplateError(_SUB_ARGUMENTS)


def _ref(argument: Any, context: ResolveContext, where: str) -> Any:
    argument = ref_argument(argument)
    if argument in context.parameters:
        value = context.parameters[argument]
        return list(value) if isinstance(value, list) else value
    if argument in PSEUDO_PARAMETERS:
        return context.pseudo_parameters.value(argument)
    return context.ref(argument)


def _get_att(argument: Any, context: ResolveContext, where: str) -> Any:
    logical_id, attribute = get_att_target(argument)
    attribute = resolve(attribute, context, where)
    if not isinstance(attribute, str):
        raise TemplateError("Template error: the attribute name of Fn::GetAtt must resolve to a string")
    return context.get_att(logical_id, attribute)


def _sub(argument: Any, context: ResolveContext, where: str) -> str:
    text, given = sub_arguments(argument)
    variables = {name: resolve(item, context, f"{where}.{name}") for name, item in given.items()}

    def substitute(found: "re.Match[str]") -> str:
        name = found.group(1)
        if name.startswith("!"):
            return "${" + name[1:] + "}"
        if not _SUB_NAME.fullmatch(name):
            raise TemplateError("Template error: variable names in Fn::Sub syntax must contain only alphanumeric "
                                "characters, underscores, periods, and colons")
        if name in variables:
            value = variables[name]
        elif name in context.parameters or name in PSEUDO_PARAMETERS:
            value = _ref(name, context, where)
        elif "." in name:
            logical_id, _, attribute = name.partition(".")
            value = context.get_att(logical_id, attribute)
        else:
            value = context.ref(name)
        text = scalar_text(value)
        if text is None:
            raise TemplateError(f"Template error: variable {name} in Fn::Sub expression does not resolve to a string")
        return text

    return SUB_VARIABLE.sub(substitute, text)


def _join(argument: Any, context: ResolveContext, where: str) -> str:
    delimiter, values = join_arguments(argument)
    items = resolve(values, context, where)
    texts = [scalar_text(item) for item in items] if isinstance(items, list) else [None]
    if any(text is None for text in texts):
        raise TemplateError(_JOIN_ARGUMENTS)
    return delimiter.join(texts)  # type: ignore[arg-type]


def _select(argument: Any, context: ResolveContext, where: str) -> Any:
    resolved = resolve(argument, context, where)
    if not (isinstance(resolved, list) and len(resolved) == 2 and isinstance(resolved[1], list)):
        raise TemplateError("Template error: Fn::Select requires a list argument with two elements: an integer index and a list")
    index, items = resolved
    try:
        position = int(str(index))
    except ValueError:
        raise TemplateError("Template error: Fn::Select requires a list argument with two elements: an integer index and a list") from None
    if not 0 <= position < len(items):
        raise TemplateError(f"Template error: Fn::Select cannot select nonexistent value at index {position}")
    return items[position]


_SPLIT_ARGUMENTS = ("Template error: every Fn::Split object requires two parameters, (1) a string delimiter and "
                    "(2) a string to be split or a function that returns a string to be split.")


def split_arguments(argument: Any) -> List[Any]:
    """Fn::Split's [delimiter, text] (as written, or resolved), or the service's error."""
    if not (isinstance(argument, list) and len(argument) == 2):
        raise TemplateError(_SPLIT_ARGUMENTS)
    return argument


def _split(argument: Any, context: ResolveContext, where: str) -> List[str]:
    delimiter, text = split_arguments(resolve(argument, context, where))
    if not (isinstance(delimiter, str) and delimiter and isinstance(text, str)):
        raise TemplateError(_SPLIT_ARGUMENTS)
    return text.split(delimiter)


def if_arguments(argument: Any) -> Tuple[str, Any, Any]:
    """Fn::If's condition name and its two values, refused in the service's words when their shape is wrong (users quote
    the first text from ValidateTemplate, aws-cloudformation/cfn-lint#316; the second is inferred alike)."""
    if not (isinstance(argument, list) and argument and isinstance(argument[0], str)):
        raise TemplateError("Template error: Fn::If requires a list argument with the first element being a condition")
    if len(argument) != 3:
        raise TemplateError("Template error: Fn::If requires a list argument with three elements")
    return argument[0], argument[1], argument[2]


def _if(argument: Any, context: ResolveContext, where: str) -> Any:
    name, when_true, when_false = if_arguments(argument)
    return resolve(when_true if condition_value(name, context) else when_false, context, where)


def condition_value(name: str, context: ResolveContext) -> bool:
    """The value of the condition ``name``, or the service's error when the template has none such."""
    if name not in context.conditions:
        raise TemplateError(f"Template error: unresolved condition dependency {name} in Fn::If")
    return context.conditions[name]


def find_in_map_arguments(argument: Any) -> Tuple[List[Any], Any]:
    """Fn::FindInMap's three keys and its DefaultValue (NO_VALUE when it has none: AWS::LanguageExtensions' fourth
    argument), refused in the service's words when their shape is wrong."""
    default: Any = NO_VALUE
    if isinstance(argument, list) and len(argument) == 4 and isinstance(argument[3], dict) and "DefaultValue" in argument[3]:
        default = argument[3]["DefaultValue"]
        argument = argument[:3]
    if not (isinstance(argument, list) and len(argument) == 3):
        raise TemplateError("Template error: every Fn::FindInMap object requires three parameters, the map name, map key "
                            "and the attribute for return value")
    return list(argument), default


def _find_in_map(argument: Any, context: ResolveContext, where: str) -> Any:
    arguments, default = find_in_map_arguments(argument)
    keys = [scalar_text(resolve(key, context, where)) for key in arguments]
    value: Any = context.mappings
    for key in keys:
        value = value.get(key, NO_VALUE) if isinstance(value, Mapping) and key is not None else NO_VALUE
    if value is NO_VALUE:
        if default is not NO_VALUE:
            return resolve(default, context, where)
        raise TemplateError(f"Template error: Unable to get mapping for {'::'.join(str(key) for key in keys)}")
    return resolve(value, context, where)


def _base64(argument: Any, context: ResolveContext, where: str) -> str:
    text = scalar_text(resolve(argument, context, where))
    if text is None:
        raise TemplateError("Template error: Fn::Base64 requires a string")
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def _cidr(argument: Any, context: ResolveContext, where: str) -> List[str]:
    resolved = resolve(argument, context, where)
    try:
        block, count, bits = resolved
        network = ipaddress.ip_network(str(block), strict=False)
        count, bits = int(str(count)), int(str(bits))
        prefix = network.max_prefixlen - bits
        if not (1 <= count <= 256 and 0 < bits and prefix >= network.prefixlen):
            raise ValueError
    except (TypeError, ValueError):
        raise TemplateError("Template error: Fn::Cidr requires an IP block in CIDR notation, a count of subnets (1 to 256) "
                            "and the number of subnet bits, which the block must be able to hold") from None
    subnets = []
    for subnet in network.subnets(new_prefix=prefix):
        subnets.append(str(subnet))
        if len(subnets) == count:
            return subnets
    raise TemplateError(f"Template error: Fn::Cidr cannot fit {count} subnets of {bits} bits in {block}")


def _get_azs(argument: Any, context: ResolveContext, where: str) -> List[str]:
    region = resolve(argument, context, where)
    if not isinstance(region, str):
        raise TemplateError("Template error: Fn::GetAZs requires a region name, or an empty string for the stack's region")
    return list(context.availability_zones(region or context.pseudo_parameters.region))


def _import_value(argument: Any, context: ResolveContext, where: str) -> Any:
    name = resolve(argument, context, where)
    if not isinstance(name, str):
        raise TemplateError("Template error: Fn::ImportValue requires the name of an export")
    return context.import_value(name)


def _get_stack_output(argument: Any, context: ResolveContext, where: str) -> Any:
    return context.stack_output(stack_output_argument(argument, lambda value, key: resolve(value, context, f"{where}.{key}")))


def _length(argument: Any, context: ResolveContext, where: str) -> int:
    items = resolve(argument, context, where)
    if not isinstance(items, list):
        raise TemplateError("Template error: Fn::Length requires a list, or a function that returns one")
    return len(items)


def _to_json_string(argument: Any, context: ResolveContext, where: str) -> str:
    value = resolve(argument, context, where)
    if not isinstance(value, (dict, list)):
        raise TemplateError("Template error: Fn::ToJsonString requires an object or a list")
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _condition_argument(value: Any, context: ResolveContext, where: str) -> bool:
    if isinstance(value, dict) and len(value) == 1 and "Condition" in value:
        if not isinstance(value["Condition"], str):
            raise TemplateError("Template format error: a Condition reference must be the name of a condition")
        return condition_value(value["Condition"], context)
    result = resolve(value, context, where)
    if not isinstance(result, bool):
        raise TemplateError("Template format error: Conditions can only be boolean operations on parameters and other conditions")
    return result


def _boolean_function(value: Any) -> bool:
    """Is ``value`` a condition function or a Condition reference (what Fn::And, Fn::Or and Fn::Not take)?"""
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in (*CONDITION_FUNCTIONS, "Condition")


def condition_arguments(function: str, argument: Any) -> List[Any]:
    """The arguments of a condition function (Fn::Equals, Fn::And, Fn::Or, Fn::Not), refused in the service's words when
    their shape is wrong, whatever the values: Fn::Equals, Fn::And and Fn::Or as users quote ValidateTemplate and CreateStack
    (aws-cloudformation/cfn-lint#1639, buildkite/elastic-ci-stack-for-aws#370); Fn::Not's inferred (Eucalyptus' copy of the
    service's texts)."""
    if function == "Fn::Equals":
        if not (isinstance(argument, list) and len(argument) == 2):
            raise TemplateError("Template error: every Fn::Equals object requires a list of 2 string parameters.")
    elif function == "Fn::Not":
        if not (isinstance(argument, list) and len(argument) == 1):
            raise TemplateError("Template error: Fn::Not requires a list argument with one element")
        if not _boolean_function(argument[0]):
            raise TemplateError("Template error: Fn::Not requires a list argument with one function token")
    elif not (isinstance(argument, list) and 2 <= len(argument) <= 10 and all(_boolean_function(item) for item in argument)):
        raise TemplateError(f"Template error: every {function} object requires a list of at least 2 and at most 10 boolean parameters.")
    return list(argument)


def _equals(argument: Any, context: ResolveContext, where: str) -> bool:
    left, right = (resolve(item, context, where) for item in condition_arguments("Fn::Equals", argument))
    return (scalar_text(left) if scalar_text(left) is not None else left) == (scalar_text(right) if scalar_text(right) is not None else right)


def _and(argument: Any, context: ResolveContext, where: str) -> bool:
    return all([_condition_argument(item, context, where) for item in condition_arguments("Fn::And", argument)])


def _or(argument: Any, context: ResolveContext, where: str) -> bool:
    return any([_condition_argument(item, context, where) for item in condition_arguments("Fn::Or", argument)])


def _not(argument: Any, context: ResolveContext, where: str) -> bool:
    [condition] = condition_arguments("Fn::Not", argument)
    return not _condition_argument(condition, context, where)


_FUNCTIONS: Dict[str, Callable[[Any, ResolveContext, str], Any]] = {
    "Fn::Base64": _base64,
    "Fn::Cidr": _cidr,
    "Fn::FindInMap": _find_in_map,
    "Fn::GetAtt": _get_att,
    "Fn::GetAZs": _get_azs,
    "Fn::GetStackOutput": _get_stack_output,
    "Fn::ImportValue": _import_value,
    "Fn::Join": _join,
    "Fn::Length": _length,
    "Fn::Select": _select,
    "Fn::Split": _split,
    "Fn::Sub": _sub,
    "Fn::ToJsonString": _to_json_string,
    "Ref": _ref,
    "Fn::If": _if,
    "Fn::Equals": _equals,
    "Fn::And": _and,
    "Fn::Or": _or,
    "Fn::Not": _not,
}
SUPPORTED_FUNCTIONS = tuple(_FUNCTIONS)
