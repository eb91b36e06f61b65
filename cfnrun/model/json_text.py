"""JSON text written as the ``json`` module writes it, by an encoder made once rather than once per text; and read as
``json.loads`` reads it, without its Python layers for the usual text.

``json.dumps`` and ``JSONEncoder.encode`` make CPython's C encoder anew for every text, in Python (``iterencode``):
a few thousand instructions each time, which serve spends on every call (its answer, its history records). A
``JsonWriter`` makes that encoder once, with the same settings, and checks at its making that it writes what the
``json`` module writes; where it would not (no C encoder, another signature), it uses the ``json`` module itself.

``read_json`` is ``json.loads`` for a text: one that is a single object or array, nothing before or after it, goes
straight to the decoder's scanner, sparing ``json.loads``' checks and its two whitespace matches (about two thirds of
what it spends on a request's small body); anything else, bad JSON included, goes to ``json.loads`` itself.
"""
from __future__ import annotations

import json
from json import encoder as json_encoder
from pathlib import PurePosixPath
from typing import Any, Callable, Optional, Sequence

_SAMPLE = {"b": [1, 2.5, -0.0, None, True, "é\n\"\u2028", {"z": {}, "a": []}], "a": 1e300 * 10, "c": float("nan"), "d": PurePosixPath("/x")}


_scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # the scanner json.loads runs (C where the interpreter has it)


def read_json(text: str) -> Any:
    """``json.loads(text)``: the same value, or the same error."""
    if text[:1] in ("{", "["):  # no BOM, no leading whitespace: json.loads would scan from 0 too
        try:
            value, end = _scan(text, 0)
        except (ValueError, StopIteration):  # bad JSON: json.loads says what is wrong, as ever
            pass
        else:
            if end == len(text):  # else trailing whitespace or extra data: json.loads' to judge
                return value
    return json.loads(text)


class JsonWriter:
    """``json.JSONEncoder(default=default, sort_keys=sort_keys, check_circular=False)``'s ``encode``, made once."""

    def __init__(self, sort_keys: bool = False, default: Optional[Callable[[Any], Any]] = None) -> None:
        self._encoder = json.JSONEncoder(default=default, sort_keys=sort_keys, check_circular=False)
        self._made = _made_once(self._encoder, sort_keys, default)

    def text(self, value: Any) -> str:
        if self._made is not None:
            return "".join(self._made(value, 0))
        return self._encoder.encode(value)


def _made_once(encoder: json.JSONEncoder, sort_keys: bool, default: Optional[Callable[[Any], Any]]) -> Optional[Callable[[Any, int], Sequence[str]]]:
    """The C encoder ``encoder.iterencode`` would make, made here once; None where there is none or it writes otherwise."""
    make = getattr(json_encoder, "c_make_encoder", None)
    if make is None:
        return None
    try:
        made: Callable[[Any, int], Sequence[str]] = make(
            None, encoder.default, json_encoder.encode_basestring_ascii, None, ": ", ", ", sort_keys, False, True
        )
        sample = _SAMPLE if default is not None else {k: v for k, v in _SAMPLE.items() if k != "d"}
        if "".join(made(sample, 0)) != encoder.encode(sample):
            return None
    except (TypeError, ValueError):  # another Python's C encoder
        return None
    return made
