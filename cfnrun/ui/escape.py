"""Text from handlers, made safe for a terminal: control characters shown, not obeyed.

A handler's output, messages and error codes may carry escape sequences (colours, cursor
moves, a title change, a bell). Printed raw they would rewrite the console; shown as
``\\x1b[31m`` they stay readable. Tabs and line breaks are kept.
"""
from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(match: "re.Match[str]") -> str:
    return f"\\x{ord(match.group()):02x}"


def printable(text: str) -> str:
    return _CONTROL.sub(_visible, text)
