"""A deep copy of JSON data, several times cheaper than ``copy.deepcopy`` (no memo, no dispatch by type).

Handler models, properties and requests are JSON: objects and arrays are copied, text, numbers, booleans and null
are kept (they cannot change). Anything else, a subclass of dict or list included, is left to ``copy.deepcopy``.
"""
from __future__ import annotations

import copy
from typing import TypeVar

T = TypeVar("T")


def json_copy(value: T) -> T:
    kind = type(value)
    if kind is dict:
        return {key: json_copy(item) for key, item in value.items()}  # type: ignore[attr-defined,return-value]
    if kind is list:
        return [json_copy(item) for item in value]  # type: ignore[attr-defined,return-value]
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    return copy.deepcopy(value)
