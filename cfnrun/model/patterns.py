"""Schema ``pattern``s as resource schemas mean them: ECMA-262 regular expressions.

Python's ``re`` reads them differently: ``\\d`` and ``\\w`` match any Unicode digit or letter,
``$`` matches before a final newline, and the UTF-16 surrogate pairs AWS schemas use for
characters beyond the Basic Multilingual Plane (``[\\u0020-\\uD7FF\\uD800\\uDC00-\\uDBFF\\uDFFF]``)
are a "bad character range". So every pattern cfnrun evaluates — request validation, the
contract's shape checks, type configurations — goes through one ECMA-262 engine, regress (the
Rust ``regress`` crate, as a Python binding), here. A pattern it cannot compile is skipped, as
cloudformation-cli skips one ("Could not validate regular expression"), and reported once.

A backtracking engine can take hours on a short value (``^(a+)+$`` against 35 characters), so a
match runs here, in the calling thread, only when it is cheap: a short value and a pattern with
no quantified group holding a quantifier or an alternation, no back-reference and at most two
unbounded quantifiers. Any other match goes to a child process a deadline stops
(``model/pattern_worker.py``); past it ``ecma_find`` raises PatternTimeout and a schema check
says so.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional, Tuple

import regress

from cfnrun.model.pattern_worker import WORKER, PatternTimeout

__all__ = ["PatternTimeout", "ecma_find", "ecma_regex", "ecma_search", "may_backtrack", "skipped_pattern_note", "unusable_patterns"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
CHEAP_TEXT_CHARS = 256  # a value this short, under a pattern that cannot backtrack much, is matched in the calling thread
_QUANTIFIER = re.compile(r"[*+?]|\{(\d+)(,(\d*))?\}")
MANY = 16  # a bounded quantifier allowing more repeats than this counts as unbounded


@dataclass(frozen=True)
class _Compiled:
    regex: regress.Regex
    source: str
    flags: str


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> Optional[_Compiled]:
    # Halves of a pair that JSON decoding left as characters of their own: back to escapes, as written.
    source = _LONE_SURROGATE.sub(lambda found: "\\u%04X" % ord(found.group()), pattern)
    for flags in ("u", ""):
        try:
            return _Compiled(regress.Regex(source, flags), source, flags)
        except (regress.RegressError, ValueError, OverflowError):
            continue
    return None


def ecma_regex(pattern: str) -> Optional[regress.Regex]:
    """``pattern`` compiled as ECMAScript does, or None when it is not a regular expression there.

    Unicode mode first (surrogate pairs written as escapes are one code point there); then the
    looser syntax of ECMA-262's Annex B, which many schemas rely on (``\\_``, ``\\-`` outside a class).
    """
    compiled = _compiled(pattern)
    return compiled.regex if compiled is not None else None


def ecma_find(pattern: str, text: str) -> Optional[bool]:
    """Does ``pattern`` match somewhere in ``text`` (a JSON Schema pattern is not anchored)? None: no verdict.

    PatternTimeout when the match ran past its deadline (``model/pattern_worker.py``).
    """
    compiled = _compiled(pattern)
    if compiled is None:
        return None
    try:
        if len(text) <= CHEAP_TEXT_CHARS and not may_backtrack(compiled.source):
            return compiled.regex.find(text) is not None
        return WORKER.find(compiled.source, compiled.flags, text, pattern)
    except (UnicodeEncodeError, ValueError):  # a string no JSON document can hold (a lone surrogate)
        return None


def ecma_find_at_once(pattern: str, text: str) -> Optional[bool]:
    """``ecma_find``'s verdict where it needs no deadline (a pattern that cannot backtrack, a short text), found here;
    None elsewhere, and where ``ecma_find`` has none: nothing is sent to the pattern worker, no deadline is recorded."""
    compiled = _compiled(pattern)
    if compiled is None or len(text) > CHEAP_TEXT_CHARS or may_backtrack(compiled.source):
        return None
    try:
        return compiled.regex.find(text) is not None
    except (UnicodeEncodeError, ValueError):
        return None


def ecma_search(pattern: str, text: str) -> Optional[bool]:
    """``ecma_find``, with a match that ran past its deadline as no verdict (None), for callers that only filter."""
    try:
        return ecma_find(pattern, text)
    except PatternTimeout:
        return None


@functools.lru_cache(maxsize=4096)
def may_backtrack(source: str) -> bool:
    """Can matching ``source`` take more than about quadratic time? A quantified group holding a quantifier or an
    alternation, a back-reference, or more than two unbounded quantifiers: then the match needs a deadline."""
    groups: List[List[bool]] = [[False, False]]  # per open group: holds a quantifier, holds an alternation
    unbounded, index = 0, 0
    while index < len(source):
        char = source[index]
        quantified_group: Optional[List[bool]] = None
        if char == "\\":
            following = source[index + 1: index + 2]
            if following.isdigit() and following != "0" or following == "k":
                return True  # a back-reference
            index += 2
        elif char == "[":
            index = _class_end(source, index + 1)
        elif char == "(":
            groups.append([False, False])
            index += 1
            continue
        elif char == ")" and len(groups) > 1:
            quantified_group = groups.pop()
            index += 1
        else:
            if char == "|":
                groups[-1][1] = True
            index += 1
            if char in "*+?{":
                continue  # a quantifier with nothing before it (or a literal brace): nothing to count
        repeats = _QUANTIFIER.match(source, index)
        if repeats is None:
            if quantified_group is not None:  # a group that is not quantified passes on what it holds
                groups[-1][0] = groups[-1][0] or quantified_group[0]
                groups[-1][1] = groups[-1][1] or quantified_group[1]
            continue
        many = repeats.group(0) in ("*", "+") or (repeats.group(2) is not None and (not repeats.group(3) or int(repeats.group(3)) > MANY))
        many = many or (repeats.group(1) is not None and repeats.group(2) is None and int(repeats.group(1)) > MANY)
        at_most_once = repeats.group(0) == "?" or (repeats.group(1) in ("0", "1") and repeats.group(3) in (None, "0", "1"))
        if not at_most_once and quantified_group is not None and (quantified_group[0] or quantified_group[1]):
            return True
        unbounded += many
        varies = repeats.group(1) is None or repeats.group(2) is not None  # anything but an exact {n}
        groups[-1][0] = groups[-1][0] or varies or (quantified_group is not None and quantified_group[0])
        index = repeats.end()
        if source[index: index + 1] == "?":
            index += 1  # a lazy quantifier
    return unbounded > 2


def _class_end(source: str, index: int) -> int:
    """Where the character class that opened before ``index`` ends (after its ``]``)."""
    if source[index: index + 1] == "]":
        index += 1
    while index < len(source) and source[index] != "]":
        index += 2 if source[index] == "\\" else 1
    return index + 1


def unusable_patterns(document: Any, pointer: str = "") -> Iterator[Tuple[str, str]]:
    """(JSON pointer, pattern) for every pattern in a schema that is not an ECMAScript regular expression."""
    if isinstance(document, list):
        for index, item in enumerate(document):
            yield from unusable_patterns(item, f"{pointer}/{index}")
        return
    if not isinstance(document, dict):
        return
    for key, value in document.items():
        here = f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}"
        if key == "pattern" and isinstance(value, str) and ecma_regex(value) is None:
            yield here, value
        elif key == "patternProperties" and isinstance(value, dict):
            for name, sub in value.items():
                if ecma_regex(name) is None:
                    yield f"{here}/{name}", name
                yield from unusable_patterns(sub, f"{here}/{name}")
        else:
            yield from unusable_patterns(value, here)


def skipped_pattern_note(pointer: str, pattern: str) -> str:
    return f"schema pattern at {pointer} ({pattern!r}) is not an ECMAScript regular expression: values are not checked against it"
