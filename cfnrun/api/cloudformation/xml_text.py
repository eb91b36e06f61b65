"""Text as XML 1.0 can carry it: markup escaped, and characters XML cannot hold at all replaced.

A template or a handler's message may hold control characters; left in, they would make the
whole answer unparseable for botocore, so they become U+FFFD instead. A carriage return is written as a reference: XML parsers
turn a literal one into a newline.
"""
from __future__ import annotations

import re
from xml.sax.saxutils import escape

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def escaped(text: str) -> str:
    return escape(_NOT_XML.sub("\ufffd", text), {'"': "&quot;", "\r": "&#13;"})
