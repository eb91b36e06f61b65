"""How a fault --inject put into a handler's AWS call reads, in the timeline and serve's console."""
from __future__ import annotations

from typing import Any, Dict


def fault_line(fault: Dict[str, Any]) -> str:
    """One fault that fired during a call (the worker's report: rule, call, count)."""
    return f"injected --inject {fault.get('rule')} into {fault.get('call')} (matching call {fault.get('count')})"
