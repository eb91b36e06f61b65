"""How deeply a JSON document nests: documents past a bound are refused where they come in.

Python's json parser gives up near 1,000 levels with a RecursionError, and recursive code
after it (schema validation, masking, model comparison) far sooner; no resource model nests
anywhere near MAX_NESTING, so a deeper one is a mistake to name, not to process.
"""
from __future__ import annotations

from typing import Any, List, Tuple

MAX_NESTING = 100


def too_deep(document: Any, limit: int = MAX_NESTING) -> bool:
    """Whether ``document`` (parsed JSON) has objects or arrays nested more than ``limit`` levels."""
    pending: List[Tuple[Any, int]] = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, (dict, list)):
            if depth > limit:
                return True
            children = value.values() if isinstance(value, dict) else value
            pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False
