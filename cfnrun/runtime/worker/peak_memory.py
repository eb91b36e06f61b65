"""The worker's peak resident set size, as its reply reports it for the REPORT line's ``Max Memory Used``.

``getrusage``'s ``ru_maxrss`` is the process's high-water mark over its life: what Lambda's figure
is too (a warm sandbox's ``Max Memory Used`` never goes down from one call to the next). It counts
what a forked worker shares with the process it was forked from, as Lambda counts its runtime; it
does not count processes the handler starts. Standard library only (the worker runs under any
interpreter); None where the platform has no ``resource`` module.
"""
from __future__ import annotations

import sys
from typing import Optional

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

_KIB_PER_UNIT = 1 / 1024 if sys.platform == "darwin" else 1  # macOS counts bytes, Linux KiB


def peak_rss_kib() -> Optional[int]:
    """This process's peak resident set size so far, in KiB (one getrusage call)."""
    if resource is None:
        return None
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * _KIB_PER_UNIT)
