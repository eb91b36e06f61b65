"""Rules over a request before it is sent: what a handler may assume about its input."""
from __future__ import annotations

import hashlib
import marshal
from collections import OrderedDict
from typing import Any, Dict, Iterator, List, Optional, Tuple

from cfnrun.contract import violations as rules
from cfnrun.contract.service_wording import service_lines
from cfnrun.contract.validity_proof import prove
from cfnrun.contract.violations import Violation
from cfnrun.model.protocol import Action
from cfnrun.model.schema import ResourceSchema
from cfnrun.model.type_configuration import configuration_schema


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
        Violation(rule, f"{subject} is not valid against the schema ({validator}): {message}", at + "".join(f"/{part}" for part in path))
        for validator, message, path, _ in _compiled_schema(schema.document).errors(document)
    ]


def service_problems(schema: ResourceSchema, document: Dict[str, Any]) -> List[str]:
    """``document``'s problems against the whole schema as the service words them when it refuses a resource's
    properties (``service_wording.py``), each once, in order."""
    return list(dict.fromkeys(line for *_, worded in _compiled_schema(schema.document).errors(document) for line in worded.split("\n")))


def configuration_problems(schema: ResourceSchema, configuration: Dict[str, Any]) -> List[str]:
    """``configuration`` (SetTypeConfiguration's) against the schema's ``typeConfiguration``, worded as ``service_problems``
    words a resource's properties: no value is shown (a type's configuration often holds credentials). None declared: none."""
    fragment = configuration_schema(schema)
    return service_problems(fragment, configuration) if fragment is not None else []


# the keyword that failed, jsonschema's message, the path into the document, and the service's words for it
Error = Tuple[str, str, Tuple[Any, ...], str]


class _CompiledSchema:
    """A schema document's validator, and the errors of the documents it validated lately.

    A stack validates each resource's properties before it starts and the contract checks the same
    properties again as the CREATE's request: the second is recognised rather than validated.
    A document is known by a digest of its exact form (``marshal``: key order and types kept, an
    object that is not plain data is validated each time), so no property value is kept as a key.
    A verdict a pattern's deadline could have changed is never kept (``_timed``).
    """

    REMEMBERED = 256

    def __init__(self, document: Dict[str, Any], validator: Any) -> None:
        from cfnrun.model.patterns import CHEAP_TEXT_CHARS, may_backtrack  # loaded with jsonschema's validator anyway

        self.document, self.validator, self._cheap_chars = document, validator, CHEAP_TEXT_CHARS
        self._proof = prove(validator.schema, validator.VALIDATORS)  # most documents are valid, proven so quickly
        self._timed = any(may_backtrack(pattern) for pattern in _patterns(document))
        self._verdicts: "OrderedDict[bytes, List[Error]]" = OrderedDict()

    def errors(self, document: Any) -> List[Error]:
        if self._proof(document):
            return []
        key = self._key(document)
        verdict = self._verdicts.get(key) if key is not None else None
        if verdict is not None:
            self._verdicts.move_to_end(key)  # type: ignore[arg-type]
            return verdict
        verdict = [_error(e) for e in self.validator.iter_errors(document)]
        if key is not None:
            self._verdicts[key] = verdict
            if len(self._verdicts) > self.REMEMBERED:
                self._verdicts.popitem(last=False)
        return verdict

    def _key(self, document: Any) -> Optional[bytes]:
        """The document's digest, or None when its verdict is not to be kept."""
        if self._timed or not _short_strings(document, self._cheap_chars):
            return None  # a match that may run in the pattern worker, against its deadline
        try:
            exact = marshal.dumps(document, 0)  # version 0: no references, no interning marks
        except ValueError:  # not plain data (an OrderedDict, a str subclass, an object)
            return None
        return hashlib.blake2b(exact, digest_size=16).digest()


def _error(error: Any) -> Error:
    """One of jsonschema's ``ValidationError``s as the verdict keeps it."""
    keyword, path = str(error.validator), tuple(error.absolute_path)
    failing = {sub.relative_schema_path[0] for sub in error.context or () if sub.relative_schema_path}
    matched = len(error.validator_value) - len(failing) if isinstance(error.validator_value, list) else 0
    worded = service_lines(keyword, path, error.message, error.validator_value, error.instance, error.schema, matched)
    return keyword, error.message, path, worded


def _patterns(node: Any) -> Iterator[str]:
    """Every ``pattern`` and ``patternProperties`` regular expression of a schema document."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                yield value
            elif key == "patternProperties" and isinstance(value, dict):
                yield from (name for name in value if isinstance(name, str))
            yield from _patterns(value)
    elif isinstance(node, list):
        for item in node:
            yield from _patterns(item)


def _short_strings(node: Any, limit: int) -> bool:
    """Is every string in ``node`` (keys too) at most ``limit`` long: matched in the calling thread (``model/patterns.py``)?"""
    if isinstance(node, str):
        return len(node) <= limit
    if isinstance(node, dict):
        return all(_short_strings(key, limit) and _short_strings(value, limit) for key, value in node.items())
    if isinstance(node, list):
        return all(_short_strings(item, limit) for item in node)
    return True


_COMPILED_LIMIT = 64
# id(schema document) -> its compiled form. The entry holds the document, so its id is not reused
# while cached; a reloaded schema is a new document (a new id) and is compiled afresh.
_compiled: "OrderedDict[int, _CompiledSchema]" = OrderedDict()


def _compiled_schema(schema_document: Dict[str, Any]) -> _CompiledSchema:
    """The validator for a schema document, compiled once per document rather than once per check."""
    key = id(schema_document)
    entry = _compiled.get(key)
    if entry is not None and entry.document is schema_document:
        _compiled.move_to_end(key)
        return entry
    from cfnrun.model.schema_validator import SchemaValidator  # jsonschema: only for the requests it validates

    full = {key: value for key, value in schema_document.items() if key not in ("$schema", "$id")}
    entry = _compiled[key] = _CompiledSchema(schema_document, SchemaValidator(full))
    if len(_compiled) > _COMPILED_LIMIT:
        _compiled.popitem(last=False)
    return entry
