"""Schema ``pattern``s as Python's ``re`` can run them.

Resource schemas are written for ECMAScript regular expressions, and AWS schemas often
spell characters beyond the Basic Multilingual Plane as UTF-16 surrogate pairs, e.g.
``[\\u0020-\\uD7FF\\uD800\\uDC00-\\uDBFF\\uDFFF]``. Python's ``re`` reads each half as a
character of its own, so such a class is a "bad character range" there. Surrogate pairs
are translated to the code point they stand for; a pattern that still does not compile is
skipped, as cloudformation-cli skips it ("Could not validate regular expression"), and
reported once.
"""
from __future__ import annotations

import re
from typing import Any, Iterator, Optional, Tuple

_ESCAPED_PAIR = re.compile(r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})")


def _code_point(match: "re.Match[str]") -> str:
    high, low = int(match.group(1), 16), int(match.group(2), 16)
    return "\\U%08x" % (0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


def python_pattern(pattern: str) -> Optional[str]:
    """``pattern`` as ``re`` compiles it (translated if need be), or None when it cannot."""
    candidates = [pattern]
    translated = _ESCAPED_PAIR.sub(_code_point, pattern)
    try:  # surrogate pairs that JSON decoding left as two characters
        translated = translated.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeError:
        pass
    if translated != pattern:
        candidates.append(translated)
    for candidate in candidates:
        try:
            re.compile(candidate)
        except (re.error, RecursionError, OverflowError):
            continue
        return candidate
    return None


def unusable_patterns(document: Any, pointer: str = "") -> Iterator[Tuple[str, str]]:
    """(JSON pointer, pattern) for every pattern in a schema that ``re`` cannot run, even translated."""
    if isinstance(document, list):
        for index, item in enumerate(document):
            yield from unusable_patterns(item, f"{pointer}/{index}")
        return
    if not isinstance(document, dict):
        return
    for key, value in document.items():
        here = f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}"
        if key == "pattern" and isinstance(value, str) and python_pattern(value) is None:
            yield here, value
        elif key == "patternProperties" and isinstance(value, dict):
            for name, sub in value.items():
                if python_pattern(name) is None:
                    yield f"{here}/{name}", name
                yield from unusable_patterns(sub, f"{here}/{name}")
        else:
            yield from unusable_patterns(value, here)


def skipped_pattern_note(pointer: str, pattern: str) -> str:
    return f"schema pattern at {pointer} ({pattern!r}) is not a regular expression Python can run: values are not checked against it"
