"""Schema ``pattern``s as resource schemas mean them: ECMA-262 regular expressions.

Python's ``re`` reads them differently: ``\\d`` and ``\\w`` match any Unicode digit or letter,
``$`` matches before a final newline, and the UTF-16 surrogate pairs AWS schemas use for
characters beyond the Basic Multilingual Plane (``[\\u0020-\\uD7FF\\uD800\\uDC00-\\uDBFF\\uDFFF]``)
are a "bad character range". So every pattern cfnrun evaluates — request validation, the
contract's shape checks, type configurations — goes through one ECMA-262 engine, regress (the
Rust ``regress`` crate, as a Python binding), here. A pattern it cannot compile is skipped, as
cloudformation-cli skips one ("Could not validate regular expression"), and reported once.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Iterator, Optional, Tuple

import regress

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@functools.lru_cache(maxsize=4096)
def ecma_regex(pattern: str) -> Optional[regress.Regex]:
    """``pattern`` compiled as ECMAScript does, or None when it is not a regular expression there.

    Unicode mode first (surrogate pairs written as escapes are one code point there); then the
    looser syntax of ECMA-262's Annex B, which many schemas rely on (``\\_``, ``\\-`` outside a class).
    """
    # Halves of a pair that JSON decoding left as characters of their own: back to escapes, as written.
    source = _LONE_SURROGATE.sub(lambda found: "\\u%04X" % ord(found.group()), pattern)
    for flags in ("u", ""):
        try:
            return regress.Regex(source, flags)
        except (regress.RegressError, ValueError, OverflowError):
            continue
    return None


def ecma_search(pattern: str, text: str) -> Optional[bool]:
    """Does ``pattern`` match somewhere in ``text`` (a JSON Schema pattern is not anchored)? None: no verdict."""
    regex = ecma_regex(pattern)
    if regex is None:
        return None
    try:
        return regex.find(text) is not None
    except (UnicodeEncodeError, ValueError):  # a string no JSON document can hold (a lone surrogate)
        return None


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
