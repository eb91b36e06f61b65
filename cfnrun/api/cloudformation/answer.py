"""An operation's result written as the XML the query protocol answers with, by the operation's output shape.

``<{Op}Response><{Op}Result>...</{Op}Result><ResponseMetadata>...</ResponseMetadata></{Op}Response>``;
lists as ``<member>`` items, maps as ``<entry><key/><value/></entry>``, timestamps in ISO 8601
UTC, booleans in lower case. An empty list is written as an empty element, which botocore reads
back as ``[]``; a member the result leaves out (or sets to None) is left out.
"""
from __future__ import annotations

import base64
import datetime
from typing import TYPE_CHECKING, Any, Dict, List, cast

from cfnrun.api.cloudformation.service_model import NAMESPACE
from cfnrun.api.cloudformation.xml_text import escaped

if TYPE_CHECKING:  # shapes are told apart by type_name: botocore is imported with the model, on the first request
    from botocore.model import ListShape, MapShape, OperationModel, Shape, StructureShape


class ResultShapeError(TypeError):
    """The engine's result does not fit the operation's output shape: a bug in cfnrun, not the caller's mistake."""


def _timestamp(value: Any, where: str) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = datetime.datetime.fromtimestamp(value, datetime.timezone.utc)
    if not isinstance(value, datetime.datetime):
        raise ResultShapeError(f"{where} must be a datetime or seconds since the epoch, got {type(value).__name__}")
    if value.tzinfo is not None:
        value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return value.isoformat(timespec="milliseconds") + "Z"


def _scalar(shape: "Shape", value: Any, where: str) -> str:
    kind = shape.type_name
    if kind == "timestamp":
        return _timestamp(value, where)
    if kind == "boolean":
        if not isinstance(value, bool):
            raise ResultShapeError(f"{where} must be a bool, got {type(value).__name__}")
        return "true" if value else "false"
    if kind in ("integer", "long"):
        if not isinstance(value, int) or isinstance(value, bool):
            raise ResultShapeError(f"{where} must be an int, got {type(value).__name__}")
        return str(value)
    if kind in ("float", "double"):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ResultShapeError(f"{where} must be a number, got {type(value).__name__}")
        return repr(float(value))
    if kind == "blob":
        raw = value.encode("utf-8") if isinstance(value, str) else value
        return base64.b64encode(raw).decode("ascii")
    if not isinstance(value, str):
        raise ResultShapeError(f"{where} must be a str, got {type(value).__name__}")
    return escaped(value)


def _element(tag: str, inner: str) -> str:
    return f"<{tag}>{inner}</{tag}>" if inner else f"<{tag}/>"


def _write(shape: "Shape", value: Any, where: str, out: List[str]) -> None:
    """The content of one element (its tag written by the caller) into ``out``."""
    if shape.type_name == "structure":
        shape = cast("StructureShape", shape)
        if not isinstance(value, dict):
            raise ResultShapeError(f"{where} must be a dict ({shape.name}), got {type(value).__name__}")
        unknown = sorted(set(value) - set(shape.members))
        if unknown:
            raise ResultShapeError(f"{where} ({shape.name}) has no member {unknown[0]}")
        for name, member in shape.members.items():
            if value.get(name) is not None:
                _tagged(member.serialization.get("name", name), member, value[name], f"{where}.{name}", out)
    elif shape.type_name == "list":
        shape = cast("ListShape", shape)
        if not isinstance(value, (list, tuple)):
            raise ResultShapeError(f"{where} must be a list, got {type(value).__name__}")
        tag = shape.member.serialization.get("name", "member")
        for index, item in enumerate(value):
            _tagged(tag, shape.member, item, f"{where}[{index}]", out)
    elif shape.type_name == "map":
        shape = cast("MapShape", shape)
        if not isinstance(value, dict):
            raise ResultShapeError(f"{where} must be a dict, got {type(value).__name__}")
        key_tag = shape.key.serialization.get("name", "key")
        value_tag = shape.value.serialization.get("name", "value")
        for key, item in value.items():
            out.append("<entry>")
            _tagged(key_tag, shape.key, key, f"{where} key", out)
            _tagged(value_tag, shape.value, item, f"{where}[{key!r}]", out)
            out.append("</entry>")
    else:
        out.append(_scalar(shape, value, where))


def _tagged(tag: str, shape: "Shape", value: Any, where: str, out: List[str]) -> None:
    inner: List[str] = []
    _write(shape, value, where, inner)
    out.append(_element(tag, "".join(inner)))


def response_body(operation: "OperationModel", result: Dict[str, Any], request_id: str) -> str:
    """The whole answer document for ``result`` (shaped as the operation's output; ignored when it has none)."""
    name = operation.name
    out: List[str] = [f'<{name}Response xmlns="{NAMESPACE}">']
    shape = operation.output_shape
    if shape is not None:
        wrapper = shape.serialization.get("resultWrapper", f"{name}Result")
        _tagged(wrapper, shape, result, name, out)
    out.append(f"<ResponseMetadata><RequestId>{request_id}</RequestId></ResponseMetadata>")
    out.append(f"</{name}Response>")
    return "".join(out)
