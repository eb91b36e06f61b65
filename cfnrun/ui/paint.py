"""Colour for the terminal: on for a TTY unless NO_COLOR is set, one style table for every view."""
from __future__ import annotations

import os
from typing import Optional, TextIO

_STYLES = {
    "SUCCESS": "32", "ok": "32",
    "FAILED": "31", "fail": "31",
    "IN_PROGRESS": "33", "warn": "33",
    "dim": "2", "bold": "1",
}


def is_terminal(out: TextIO) -> bool:
    return hasattr(out, "isatty") and out.isatty()


def wants_color(out: TextIO, color: Optional[bool] = None) -> bool:
    """The caller's choice, or: a terminal, and the user did not set NO_COLOR."""
    return (is_terminal(out) and "NO_COLOR" not in os.environ) if color is None else color


def paint(style: str, text: str, enabled: bool) -> str:
    code = _STYLES.get(style)
    return f"\033[{code}m{text}\033[0m" if enabled and code else text
