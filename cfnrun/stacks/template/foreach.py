"""``Fn::ForEach`` of the ``AWS::LanguageExtensions`` transform: the template rewritten as the service rewrites it.

``'Fn::ForEach::Name': [Identifier, Collection, {OutputKey: OutputValue}]`` stands, in the
Conditions, Resources and Outputs sections and in any mapping inside a resource (its
Properties), for one ``OutputKey: OutputValue`` pair per item of the collection. In keys and
values ``${Identifier}`` becomes the item, ``&{Identifier}`` the item without its
non-alphanumeric characters, and ``{"Ref": Identifier}`` the item; an ``Fn::Sub`` left with
nothing to substitute becomes its text, so ``!Ref {Fn::Sub: 'Subnet${Id}'}`` and
``!GetAtt [!Sub 'Subnet${Id}', Arn]`` name the resources a loop made; an ``Fn::FindInMap``
whose keys are then text is looked up (its ``DefaultValue`` of ``AWS::NoValue`` removing the
key, as in the docs' example of a per-item ``Condition``). The collection is a list, a
``Ref`` to a list parameter (``CommaDelimitedList``, ``List<...>``) or an ``Fn::FindInMap``
giving a list; the identifier may be a list of identifiers when every item is a list of as many
values. Loops nest up to five deep. The expansion runs before anything else reads the
template (``loading.py``), with the operation's parameter values, so everything after it
(declarations, references, the change plan, ``GetTemplate`` of the ``Processed`` stage) sees
the expanded template only.

The service's wording of these refusals is not published; they are prefixed as the service
prefixes a transform's failure (``Transform AWS::LanguageExtensions failed with: ...``) and
the rest is inferred (docs/reference/templates.md says so).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple

from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.parameter_types import parameter_type

LOOP_PREFIX = "Fn::ForEach::"
MAX_DEPTH = 5
EXPANDED_SECTIONS = ("Conditions", "Resources", "Outputs")
FAILED = "Transform AWS::LanguageExtensions failed with: "
_ALPHANUMERIC = re.compile(r"^[A-Za-z0-9]+$")
_NOT_ALPHANUMERIC = re.compile(r"[^A-Za-z0-9]")


@dataclass(frozen=True)
class _Context:
    """What a collection may name: the template's parameters (with this operation's values) and mappings."""

    parameters: Mapping[str, Any]
    values: Mapping[str, str]
    mappings: Mapping[str, Any]
    taken: FrozenSet[str]  # names an identifier or loop name may not reuse: parameters and logical ids


def uses_for_each(document: Mapping[str, Any]) -> bool:
    """True when a section that may hold a loop holds one, at any depth."""
    return any(_has_loop(document.get(section)) for section in EXPANDED_SECTIONS)


def expand_for_each(document: Mapping[str, Any], parameter_values: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
    """The template with every loop expanded; TemplateError (the service's ValidationError) when a loop is wrong.

    ``parameter_values`` are the operation's values by parameter name; a parameter not given
    has its Default.
    """
    parameters = document.get("Parameters")
    mappings = document.get("Mappings")
    parameters = parameters if isinstance(parameters, dict) else {}
    resources = document.get("Resources")
    logical_ids = [key for key in resources if not str(key).startswith(LOOP_PREFIX)] if isinstance(resources, dict) else []
    context = _Context(parameters, dict(parameter_values or {}), mappings if isinstance(mappings, dict) else {},
                       frozenset(str(name) for name in [*parameters, *logical_ids]))
    expanded = dict(document)
    for section in EXPANDED_SECTIONS:
        block = document.get(section)
        if isinstance(block, dict):
            expanded[section] = _expand_mapping(block, context, 0, section, set())
    return expanded


def _has_loop(value: Any) -> bool:
    if isinstance(value, dict):
        return any(str(key).startswith(LOOP_PREFIX) or _has_loop(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_loop(item) for item in value)
    return False


def _fail(problem: str, where: str) -> TemplateError:
    return TemplateError(FAILED + problem, where)


def _expand_value(value: Any, context: _Context, depth: int, where: str, identifiers: Set[str]) -> Any:
    if isinstance(value, dict):
        return _expand_mapping(value, context, depth, where, identifiers)
    if isinstance(value, list):
        return [_expand_value(item, context, depth, f"{where}[{index}]", identifiers) for index, item in enumerate(value)]
    return value


def _expand_mapping(block: Mapping[str, Any], context: _Context, depth: int, where: str, identifiers: Set[str]) -> Dict[str, Any]:
    """``block`` with its loops replaced by what they make; a key made twice, or already there, is refused."""
    result: Dict[str, Any] = {}
    made_by_loops: Dict[str, str] = {}
    for key, value in block.items():
        key = str(key)
        if not key.startswith(LOOP_PREFIX):
            result[key] = _expand_value(value, context, depth, f"{where}.{key}", identifiers)
            continue
        here = f"{where}.{key}"
        for made_key, made_value in _run_loop(key, value, context, depth, here, identifiers):
            if made_key in result or made_key in made_by_loops or (made_key in block and made_key != key):
                raise _fail(f"{key} makes the key {made_key}, which is already in {where}", here)
            made_by_loops[made_key] = key
            result[made_key] = made_value
    return result


def _run_loop(key: str, loop: Any, context: _Context, depth: int, where: str, outer: Set[str]) -> List[Tuple[str, Any]]:
    name = key[len(LOOP_PREFIX):]
    if not _ALPHANUMERIC.match(name):
        raise _fail(f"the loop name of {key} must be alphanumeric", where)
    if name in context.taken:
        raise _fail(f"the loop name {name} of {key} is already a parameter or a logical id", where)
    if depth >= MAX_DEPTH:
        raise _fail(f"{key} nests deeper than {MAX_DEPTH} Fn::ForEach loops", where)
    if not isinstance(loop, list) or len(loop) != 3:
        raise _fail(f"{key} must be a list of three: an identifier, a collection and a fragment", where)
    identifier, collection, fragment = loop
    names = _identifiers(identifier, key, where)
    for identifier_name in names:
        if identifier_name in context.taken or identifier_name in outer:
            raise _fail(f"the identifier {identifier_name} of {key} is already a parameter, a logical id or "
                        "an identifier of an enclosing loop", where)
    if not isinstance(fragment, dict) or not fragment:
        raise _fail(f"the fragment of {key} must be a mapping of OutputKey to OutputValue", where)
    for output_key in fragment:
        if str(output_key).startswith(LOOP_PREFIX):
            continue
        if not any(f"${{{n}}}" in str(output_key) or f"&{{{n}}}" in str(output_key) for n in names):
            shown = " or ".join(f"${{{n}}}/&{{{n}}}" for n in names)
            raise _fail(f"the OutputKey {output_key} of {key} must contain the placeholder {shown}", where)
    made: List[Tuple[str, Any]] = []
    inner = outer | set(names)
    for item in _collection(collection, key, len(names), context, where):
        bindings = dict(zip(names, item))
        replaced = _resolve_maps(_substitute(fragment, bindings), context)
        for made_key, made_value in _expand_mapping(replaced, context, depth + 1, where, inner).items():
            made.append((made_key, made_value))
    return made


def _identifiers(identifier: Any, key: str, where: str) -> Tuple[str, ...]:
    names = identifier if isinstance(identifier, list) else [identifier]
    if not names or not all(isinstance(n, str) and _ALPHANUMERIC.match(n) for n in names):
        raise _fail(f"the identifier of {key} must be an alphanumeric string or a list of them", where)
    return tuple(names)


def _collection(collection: Any, key: str, width: int, context: _Context, where: str) -> List[Tuple[str, ...]]:
    items = _collection_items(collection, key, context, where)
    rows: List[Tuple[str, ...]] = []
    for item in items:
        if width == 1 and not isinstance(item, (list, dict)):
            rows.append((_text(item),))
        elif width > 1 and isinstance(item, list) and len(item) == width and not any(isinstance(v, (list, dict)) for v in item):
            rows.append(tuple(_text(v) for v in item))
        else:
            wanted = "a string" if width == 1 else f"a list of {width} strings (one per identifier)"
            raise _fail(f"every item of the collection of {key} must be {wanted}", where)
    return rows


def _collection_items(collection: Any, key: str, context: _Context, where: str) -> Sequence[Any]:
    if isinstance(collection, list):
        return collection
    if isinstance(collection, dict) and len(collection) == 1:
        [(function, argument)] = collection.items()
        if function == "Ref" and isinstance(argument, str):
            return _parameter_list(argument, key, context, where)
        if function == "Fn::FindInMap":
            return _mapped_list(argument, key, context, where)
    raise _fail(f"the collection of {key} must be a list, a Ref to a CommaDelimitedList parameter or an Fn::FindInMap", where)


def _parameter_list(name: str, key: str, context: _Context, where: str) -> List[str]:
    declared = context.parameters.get(name)
    if not isinstance(declared, dict):
        raise _fail(f"the collection of {key} refers to {name}, which is not a parameter", where)
    meaning = parameter_type(str(declared.get("Type")))
    if meaning is None or not meaning.is_list:
        raise _fail(f"the collection of {key} refers to {name}, which is not a list parameter (CommaDelimitedList, List<...>)", where)
    value = context.values.get(name, declared.get("Default"))
    if value is None:
        raise TemplateError(f"Parameters: [{name}] must have values", where)
    if isinstance(value, list):
        return [_text(item) for item in value]
    return [item.strip() for item in str(value).split(",")]


def _mapped_list(argument: Any, key: str, context: _Context, where: str) -> Sequence[Any]:
    if not isinstance(argument, list) or len(argument) not in (3, 4):
        raise _fail(f"the Fn::FindInMap collection of {key} must have a map name, a top-level key and a second-level key", where)
    names = [_scalar(part, key, context, where) for part in argument[:3]]
    found = context.mappings.get(names[0], {})
    found = found.get(names[1], {}) if isinstance(found, dict) else {}
    value = found.get(names[2]) if isinstance(found, dict) else None
    if value is None and len(argument) == 4 and isinstance(argument[3], dict):
        value = argument[3].get("DefaultValue")
    if value is None:
        raise TemplateError(f"Template error: Unable to get mapping for {'::'.join(names)}", where)
    if not isinstance(value, list):
        raise _fail(f"the Fn::FindInMap collection of {key} must give a list", where)
    return value


def _scalar(part: Any, key: str, context: _Context, where: str) -> str:
    if isinstance(part, dict) and list(part) == ["Ref"] and isinstance(part["Ref"], str):
        declared = context.parameters.get(part["Ref"])
        value = context.values.get(part["Ref"], declared.get("Default") if isinstance(declared, dict) else None)
        if value is not None:
            return _text(value)
    if isinstance(part, (dict, list)):
        raise _fail(f"the Fn::FindInMap collection of {key} can use only strings and Refs to parameters", where)
    return _text(part)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


_NO_VALUE = {"Ref": "AWS::NoValue"}


def _resolve_maps(value: Any, context: _Context) -> Any:
    """``Fn::FindInMap`` calls whose keys are now text, looked up as the transform looks them up while it expands
    (the docs' example: ``Condition: !FindInMap [Map, Condition, !Ref Id, {DefaultValue: !Ref AWS::NoValue}]``);
    a ``DefaultValue`` of ``AWS::NoValue`` removes the key. Others are left to the engine."""
    if isinstance(value, list):
        return [_resolve_maps(item, context) for item in value]
    if not isinstance(value, dict):
        return value
    resolved: Dict[str, Any] = {}
    for key, item in value.items():
        found = _mapped_value(item, context)
        if found is _NO_VALUE:
            continue
        resolved[key] = found if found is not None else _resolve_maps(item, context)
    return resolved


def _mapped_value(value: Any, context: _Context) -> Any:
    if not (isinstance(value, dict) and list(value) == ["Fn::FindInMap"] and isinstance(value["Fn::FindInMap"], list)):
        return None
    argument = value["Fn::FindInMap"]
    if len(argument) not in (3, 4) or not all(isinstance(part, str) for part in argument[:3]):
        return None
    top = context.mappings.get(argument[0])
    second = top.get(argument[1]) if isinstance(top, dict) else None
    found = second.get(argument[2]) if isinstance(second, dict) else None
    if found is None and len(argument) == 4 and isinstance(argument[3], dict) and "DefaultValue" in argument[3]:
        default = argument[3]["DefaultValue"]
        return _NO_VALUE if default == _NO_VALUE else default
    return found


def _substitute(value: Any, bindings: Mapping[str, str]) -> Any:
    """``value`` with the identifiers replaced by their items, in keys and values (nested loops keep their own)."""
    if isinstance(value, str):
        for name, item in bindings.items():
            value = value.replace(f"${{{name}}}", item).replace(f"&{{{name}}}", _NOT_ALPHANUMERIC.sub("", item))
        return value
    if isinstance(value, list):
        return [_substitute(item, bindings) for item in value]
    if isinstance(value, dict):
        if list(value) == ["Ref"] and isinstance(value["Ref"], str) and value["Ref"] in bindings:
            return bindings[value["Ref"]]
        replaced = {_substitute(str(key), bindings): _substitute(item, bindings) for key, item in value.items()}
        return _plain_sub(replaced)
    return value


def _plain_sub(value: Dict[str, Any]) -> Any:
    """An ``Fn::Sub`` left with nothing to substitute is its text, as the service writes it
    (``!GetAtt [!Sub 'Attachment${Id}', AllocationId]`` → ``!GetAtt [AttachmentA, AllocationId]``)."""
    if list(value) != ["Fn::Sub"]:
        return value
    argument = value["Fn::Sub"]
    text = argument[0] if isinstance(argument, list) and len(argument) == 2 and argument[1] == {} else argument
    return text if isinstance(text, str) and "${" not in text else value
