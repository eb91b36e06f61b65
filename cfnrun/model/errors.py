"""Errors cfnrun reports to its user as one clear line, never as a traceback."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional, Union


class CfnrunError(Exception):
    """Something the user can fix: a bad flag, file or project."""


class ProjectError(CfnrunError):
    """A provider project file is missing or broken; names the file."""

    def __init__(self, path: Optional[Union[str, Path]], problem: str) -> None:
        self.path = str(path) if path is not None else None
        self.problem = problem
        super().__init__(f"{self.path}: {problem}" if self.path else problem)


def unreadable(error: ValueError) -> str:
    """What a ValueError met reading a JSON or YAML document says: its own words, or for an integer past the digits
    Python reads (4,300 by default, a guard against its quadratic conversion) which number was too long."""
    if isinstance(error, json.JSONDecodeError) or "integer string conversion" not in str(error):
        return str(error)
    return f"a number has more than {sys.get_int_max_str_digits()} digits, more than can be read"


def not_json(error: json.JSONDecodeError) -> str:
    """The one wording for a document that does not parse: what, and where."""
    return f"not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
