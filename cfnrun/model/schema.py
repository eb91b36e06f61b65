"""A resource type schema as an object: identifiers, property sets, handler timeouts."""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from cfnrun.model.errors import ProjectError, not_json
from cfnrun.model.action import Action  # not protocol: loading a project needs no wire models (pydantic)
from cfnrun.model.json_copy import json_copy

DEFAULT_TIMEOUT_MINUTES = 120
MIN_TIMEOUT_MINUTES = 2
MAX_TIMEOUT_MINUTES = 2160
WRITE_ONLY_MASK = "*** writeOnly ***"


def pointer_to_path(pointer: str) -> List[str]:
    """``/properties/Tags/*/Key`` → ``["Tags", "*", "Key"]`` (a path into a model)."""
    return list(_path(pointer))


@functools.lru_cache(maxsize=4096)
def _path(pointer: str) -> Tuple[str, ...]:
    """A pointer's path, read once: the contract checks look up the same schema pointers in every answer."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    if parts[:1] == ["properties"]:
        parts = parts[1:]
    return tuple(parts)


def _walk(value: Any, path: Sequence[str]) -> Iterator[tuple]:
    """Yield (container, key) for every place in ``value`` the path reaches."""
    if not path:
        return
    head, rest = path[0], path[1:]
    if head == "*":
        items = enumerate(value) if isinstance(value, list) else []
        for index, item in items:
            if rest:
                yield from _walk(item, rest)
            else:
                yield value, index
        return
    if isinstance(value, dict) and head in value:
        if rest:
            yield from _walk(value[head], rest)
        else:
            yield value, head


JSON_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")


def _refs(value: Any, pointer: str) -> Iterator[tuple]:
    """(pointer, $ref) of every ``$ref`` string in a schema document."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "$ref" and isinstance(item, str):
                yield pointer, item
            else:
                yield from _refs(item, f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _refs(item, f"{pointer}/{index}")


class ResourceSchema:
    def __init__(self, document: Dict[str, Any], path: Optional[Path] = None) -> None:
        self.document = document
        self.path = path
        # by key: the document's list, and the pointers read from it (the contract checks, the history's masker and a
        # stack's resources ask for the same lists several times per handler call)
        self._read: Dict[str, Tuple[Any, Tuple[str, ...]]] = {}

    @classmethod
    def load(cls, path: Path) -> "ResourceSchema":
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ProjectError(path, "resource schema file not found") from None
        try:
            document = json.loads(text)
        except json.JSONDecodeError as error:
            raise ProjectError(path, not_json(error)) from None
        if not isinstance(document, dict):
            raise ProjectError(path, "a resource schema must be a JSON object")
        if not isinstance(document.get("typeName"), str):
            raise ProjectError(path, "the schema has no typeName")
        return cls(document, path)

    @property
    def type_name(self) -> str:
        return str(self.document["typeName"])

    def _pointers(self, key: str) -> List[str]:
        value = self.document.get(key)
        kept = self._read.get(key)
        if kept is None or kept[0] is not value:  # read again when the document holds another list
            kept = self._read[key] = (value, tuple(p for p in value or () if isinstance(p, str)))
        return list(kept[1])  # a list of the caller's own

    @property
    def primary_identifier(self) -> List[str]:
        return self._pointers("primaryIdentifier")

    @property
    def additional_identifiers(self) -> List[List[str]]:
        groups = self.document.get("additionalIdentifiers") or []
        return [[p for p in group if isinstance(p, str)] for group in groups if isinstance(group, list)]

    @property
    def read_only_properties(self) -> List[str]:
        return self._pointers("readOnlyProperties")

    @property
    def write_only_properties(self) -> List[str]:
        return self._pointers("writeOnlyProperties")

    @property
    def create_only_properties(self) -> List[str]:
        return self._pointers("createOnlyProperties")

    def handler(self, action: Action) -> Optional[Dict[str, Any]]:
        handlers = self.document.get("handlers") or {}
        entry = handlers.get(action.schema_handler)
        return entry if isinstance(entry, dict) else None

    def timeout_minutes(self, action: Action) -> int:
        """``handlers.<action>.timeoutInMinutes``, or the documented default of 120."""
        entry = self.handler(action) or {}
        value = entry.get("timeoutInMinutes", DEFAULT_TIMEOUT_MINUTES)
        return int(value) if isinstance(value, (int, float)) else DEFAULT_TIMEOUT_MINUTES

    def mask_write_only(self, model: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
        """A copy of ``model`` safe to print: writeOnly values replaced by a mask."""
        if not model or not self.write_only_properties:
            return model
        masked = json_copy(model)
        for container, key in self.locate(masked, self.write_only_properties):
            container[key] = WRITE_ONLY_MASK
        return masked

    def without_write_only(self, model: Dict[str, Any]) -> Dict[str, Any]:
        """A copy of ``model`` with every writeOnly value removed."""
        pruned = json_copy(model)
        for container, key in reversed(self.locate(pruned, self.write_only_properties)):
            del container[key]
        return pruned

    @staticmethod
    def locate(model: Any, pointers: List[str]) -> List[tuple]:
        """(container, key) of every value in ``model`` that one of the property pointers names."""
        return [place for pointer in pointers for place in _walk(model, _path(pointer))]

    def has_value(self, model: Any, pointer: str) -> bool:
        path = _path(pointer)
        if len(path) == 1 and path[0] != "*":  # a top-level property (most pointers): looked up, not walked
            return isinstance(model, dict) and path[0] in model
        return bool(self.locate(model, [pointer]))

    def value_at(self, model: Any, pointer: str) -> Any:
        path = _path(pointer)
        if len(path) == 1 and path[0] != "*":
            return model.get(path[0]) if isinstance(model, dict) else None
        places = self.locate(model, [pointer])
        return places[0][0][places[0][1]] if places else None

    def require_usable(self) -> None:
        """Raise a ProjectError naming the first place that would stop cfnrun validating models against it.

        That is a schema that is not valid draft-07 (``"type": "strng"``) or a local ``$ref``
        to a fragment that does not exist; ``cfnrun validate`` lists every problem.
        """
        from jsonschema import Draft7Validator
        from jsonschema.exceptions import best_match

        error = best_match(Draft7Validator(Draft7Validator.META_SCHEMA).iter_errors(self.document))
        if error is not None:
            pointer = "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path) or "/"
            message = error.message
            if error.absolute_path and error.absolute_path[-1] == "type":
                message = f"{error.instance!r} is not a JSON Schema type (use one of {', '.join(JSON_TYPES)})"
            raise ProjectError(self.path, f"{pointer}: {message}; 'cfnrun validate' lists every problem")
        for pointer, ref in _refs(self.document, ""):
            if ref.startswith("#") and not self._resolves(ref):
                raise ProjectError(self.path, f"{pointer}/$ref: {ref!r} points to nothing in this schema")

    def _resolves(self, ref: str) -> bool:
        target: Any = self.document
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                return False
        return True

    def property_type(self, path: Sequence[str]) -> Optional[str]:
        """The JSON type the schema gives the property at ``path`` (``["A", "B"]``: ``B`` inside the object ``A``), its
        ``$ref`` followed; None when the schema has no such property or gives it no single type."""
        fragment: Dict[str, Any] = self.document
        for name in path:
            properties = self.subschema(fragment).get("properties")
            if not isinstance(properties, dict) or not isinstance(properties.get(name), dict):
                return None
            fragment = properties[name]
        kind = self.subschema(fragment).get("type")
        return kind if isinstance(kind, str) else None

    def subschema(self, fragment: Dict[str, Any]) -> Dict[str, Any]:
        """Follow a local ``$ref`` (``#/definitions/Tag``) to the fragment it names."""
        seen = 0
        while isinstance(fragment, dict) and isinstance(fragment.get("$ref"), str) and seen < 32:
            ref = fragment["$ref"]
            if not ref.startswith("#/"):
                return {}
            target: Any = self.document
            for part in ref[2:].split("/"):
                target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, dict) else {}
            fragment, seen = target, seen + 1
        return fragment if isinstance(fragment, dict) else {}
