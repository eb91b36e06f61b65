"""A CloudFormation request's form body read into the operation's input shape, checked as the service checks it.

The query protocol flattens parameters into dotted names: ``Parameters.member.1.ParameterKey``
for lists, ``X.entry.1.key``/``.value`` for maps, ``Tags=`` for an empty list. This module
builds the tree those names describe and reads it by the operation's input shape: integers,
booleans and timestamps converted; required members, enums, lengths, ranges and patterns
checked; every failure reported together, worded as the service words it
(``1 validation error detected: Value null at 'stackName' failed to satisfy constraint: ...``).
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, cast
from urllib.parse import parse_qsl

from cfnrun.api.cloudformation.errors import StackApiError, constraint_violations, validation_error
from cfnrun.model.patterns import ecma_search

if TYPE_CHECKING:  # shapes are told apart by type_name: botocore is imported with the model, on the first request
    from botocore.model import ListShape, MapShape, OperationModel, Shape, StructureShape

QUOTED_VALUE_CHARS = 256  # a longer value (a template) is cut in messages


def read_form(body: bytes) -> Dict[str, str]:
    """The form's fields; a field given twice or a body that is not UTF-8 form encoding is refused."""
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, errors="strict")
    except (UnicodeDecodeError, ValueError) as error:
        raise validation_error(f"The request body is not a UTF-8 form (application/x-www-form-urlencoded): {error}") from None
    form: Dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise validation_error(f"The parameter {name} is given more than once")
        form[name] = value
    return form


@dataclass
class _Node:
    """A dotted name's part: its value (``Name=value``) and the parts under it (``Name.x=...``)."""

    value: Optional[str] = None
    children: Dict[str, "_Node"] = field(default_factory=dict)


def _tree(form: Dict[str, str]) -> _Node:
    root = _Node()
    for name, value in form.items():
        node = root
        for part in name.split("."):
            node = node.children.setdefault(part, _Node())
        node.value = value
    return root


def _wire_path(path: str, part: str) -> str:
    """The service's name for a member in messages: lower camel case, dotted (``parameters.1.member.parameterKey``)."""
    name = part[:1].lower() + part[1:]
    return f"{path}.{name}" if path else name


def _timestamp(text: str) -> datetime.datetime:
    """An ISO 8601 time (as botocore sends one: ``2026-11-24T17:00:00Z``) or seconds since the epoch, in UTC."""
    try:
        stamp = datetime.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        return datetime.datetime.fromtimestamp(float(text), datetime.timezone.utc)
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=datetime.timezone.utc)


def _quoted(value: Any) -> str:
    text = str(value).lower() if isinstance(value, bool) else str(value)
    if len(text) > QUOTED_VALUE_CHARS:
        text = text[:QUOTED_VALUE_CHARS] + "..."
    return f"'{text}'"


class _Reader:
    """Reads one request, gathering every constraint it breaks."""

    def __init__(self, operation: str) -> None:
        self.operation = operation
        self.problems: List[str] = []

    def fail(self, value: Any, path: str, constraint: str) -> None:
        shown = "null" if value is None else _quoted(value)
        self.problems.append(f"Value {shown} at '{path}' failed to satisfy constraint: {constraint}")

    def read(self, shape: Shape, node: _Node, name: str, path: str) -> Any:
        """``node`` as ``shape``; ``name`` is the dotted request name, for unknown-parameter errors."""
        if shape.type_name == "structure":
            return self._structure(cast("StructureShape", shape), node, name, path)
        if shape.type_name == "list":
            return self._list(cast("ListShape", shape), node, name, path)
        if shape.type_name == "map":
            return self._map(cast("MapShape", shape), node, name, path)
        if node.children:
            raise self._unknown(name + "." + next(iter(node.children)))
        return self._scalar(shape, node.value or "", path)

    def _unknown(self, name: str) -> StackApiError:
        return validation_error(f"Unknown parameter {name} in {self.operation}: CloudFormation's model of {self.operation} has no such member")

    def _structure(self, shape: StructureShape, node: _Node, name: str, path: str) -> Dict[str, Any]:
        by_wire_name = {member.serialization.get("name", member_name): member_name for member_name, member in shape.members.items()}
        unknown = [part for part in node.children if part not in by_wire_name]
        if unknown:
            raise self._unknown(f"{name}.{unknown[0]}" if name else unknown[0])
        if node.value and not node.children:
            raise validation_error(f"{name} is a structure: give its members as {name}.<Member>, not a value")
        result: Dict[str, Any] = {}
        for wire_name, child in node.children.items():
            member_name = by_wire_name[wire_name]
            member = shape.members[member_name]
            member_path = _wire_path(path, member_name)
            value = self.read(member, child, f"{name}.{wire_name}" if name else wire_name, member_path)
            result[member_name] = value
            self._check(member, value, member_path)
        for member_name in shape.required_members:
            if member_name not in result:
                self.fail(None, _wire_path(path, member_name), "Member must not be null")
        return result

    def _indexed(self, node: _Node, container: str, name: str) -> List[Tuple[int, _Node]]:
        """The numbered entries under ``name.<container>.N``, in order; an empty value (``Name=``) is none."""
        if not node.children:
            if node.value:
                raise validation_error(f"{name} is a list: give its items as {name}.{container}.1, {name}.{container}.2, ...")
            return []
        if node.value:
            raise validation_error(f"{name} is given both as a value and as items")
        if set(node.children) != {container}:
            other = next(part for part in node.children if part != container)
            raise self._unknown(f"{name}.{other}")
        entries: List[Tuple[int, _Node]] = []
        for index, child in node.children[container].children.items():
            if not index.isdigit() or int(index) < 1:
                raise validation_error(f"{name}.{container}.{index}: items are numbered from 1")
            entries.append((int(index), child))
        entries.sort(key=lambda entry: entry[0])
        if [index for index, _ in entries] != list(range(1, len(entries) + 1)):
            raise validation_error(f"{name}.{container}: items must be numbered 1, 2, 3, ... without gaps")
        return entries

    def _list(self, shape: ListShape, node: _Node, name: str, path: str) -> List[Any]:
        container = shape.member.serialization.get("name", "member")
        items: List[Any] = []
        for index, child in self._indexed(node, container, name):
            item_path = f"{path}.{index}.member"
            item = self.read(shape.member, child, f"{name}.{container}.{index}", item_path)
            self._check(shape.member, item, item_path)
            items.append(item)
        return items

    def _map(self, shape: MapShape, node: _Node, name: str, path: str) -> Dict[str, Any]:
        key_name = shape.key.serialization.get("name", "key")
        value_name = shape.value.serialization.get("name", "value")
        entries: Dict[str, Any] = {}
        for index, child in self._indexed(node, "entry", name):
            entry_name = f"{name}.entry.{index}"
            entry_path = f"{path}.entry.{index}"
            unknown = [part for part in child.children if part not in (key_name, value_name)]
            if unknown:
                raise self._unknown(f"{entry_name}.{unknown[0]}")
            if key_name not in child.children:
                self.fail(None, f"{entry_path}.key", "Member must not be null")
                continue
            key = self.read(shape.key, child.children[key_name], f"{entry_name}.{key_name}", f"{entry_path}.key")
            value_node = child.children.get(value_name, _Node(value=""))
            entries[key] = self.read(shape.value, value_node, f"{entry_name}.{value_name}", f"{entry_path}.value")
            self._check(shape.value, entries[key], f"{entry_path}.value")
        return entries

    def _scalar(self, shape: Shape, text: str, path: str) -> Any:
        kind = shape.type_name
        if kind in ("integer", "long"):
            try:
                return int(text)
            except ValueError:
                self.fail(text, path, "Member must be an integer")
        elif kind in ("float", "double"):
            try:
                return float(text)
            except ValueError:
                self.fail(text, path, "Member must be a number")
        elif kind == "boolean":
            if text.lower() in ("true", "false"):
                return text.lower() == "true"
            self.fail(text, path, "Member must be true or false")
        elif kind == "timestamp":
            try:
                return _timestamp(text)
            except (ValueError, OverflowError, OSError):
                self.fail(text, path, "Member must be a timestamp (ISO 8601, e.g. 2026-11-24T17:00:00Z)")
        else:
            return text
        return None

    def _check(self, shape: Shape, value: Any, path: str) -> None:
        """The model's constraints on one value: length or range, enum, pattern."""
        if value is None:
            return
        meta = shape.metadata
        if isinstance(value, (str, list, dict)):
            low, high = meta.get("min"), meta.get("max")
            if low is not None and len(value) < low:
                self.fail(value, path, f"Member must have length greater than or equal to {low}")
            if high is not None and len(value) > high:
                self.fail(value, path, f"Member must have length less than or equal to {high}")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            low, high = meta.get("min"), meta.get("max")
            if low is not None and value < low:
                self.fail(value, path, f"Member must have value greater than or equal to {low}")
            if high is not None and value > high:
                self.fail(value, path, f"Member must have value less than or equal to {high}")
        if isinstance(value, str):
            enum = getattr(shape, "enum", None) or []
            if enum and value not in enum:
                self.fail(value, path, f"Member must satisfy enum value set: [{', '.join(enum)}]")
            pattern = meta.get("pattern")
            if pattern and value and ecma_search(f"^(?:{pattern})$", value) is False:
                self.fail(value, path, f"Member must satisfy regular expression pattern: {pattern}")


def read_input(operation: "OperationModel", form: Dict[str, str]) -> Dict[str, Any]:
    """The operation's parameters from the form (less Action and Version), as boto3 was given them."""
    fields = {name: value for name, value in form.items() if name not in ("Action", "Version")}
    shape = operation.input_shape
    if shape is None:
        if fields:
            raise validation_error(f"{operation.name} takes no parameters; got {', '.join(sorted(fields))}")
        return {}
    reader = _Reader(operation.name)
    params: Dict[str, Any] = reader.read(shape, _tree(fields), "", "")
    if reader.problems:
        raise constraint_violations(reader.problems)
    return params
