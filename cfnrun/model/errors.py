"""Errors cfnrun reports to its user as one clear line, never as a traceback."""
from __future__ import annotations

import json
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


def not_json(error: json.JSONDecodeError) -> str:
    """The one wording for a document that does not parse: what, and where."""
    return f"not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
