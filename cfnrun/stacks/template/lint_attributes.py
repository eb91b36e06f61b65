"""cfn-lint's resource-attribute rules skipped on a resource without the attributes they check: the findings unchanged.

Two of the rules cfn-lint 1.x runs on every resource check one or two of its attributes against a
schema of their own: E3016 its ``UpdatePolicy`` (``update_policy.json``: an ``if`` per resource type
whose ``then`` or ``else`` names only ``UpdatePolicy``), W3011 its ``DeletionPolicy`` and
``UpdateReplacePolicy`` (``update_policy_delete.json``: one branch of its ``anyOf`` holds when both
are absent). A resource without those attributes (most of them) passes such a schema whatever else
it holds, yet cfn-lint still evolves validators and a resolver and walks the schema's branches for
it: a quarter of the lint of 500 like resources (10.5 → 7.8 G instructions, 2026-11-27). Here those
rules find nothing at once on such a resource.

That nothing is found is read from the rule's schema as loaded (``passes_without``), not assumed:
the schema may use only ``allOf``, ``anyOf``, ``if``/``then``/``else``, ``type: object``,
``additionalProperties: true`` and ``properties`` among the attributes checked (a ``required``, a
``$ref`` or any other keyword where it would be read, and the rule runs as it is); an ``if``'s own
result only chooses between ``then`` and ``else``, so both must pass. The rule's own code (read
on cfn-lint 1.51) reads no other attribute: E3016 looks at ``UpdatePolicy`` before its schema,
W3011 at ``Type`` to skip Lambda versions (which find nothing either). A resource given as one
function (``{"Fn::If": ...}``), a validator that would add cfn-lint's own keyword, or any attribute
checked being present: the rule runs as it is.
"""
from __future__ import annotations

from typing import Any, Callable, Collection, Iterable, Iterator, List, Set, Tuple

RULES = {"E3016": ("UpdatePolicy",), "W3011": ("DeletionPolicy", "UpdateReplacePolicy")}  # rule id -> the attributes it checks
RESOURCE_ATTRIBUTES = frozenset({"Properties", "DependsOn", "Condition", "Metadata", "CreationPolicy", "DeletionPolicy", "UpdatePolicy", "UpdateReplacePolicy"})
_IGNORED = frozenset({"definitions", "$schema", "$id", "description", "title", "$comment"})  # not keywords: never read on the instance


def passes_without(schema: Any, attributes: Collection[str]) -> bool:
    """Whether every object without ``attributes`` (and not one function) is valid under ``schema``, read conservatively (False: not shown)."""
    if schema is True or schema == {}:
        return True
    if not isinstance(schema, dict):
        return False
    for keyword, value in schema.items():
        if keyword in _IGNORED or keyword == "if":
            continue
        if keyword == "properties":
            if not isinstance(value, dict) or not set(value) <= set(attributes):
                return False
        elif keyword == "additionalProperties":
            if value is not True:
                return False
        elif keyword == "type":
            if value != "object" and value != ["object"]:
                return False
        elif keyword in ("then", "else"):
            if "if" not in schema or not passes_without(value, attributes):
                return False
        elif keyword == "allOf":
            if not isinstance(value, list) or not all(passes_without(part, attributes) for part in value):
                return False
        elif keyword == "anyOf":
            if not isinstance(value, list) or not any(passes_without(part, attributes) for part in value):
                return False
        else:
            return False
    return True


def reads_only(validate: Any, attributes: Collection[str]) -> bool:
    """Whether a rule's own ``validate`` names no resource attribute but ``attributes`` (its code's constants, nested code's included)."""
    code = getattr(getattr(validate, "__func__", validate), "__code__", None)
    if code is None:
        return False
    names: Set[str] = set()
    pending: List[Any] = list(code.co_consts)
    while pending:
        constant = pending.pop()
        if isinstance(constant, str):
            names.add(constant)
        elif isinstance(constant, (tuple, frozenset)):  # folded constants: ("Condition",), {"A", "B"}
            pending.extend(constant)
        elif hasattr(constant, "co_consts"):  # nested code: comprehensions, lambdas
            pending.extend(constant.co_consts)
    return not (names & RESOURCE_ATTRIBUTES) - set(attributes)


def _runs_as_it_is(validator: Any, instance: Any, attributes: Tuple[str, ...]) -> bool:
    """Whether the rule must run: not a resource's mapping, one checked attribute present, a function in its place, or cfn-lint's keyword to add."""
    if not isinstance(instance, dict) or any(attribute in instance for attribute in attributes):
        return True
    if any(isinstance(key, str) and (key == "Ref" or key.startswith("Fn::")) for key in instance):
        return True
    return getattr(getattr(validator, "function_filter", None), "add_cfn_lint_keyword", True) is not False


def skipping_without(validate: Callable[..., Iterator[Any]], attributes: Iterable[str]) -> Callable[..., Iterator[Any]]:
    """A rule's ``validate``, finding nothing at once on a resource that holds none of ``attributes``."""
    checked = tuple(attributes)

    def validate_or_skip(validator: Any, keywords: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if _runs_as_it_is(validator, instance, checked):
            yield from validate(validator, keywords, instance, schema)

    validate_or_skip.remembers = True  # type: ignore[attr-defined]
    validate_or_skip.__wrapped__ = validate  # type: ignore[attr-defined]
    return validate_or_skip


def install(rules: Iterable[Any]) -> None:
    """Route E3016's and W3011's ``validate`` (a runner's ``rules``) through ``skipping_without``, where their schemas show it finds nothing."""
    for rule in rules:
        attributes = RULES.get(getattr(rule, "id", None) or "")
        if attributes is None or getattr(rule.validate, "remembers", False):
            continue
        if passes_without(getattr(rule, "_schema", None), attributes) and reads_only(type(rule).validate, attributes):
            rule.validate = skipping_without(rule.validate, attributes)
