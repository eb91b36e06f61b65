"""Rules over a request before it is sent: what a handler may assume about its input."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Dict, Iterator, List, Optional, Tuple

from cfnrun.contract import violations as rules
from cfnrun.contract.violations import Violation
from cfnrun.model.protocol import Action
from cfnrun.model.schema import ResourceSchema


def check_request(
    action: Action, schema: ResourceSchema, desired: Dict[str, Any], previous: Optional[Dict[str, Any]]
) -> List[Violation]:
    return list(_check(action, schema, desired, previous))


def _check(action: Action, schema: ResourceSchema, desired: Dict[str, Any], previous: Optional[Dict[str, Any]]) -> Iterator[Violation]:
    if action in (Action.CREATE, Action.UPDATE):
        yield from schema_problems(schema, desired, rules.REQUEST_VALID, "/desiredResourceState")
    if action is Action.CREATE:
        for pointer in schema.read_only_properties:
            if schema.has_value(desired, pointer):
                yield Violation(
                    rules.REQUEST_NO_READ_ONLY,
                    f"the create request sets readOnly property {pointer}; the handler sets it, leave it out",
                    "/desiredResourceState" + pointer.replace("/properties", "", 1),
                )
    if action is Action.UPDATE and previous:
        for pointer in schema.create_only_properties:
            before, after = schema.value_at(previous, pointer), schema.value_at(desired, pointer)
            if before != after:
                yield Violation(
                    rules.UPDATE_CREATE_ONLY,
                    f"createOnly property {pointer} changes from {before!r} to {after!r}: CloudFormation would not call "
                    "UPDATE for this, it would replace the resource (CREATE a new one, then DELETE the old one)",
                    "/desiredResourceState" + pointer.replace("/properties", "", 1),
                )
    if action in (Action.READ, Action.UPDATE, Action.DELETE):
        groups = [schema.primary_identifier] + schema.additional_identifiers
        if not any(group and all(schema.has_value(desired, p) for p in group) for group in groups):
            names = " or ".join("+".join(group) for group in groups if group) or "(the schema declares none)"
            yield Violation(
                rules.REQUEST_IDENTIFIER,
                f"the {action.value} request carries no identifier: set {names} in desiredResourceState",
                "/desiredResourceState",
            )


def schema_problems(schema: ResourceSchema, document: Dict[str, Any], rule: rules.Rule, at: str, subject: str = "the request") -> List[Violation]:
    """``document`` against the whole schema; each problem a violation of ``rule`` pointing under ``at``."""
    return [
        Violation(
            rule,
            f"{subject} is not valid against the schema ({error.validator}): {error.message}",
            at + "".join(f"/{part}" for part in error.absolute_path),
        )
        for error in _validator(schema.document).iter_errors(document)
    ]


_COMPILED_LIMIT = 64
# id(schema document) -> (that document, its validator). The entry holds the document, so its id is not
# reused while cached; a reloaded schema is a new document (a new id) and is compiled afresh.
_compiled: "OrderedDict[int, Tuple[Dict[str, Any], Any]]" = OrderedDict()


def _validator(schema_document: Dict[str, Any]) -> Any:
    """The validator for a schema document, compiled once per document rather than once per check."""
    key = id(schema_document)
    entry = _compiled.get(key)
    if entry is not None and entry[0] is schema_document:
        _compiled.move_to_end(key)
        return entry[1]
    from cfnrun.model.schema_validator import SchemaValidator  # jsonschema: only for the requests it validates

    full = {key: value for key, value in schema_document.items() if key not in ("$schema", "$id")}
    validator = SchemaValidator(full)
    _compiled[key] = (schema_document, validator)
    if len(_compiled) > _COMPILED_LIMIT:
        _compiled.popitem(last=False)
    return validator
