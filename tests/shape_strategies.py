"""Hypothesis strategies for an operation's input, drawn from botocore's shape of it (tests/test_api_fuzz.py).

Each shape gives values of its kind within its constraints most of the time, and now and then
values a careful client would not send: out of its length or range, outside its enum, the wrong
scalar kind (a number for a string, ``None``), very long, unusual unicode. Values stay ones
botocore's serializers accept with parameter validation off (a structure is always a dict, a
list a list), so every example reaches the server. ``hints`` maps a member name to a strategy
of its own (names of stacks that exist, templates that deploy), so calls get past the first
check often enough to reach the code behind it.
"""
from __future__ import annotations

import datetime
import re
from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping

from hypothesis import strategies as st

if TYPE_CHECKING:
    from botocore.model import Shape

Hints = Mapping[str, st.SearchStrategy[Any]]
MAX_DEPTH = 6  # deeper structures are given their required members only
LONG_TEXT = 5000  # a value far past any name's length, short of the body limits
# Characters that break naive handling: controls, XML-special, a lone surrogate's neighbours, right-to-left, emoji
ODD_TEXT = st.sampled_from(["", " ", "\x00", "<![CDATA[x]]>", "&amp;<>\"'", "\u202e", "💥", "\ud7ff", "a" * LONG_TEXT, "../../etc", "%s%n"])
ODD_NUMBERS = st.sampled_from([0, -1, 2**31, 2**63, -(2**63) - 1, 10**30])


def wrong_scalar() -> st.SearchStrategy[Any]:
    """A scalar of any kind, or None: what a member gets when its caller mixed up its type."""
    return st.one_of(st.none(), st.booleans(), ODD_NUMBERS, ODD_TEXT, st.text(max_size=20), st.floats(allow_nan=True))


def _text(shape: "Shape") -> st.SearchStrategy[str]:
    low, high = shape.metadata.get("min", 0), shape.metadata.get("max", 64)
    fitting = st.text(min_size=min(low, 64), max_size=max(min(high, 64), min(low, 64)))
    choices = [fitting, fitting]
    enum = getattr(shape, "enum", None)
    if enum:
        choices = [st.sampled_from(enum), st.sampled_from(enum), st.sampled_from(enum), fitting]
    pattern = shape.metadata.get("pattern")
    if pattern and not enum:
        matching = _from_pattern(pattern)
        if matching is not None:
            choices += [matching, matching]
    return st.one_of(*choices, ODD_TEXT)


_PATTERNS: Dict[str, Any] = {}


def _from_pattern(pattern: str) -> "st.SearchStrategy[str] | None":
    """Strings matching a model's pattern where Python's re reads it (the models' are Java's: most are alike)."""
    if pattern not in _PATTERNS:
        try:
            re.compile(pattern)
            _PATTERNS[pattern] = st.from_regex(pattern, fullmatch=True).filter(lambda text: len(text) <= 256)
        except (re.error, ValueError, OverflowError):
            _PATTERNS[pattern] = None
    return _PATTERNS[pattern]


def _number(shape: "Shape") -> st.SearchStrategy[int]:
    low, high = shape.metadata.get("min"), shape.metadata.get("max")
    fitting = st.integers(min_value=low, max_value=high if high is not None else (low or 0) + 1000)
    return st.one_of(fitting, fitting, fitting, st.integers(), ODD_NUMBERS)


def _timestamp() -> st.SearchStrategy[Any]:
    utc = datetime.timezone.utc
    return st.one_of(
        st.datetimes(min_value=datetime.datetime(1970, 1, 2), max_value=datetime.datetime(2200, 1, 1), timezones=st.just(utc)),
        st.datetimes(min_value=datetime.datetime(1, 1, 2), timezones=st.just(utc)),
    )


def strategy(shape: "Shape", hints: Hints, depth: int = 0, name: str = "") -> st.SearchStrategy[Any]:
    """Values for ``shape``; ``name`` is the member it is the value of (looked up in ``hints``)."""
    if name in hints:
        return hints[name]
    kind = shape.type_name
    make: Dict[str, Callable[[], st.SearchStrategy[Any]]] = {
        "structure": lambda: _structure(shape, hints, depth),
        "list": lambda: _list(shape, hints, depth),
        "map": lambda: _map(shape, hints, depth),
        "string": lambda: _text(shape),
        "integer": lambda: _number(shape),
        "long": lambda: _number(shape),
        "boolean": lambda: st.booleans(),
        "timestamp": _timestamp,
        "blob": lambda: st.binary(max_size=64),
        "float": lambda: st.floats(allow_nan=False, allow_infinity=False),
        "double": lambda: st.floats(allow_nan=False, allow_infinity=False),
    }
    value = make[kind]()
    if kind in ("structure", "list", "map"):
        return value
    return st.one_of(value, value, value, value, wrong_scalar())


def _structure(shape: Any, hints: Hints, depth: int) -> st.SearchStrategy[Dict[str, Any]]:
    required = set(shape.required_members)
    if depth >= MAX_DEPTH:
        return st.fixed_dictionaries({member: st.text(max_size=8) for member in required})
    members = {member: strategy(child, hints, depth + 1, member) for member, child in shape.members.items()}
    given = {member: value for member, value in members.items() if member in required}
    optional = {member: value for member, value in members.items() if member not in required}
    whole = st.fixed_dictionaries(given, optional=optional)
    if not given:
        return whole
    # now and then a required member is left out
    return st.one_of(whole, whole, whole, st.fixed_dictionaries({}, optional=members))


def _list(shape: Any, hints: Hints, depth: int) -> st.SearchStrategy[list]:
    low, high = shape.metadata.get("min", 0), shape.metadata.get("max", 4)
    member = strategy(shape.member, hints, depth + 1)
    fitting = st.lists(member, min_size=min(low, 4), max_size=max(min(high, 4), min(low, 4)))
    return st.one_of(fitting, fitting, fitting, st.lists(member, max_size=max(high + 1, 5) if high < 50 else 5))


def _map(shape: Any, hints: Hints, depth: int) -> st.SearchStrategy[dict]:
    keys = _text(shape.key).filter(lambda key: isinstance(key, str))
    return st.dictionaries(keys, strategy(shape.value, hints, depth + 1), max_size=4)
