"""The child's side of ``line_children.py``: answer each line of JSON on stdin with one line of JSON on stdout.

Kept apart from the parent's side so a child imports no more than this (the parent's side needs
asyncio, a twentieth of a cfn-lint child's start).
"""
from __future__ import annotations

import json
import sys
from typing import Any, Callable, Dict


def answer_lines(answer: Callable[[Dict[str, Any]], Dict[str, Any]]) -> None:
    """For each request line on stdin, ``answer(request)``'s dict as one line on stdout."""
    for line in sys.stdin.buffer:
        sys.stdout.write(json.dumps(answer(json.loads(line))) + "\n")
        sys.stdout.flush()
