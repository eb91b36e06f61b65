"""cfn-lint's per-resource overheads cut, its findings unchanged: validator classes made once, fields read once, plain names looked up.

cfn-lint 1.x checks each resource with validators it extends on the spot: every ``extend`` calls
``cfnlint.jsonschema.validators.create``, which builds a new dataclass from the same keyword
functions. Over a template of 500 like resources that was a thousand classes built, a sixth of
the lint's CPU (cProfile, 2026-11-27). A class ``create`` makes depends only on its arguments (the
keyword functions, the function filter's settings, the function resolvers: none ever changed), so the first
class made for a set of them is handed out again — the same checks run, the findings are the same.
Each ``evolve`` (of a validator, a context, a function filter: some 100 per resource) then lists its
class's fields with ``dataclasses.fields``, which builds the same tuple each time (another tenth);
``fields_once`` keeps it per class. And rule E3030's ``enum`` compares a value with each allowed one
through cfn-lint's ``equal`` (which treats "true" and true alike): a Ref or a Sub's name against the
template's every parameter and resource, a sum that grows with the square of the resources (an
eighth at 500). ``enum_found_first`` first looks the value up with Python's own ``in``: a plain
string found equal to a plain string is a match ``equal`` would make too, so nothing is reported;
anything else goes to cfn-lint's ``enum`` as before. Two resource-attribute rules find nothing at once on a
resource without their attributes (``lint_attributes.py``), and a context evolves by copying its fields
(``lint_contexts.py``). These are private touches of cfn-lint (``lint.py``
has another), guarded by ``tests/unit/test_stack_lint_classes.py`` (the findings with and without them).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, Hashable, Iterable, Iterator, Mapping, Optional, Tuple

ENUM_RULE = "E3030"  # whose enum keyword checks Refs' and Subs' names
FIELDS_READERS = ("cfnlint.context.context", "cfnlint.jsonschema._filter", "cfnlint.jsonschema.validators")  # modules evolving dataclasses
MOST_CLASSES = 1024  # distinct keyword sets are a few per rule; past this the table starts again
PATCHED_MAJOR = "1."  # the cfn-lint these touches were made for and tested on; another runs as it is
_CREATE_ARGUMENTS = frozenset({"validators", "function_filter", "fn_resolvers"})


def _identity(function: Any) -> Hashable:
    """What makes a keyword function the same one: a bound method is made anew at each lookup, its parts are not."""
    bound_to = getattr(function, "__self__", None)
    if bound_to is not None and hasattr(function, "__func__"):
        return (id(bound_to), id(function.__func__))
    return id(function)


def _filter_key(function_filter: Any) -> Hashable:
    """A function filter by value: cfn-lint makes a new one (``evolve``) for each check, with the same settings, and never changes one."""
    if function_filter is None or not dataclasses.is_dataclass(function_filter):
        return id(function_filter)
    return (type(function_filter), tuple((field.name, repr(getattr(function_filter, field.name))) for field in dataclasses.fields(function_filter)))


def _key(mapping: Optional[Mapping[str, Any]]) -> Tuple[Hashable, ...]:
    return tuple((name, _identity(value)) for name, value in (mapping or {}).items())


def remembering(create: Callable[..., Any]) -> Callable[..., Any]:
    """``create``, handing out the class it made before for the same arguments."""
    classes: Dict[Tuple[Hashable, ...], Tuple[Any, Tuple[Any, ...]]] = {}

    def create_once(*given: Any, **named: Any) -> Any:
        if given or not named.keys() <= _CREATE_ARGUMENTS:  # called otherwise than cfn-lint 1.x calls it: as it is
            return create(*given, **named)
        validators, function_filter, fn_resolvers = named.get("validators"), named.get("function_filter"), named.get("fn_resolvers")
        key = (_key(validators), _filter_key(function_filter), _key(fn_resolvers))
        made = classes.get(key)
        if made is None:
            if len(classes) >= MOST_CLASSES:
                classes.clear()
            # the arguments are kept beside the class so that the ids in its key stay theirs
            made = classes[key] = (create(validators=validators, function_filter=function_filter, fn_resolvers=fn_resolvers), (validators, function_filter, fn_resolvers))
        return made[0]

    create_once.remembers = True  # type: ignore[attr-defined]
    create_once.__wrapped__ = create  # type: ignore[attr-defined]
    return create_once


def fields_once(fields: Callable[[Any], Tuple[Any, ...]]) -> Callable[[Any], Tuple[Any, ...]]:
    """``dataclasses.fields``, read once per class (a class's fields are fixed when it is made; an instance is asked each time)."""
    known: Dict[type, Tuple[Any, ...]] = {}

    def fields_of(class_or_instance: Any) -> Tuple[Any, ...]:
        if not isinstance(class_or_instance, type):
            return fields(class_or_instance)
        found = known.get(class_or_instance)
        if found is None:
            if len(known) >= MOST_CLASSES:
                known.clear()
            found = known[class_or_instance] = fields(class_or_instance)
        return found

    fields_of.remembers = True  # type: ignore[attr-defined]
    fields_of.__wrapped__ = fields  # type: ignore[attr-defined]
    return fields_of


def enum_found_first(enum: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """cfn-lint's ``enum`` keyword, skipped where the value is plainly one of the allowed (no finding either way)."""

    def enum_or_found(validator: Any, enums: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if type(instance) is str and isinstance(enums, (list, tuple)) and instance.lower() not in ("true", "false"):
            try:
                if type(enums[enums.index(instance)]) is str:
                    return
            except ValueError:
                pass
        yield from enum(validator, enums, instance, schema)

    enum_or_found.remembers = True  # type: ignore[attr-defined]
    enum_or_found.__wrapped__ = enum  # type: ignore[attr-defined]
    return enum_or_found


def install(rules: Iterable[Any]) -> None:
    """Route cfn-lint's ``extend`` through ``remembering``, its ``evolve``s' ``fields`` through ``fields_once``, E3030's ``enum`` through ``enum_found_first`` (once per process; ``rules``: a runner's)."""
    import importlib

    from cfnlint.version import __version__ as cfn_lint_version

    if not cfn_lint_version.startswith(PATCHED_MAJOR):
        return  # another cfn-lint's internals: it lints as it is, only slower
    try:
        _install(rules, importlib)
    except (AttributeError, ImportError, KeyError, TypeError):  # internals moved within 1.x: whatever was not patched stays cfn-lint's own
        pass


def _install(rules: Iterable[Any], importlib: Any) -> None:
    from cfnlint.jsonschema import validators

    from cfnlint.context.context import Context

    from cfnrun.stacks.template import lint_attributes, lint_contexts

    if not getattr(validators.create, "remembers", False):
        validators.create = remembering(validators.create)
    for name in FIELDS_READERS:
        module = importlib.import_module(name)
        if not getattr(module.fields, "remembers", False):
            module.fields = fields_once(module.fields)  # type: ignore[attr-defined]
    lint_contexts.install([Context])
    rules = list(rules)
    lint_attributes.install(rules)
    for rule in rules:  # cfn-lint loads its rules from their files, as modules of their own
        if getattr(rule, "id", None) == ENUM_RULE:
            rule_module = type(rule).enum.__globals__
            if not getattr(rule_module["enum"], "remembers", False):
                rule_module["enum"] = enum_found_first(rule_module["enum"])
