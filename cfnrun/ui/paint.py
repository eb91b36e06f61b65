"""Colour for the terminal: on for a TTY unless NO_COLOR is set, one style table for every view; and a live
line cut to the terminal's width, so redrawing it in place never wraps."""
from __future__ import annotations

import os
import shutil
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


def fitted(text: str) -> str:
    """``text`` cut to one line of the terminal (an ellipsis where it was cut), for a line redrawn in place."""
    width = shutil.get_terminal_size().columns - 1
    return text if len(text) <= width else text[: width - 1] + "…"
