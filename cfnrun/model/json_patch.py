"""JSON Patch (RFC 6902) over a JSON document, with JSON Pointers (RFC 6901).

``apply_patch`` checks the whole patch document first and applies every operation to a
copy: an invalid operation or a failed ``test`` fails the whole patch and leaves the
original untouched.
"""
from __future__ import annotations

import copy
from typing import Any, Dict, List, Tuple

OPERATIONS = ("add", "remove", "replace", "move", "copy", "test")


class PatchError(ValueError):
    """The patch document is malformed, or one of its operations cannot be applied."""


def parse_pointer(pointer: Any) -> List[str]:
    """``/Tags/0/Key`` → ``["Tags", "0", "Key"]``; ``""`` is the whole document."""
    if not isinstance(pointer, str):
        raise PatchError(f"a JSON pointer must be a string, got {type(pointer).__name__}")
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"JSON pointer {pointer!r} must be empty or start with '/'")
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer.split("/")[1:]]


def _index(container: List[Any], token: str, pointer: str, for_add: bool) -> int:
    if token == "-" and for_add:
        return len(container)
    if not token.isdigit() or (token != "0" and token.startswith("0")):
        raise PatchError(f"{pointer}: {token!r} is not an array index")
    index = int(token)
    if index > len(container) or (index == len(container) and not for_add):
        raise PatchError(f"{pointer}: index {index} is out of range (the array has {len(container)} item(s))")
    return index


def _parent(document: Any, parts: List[str], pointer: str) -> Tuple[Any, str]:
    """The container holding the last part of the pointer, and that part."""
    node = document
    for token in parts[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, pointer, for_add=False)]
        else:
            raise PatchError(f"{pointer}: no value at {token!r}")
    if not isinstance(node, (dict, list)):
        raise PatchError(f"{pointer}: the parent is not an object or array")
    return node, parts[-1]


def _get(document: Any, pointer: str) -> Any:
    parts = parse_pointer(pointer)
    if not parts:
        return document
    container, token = _parent(document, parts, pointer)
    if isinstance(container, dict):
        if token not in container:
            raise PatchError(f"{pointer}: no such member")
        return container[token]
    return container[_index(container, token, pointer, for_add=False)]


def _add(document: Any, pointer: str, value: Any) -> Any:
    parts = parse_pointer(pointer)
    if not parts:
        return value
    container, token = _parent(document, parts, pointer)
    if isinstance(container, dict):
        container[token] = value
    else:
        container.insert(_index(container, token, pointer, for_add=True), value)
    return document


def _remove(document: Any, pointer: str) -> Tuple[Any, Any]:
    parts = parse_pointer(pointer)
    if not parts:
        raise PatchError("cannot remove the whole document")
    container, token = _parent(document, parts, pointer)
    if isinstance(container, dict):
        if token not in container:
            raise PatchError(f"{pointer}: no such member to remove")
        return document, container.pop(token)
    return document, container.pop(_index(container, token, pointer, for_add=False))


def _member(operation: Dict[str, Any], name: str, number: int) -> Any:
    if name not in operation:
        raise PatchError(f"operation {number} ({operation.get('op')}) has no '{name}'")
    return operation[name]


def validate_patch(patch: Any) -> List[Dict[str, Any]]:
    """The patch as a list of operations, or PatchError saying what is malformed."""
    if not isinstance(patch, list):
        raise PatchError(f"a patch document is a JSON array of operations, got {type(patch).__name__}")
    for number, operation in enumerate(patch):
        if not isinstance(operation, dict):
            raise PatchError(f"operation {number} is not a JSON object")
        op = operation.get("op")
        if op not in OPERATIONS:
            raise PatchError(f"operation {number}: unknown op {op!r} (one of {', '.join(OPERATIONS)})")
        parse_pointer(_member(operation, "path", number))
        if op in ("add", "replace", "test"):
            _member(operation, "value", number)
        if op in ("move", "copy"):
            parse_pointer(_member(operation, "from", number))
    return patch


def apply_patch(document: Any, patch: Any) -> Any:
    """A patched copy of ``document``; PatchError for a malformed patch or a failed operation."""
    result = copy.deepcopy(document)
    for number, operation in enumerate(validate_patch(patch)):
        op, path = operation["op"], operation["path"]
        try:
            if op == "add":
                result = _add(result, path, copy.deepcopy(operation["value"]))
            elif op == "remove":
                result, _ = _remove(result, path)
            elif op == "replace":
                _get(result, path)
                result, _ = _remove(result, path) if parse_pointer(path) else (result, None)
                result = _add(result, path, copy.deepcopy(operation["value"]))
            elif op == "move":
                source = operation["from"]
                if path != source and path.startswith(source + "/"):
                    raise PatchError(f"cannot move {source} into its own child {path}")
                result, value = _remove(result, source)
                result = _add(result, path, value)
            elif op == "copy":
                result = _add(result, path, copy.deepcopy(_get(result, operation["from"])))
            elif not _equal(_get(result, path), operation["value"]):
                raise PatchError(f"{path}: the value is not {operation['value']!r}")
        except PatchError as error:
            raise PatchError(f"operation {number} ({op}) failed: {error}") from None
    return result


def _equal(left: Any, right: Any) -> bool:
    """JSON equality: 1 and 1.0 are equal, true and 1 are not."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_equal(left[key], right[key]) for key in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_equal(a, b) for a, b in zip(left, right))
    return bool(type(left) is type(right) or (isinstance(left, (int, float)) and isinstance(right, (int, float)))) and left == right


def touched_paths(patch: List[Dict[str, Any]]) -> List[str]:
    """Every pointer a (validated) patch changes: ``path``, and ``from`` of a move."""
    touched = []
    for operation in patch:
        if operation["op"] == "test":
            continue
        touched.append(operation["path"])
        if operation["op"] == "move":
            touched.append(operation["from"])
    return touched
