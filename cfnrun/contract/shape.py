"""Does a returned model conform to the shape of the resource schema?

The contract validates models with JSON Schema draft-07's validation keywords for
any instance type, numbers, strings and arrays, and for objects except
``required``, ``dependencies`` and ``propertyNames``; it ignores conditional
(``if``/``then``/``else``) and boolean-logic (``allOf``/``anyOf``/``oneOf``/``not``)
subschemas. This module applies exactly that subset.
"""
from __future__ import annotations

import copy
import hashlib
import json
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Tuple

from cfnrun.contract.validity_proof import Proof, prove
from cfnrun.model.schema import ResourceSchema

if TYPE_CHECKING:
    from cfnrun.model.schema_validator import SchemaValidator

_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
Problems = List[Tuple[str, str]]
IGNORED_KEYWORDS = ("required", "dependencies", "propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not")


def _contract_view(node: Any) -> Any:
    if isinstance(node, list):
        return [_contract_view(item) for item in node]
    if not isinstance(node, dict):
        return node
    view: Dict[str, Any] = {}
    for key, value in node.items():
        if key in IGNORED_KEYWORDS:
            continue
        if key == "$ref" and isinstance(value, str) and not value.startswith("#/"):
            continue  # a remote reference the contract tests would not follow either
        if key in ("properties", "definitions", "patternProperties"):
            view[key] = {name: _contract_view(sub) for name, sub in value.items()} if isinstance(value, dict) else value
        else:
            view[key] = _contract_view(value)
    return view


class ShapeValidator:
    """Checks models against the schema; remembers the verdict for models it has seen.

    Handlers return the same models again and again (a stabilization loop, READ after
    READ, a LIST), and validating one takes far longer than recognising it. Seen models
    are keyed by a digest of their canonical JSON, so no property value is kept.
    """

    REMEMBERED = 1024

    def __init__(self, schema: ResourceSchema) -> None:
        self.schema = schema
        self._built: Optional["SchemaValidator"] = None  # compiled with the first model checked (jsonschema loads then)
        self._proof: Optional[Proof] = None  # a quick proof of a valid model's validity, read with the validator
        self._verdicts: "OrderedDict[bytes, Problems]" = OrderedDict()

    @property
    def _validator(self) -> "SchemaValidator":
        return self._built if self._built is not None else self._build()

    def _build(self) -> "SchemaValidator":
        if self._built is None:
            from cfnrun.model.schema_validator import SchemaValidator  # jsonschema: only once a model is checked

            document = copy.deepcopy(self.schema.document)
            view: Dict[str, Any] = {
                key: _contract_view(document.get(key)) for key in ("properties", "definitions", "patternProperties") if key in document
            }
            view["type"] = "object"
            if "additionalProperties" in document:
                view["additionalProperties"] = document["additionalProperties"]
            self._built = SchemaValidator(view)  # patterns as ECMAScript reads them (model/patterns.py)
            self._proof = prove(view, SchemaValidator.VALIDATORS)
        return self._built

    def _proven_valid(self, model: Dict[str, Any]) -> bool:
        if self._proof is None:
            self._build()
        assert self._proof is not None
        return self._proof(model)

    def problems(self, model: Dict[str, Any]) -> Problems:
        """(JSON pointer into the model, what is wrong) for every property out of shape."""
        if self._proven_valid(model):
            return []
        try:
            key = hashlib.blake2b(_CANONICAL.encode(model).encode("utf-8"), digest_size=16).digest()
        except (TypeError, ValueError):  # not plain JSON: validate without remembering
            return sorted(self._iter(model))
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._verdicts[key] = sorted(self._iter(model))
            if len(self._verdicts) > self.REMEMBERED:
                self._verdicts.popitem(last=False)
        else:
            self._verdicts.move_to_end(key)
        return list(verdict)

    def _iter(self, model: Dict[str, Any]) -> Iterator[Tuple[str, str]]:
        for error in self._validator.iter_errors(model):
            pointer = "".join(f"/{part}" for part in error.absolute_path) or "/"
            yield pointer, error.message
