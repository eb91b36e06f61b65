"""Where a resource is declared in a template's text: a CHANGE_SET hook's ``lineNumber`` (the Hooks user guide).

The guide's example numbers each changed resource by the line of its logical id under ``Resources``
(1-based: ``DynamoDBTable`` on line 2 right below ``Resources:``). That line is found in the text the
template was given as, JSON or YAML: the first key line after ``Resources`` with the indentation of
the first resource, else (a template on one line) the first line naming the id as a key.
"""
from __future__ import annotations

import re
from typing import Dict, Iterable, List, Optional

_RESOURCES = re.compile(r"""["']?\bResources["']?\s*:""")
_KEY = re.compile(r"""^(\s*)["']?([A-Za-z0-9]+)["']?\s*:""")


def _first_resource_indent(lines: List[str], start: int) -> Optional[int]:
    for line in lines[start:]:
        found = _KEY.match(line)
        if found:
            return len(found.group(1))
    return None


def resource_lines(body: str, logical_ids: Iterable[str]) -> Dict[str, int]:
    """The 1-based line each of ``logical_ids`` is declared on in ``body``, for those found."""
    lines = body.splitlines()
    at = next((index for index, line in enumerate(lines) if _RESOURCES.match(line.lstrip(" {"))), None)
    if at is None:  # a template on one line: Resources somewhere in it
        at = next((index for index, line in enumerate(lines) if _RESOURCES.search(line)), None)
    if at is None:
        return {}
    start = at + 1
    indent = _first_resource_indent(lines, start)
    declared: Dict[str, int] = {}
    for number, line in enumerate(lines[start:], start=start + 1):
        found = _KEY.match(line)
        if found and len(found.group(1)) == indent:
            declared.setdefault(found.group(2), number)
    wanted = set(logical_ids)
    for logical_id in wanted - set(declared):
        key = re.compile(r"""["']?""" + re.escape(logical_id) + r"""["']?\s*:""")
        found_at = next((index + 1 for index, line in enumerate(lines) if index >= at and key.search(line)), None)
        if found_at is not None:
            declared[logical_id] = found_at
    return {logical_id: declared[logical_id] for logical_id in wanted if logical_id in declared}
