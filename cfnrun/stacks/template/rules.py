"""The Rules section: each rule's assertions checked with the operation's parameter values, before anything runs.

AWS's user guide ("CloudFormation template Rules syntax", "Rule functions"): rules validate
parameter values before CloudFormation creates or updates any resources; a rule whose
``RuleCondition`` is false is skipped; when an ``Assert`` is false, the stack is not created or
updated. So CreateStack, UpdateStack and CreateChangeSet are refused, as a ``ValidationError``
whose message is the assertion's ``AssertDescription`` (inferred: the guide does not quote the
service's answer).

The functions are the guide's rule functions: ``Fn::And``, ``Fn::Or``, ``Fn::Not``, ``Fn::Equals``,
``Fn::Contains``, ``Fn::EachMemberEquals``, ``Fn::EachMemberIn``, over ``Ref``s to parameters and
pseudo parameters (and the other functions a value may use). ``Fn::RefAll``, ``Fn::ValueOf`` and
``Fn::ValueOfAll`` read the account's resources (every VPC id, a subnet's VPC...), which a local
stack has not: a rule using one is not checked.
"""
from __future__ import annotations

from typing import Any, List, Mapping

from cfnrun.stacks.template.conditions import values_scope
from cfnrun.stacks.template.declarations import scalar_text
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.intrinsics import resolve
from cfnrun.stacks.template.parameters import ParameterValue
from cfnrun.stacks.template.pseudo import PseudoParameters

ACCOUNT_LOOKUPS = ("Fn::RefAll", "Fn::ValueOf", "Fn::ValueOfAll")
_BOOLEAN_FUNCTIONS = ("Fn::And", "Fn::Or", "Fn::Not", "Fn::Equals", "Fn::Contains", "Fn::EachMemberEquals", "Fn::EachMemberIn")


def check_rules(
    rules: Any, parameters: Mapping[str, ParameterValue], pseudo_parameters: PseudoParameters,
    mappings: Mapping[str, Mapping[str, Mapping[str, Any]]],
) -> None:
    """Refuse the operation, with the assertion's AssertDescription, when an assertion of a rule that applies is false."""
    if not isinstance(rules, dict):
        return
    scope = values_scope(parameters, pseudo_parameters, mappings, "Rules")
    for name, rule in rules.items():
        if not isinstance(rule, dict) or _uses_lookups(rule):
            continue
        where = f"Rules.{name}"
        condition = rule.get("RuleCondition")
        if condition is not None and not _truth(condition, scope, f"{where}.RuleCondition"):
            continue
        assertions = rule.get("Assertions")
        for index, assertion in enumerate(assertions if isinstance(assertions, list) else []):
            if not isinstance(assertion, dict) or _truth(assertion.get("Assert"), scope, f"{where}.Assertions[{index}]"):
                continue
            description = assertion.get("AssertDescription")
            if description is None:  # cfnrun's words: without a description the service's answer is not known
                raise TemplateError(f"Template error: assertion {index + 1} of rule {name} failed", where)
            raise TemplateError(str(description))


def _truth(value: Any, scope: Any, where: str) -> bool:
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _BOOLEAN_FUNCTIONS:
        [(name, argument)] = value.items()
        if name == "Fn::Not":
            return not _truth(_arguments(name, argument, 1)[0], scope, where)
        if name in ("Fn::And", "Fn::Or"):
            if not (isinstance(argument, list) and 2 <= len(argument) <= 10):
                raise TemplateError(f"Template error: every {name} object requires a list of at least 2 and at most 10 boolean parameters.", where)
            truths = [_truth(item, scope, where) for item in argument]
            return all(truths) if name == "Fn::And" else any(truths)
        left, right = (_value(item, scope, where) for item in _arguments(name, argument, 2))
        if name == "Fn::Equals":
            return _text(left) == _text(right)
        if name == "Fn::Contains":  # [list, value]: the value is one of the list's
            return _text(right) in _texts(name, left, where)
        if name == "Fn::EachMemberEquals":  # [list, value]: every member is the value
            return all(member == _text(right) for member in _texts(name, left, where))
        allowed = _texts(name, right, where)
        return all(member in allowed for member in _texts(name, left, where))  # Fn::EachMemberIn: [list, list]
    result = _value(value, scope, where)
    text = scalar_text(result)
    if isinstance(result, bool) or text in ("true", "false"):
        return result is True or text == "true"
    raise TemplateError("Template error: every Assert and RuleCondition must be a rule function that is true or false", where)


def _value(value: Any, scope: Any, where: str) -> Any:
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _BOOLEAN_FUNCTIONS:
        return _truth(value, scope, where)
    return resolve(value, scope, where)


def _arguments(name: str, argument: Any, count: int) -> List[Any]:
    if not (isinstance(argument, list) and len(argument) == count):
        raise TemplateError(f"Template error: {name} requires a list of {count} arguments")
    return argument


def _text(value: Any) -> Any:
    text = scalar_text(value)
    return value if text is None else text


def _texts(name: str, value: Any, where: str) -> List[Any]:
    if not isinstance(value, list):
        raise TemplateError(f"Template error: {name} requires a list of strings where it compares members", where)
    return [_text(item) for item in value]


def _uses_lookups(value: Any) -> bool:
    if isinstance(value, dict):
        return any(key in ACCOUNT_LOOKUPS or _uses_lookups(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_uses_lookups(item) for item in value)
    return False
