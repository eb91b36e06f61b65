"""LIST paging that makes no progress, as the server sees it.

A LIST handler behind the support library's production entrypoint never receives the
request's nextToken, so if it pages it answers every call with the first page and the
same nextToken: a client that follows tokens (``cfn test``) loops forever. The server
sees it as a LIST call whose answer hands back the very token it was called with.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from cfnrun.model.endings import PAGINATION_LOOP_HINT


class PagingWatch:
    """Counts, per function, consecutive LIST answers that return the token they were sent."""

    def __init__(self) -> None:
        self._repeats: Dict[str, Tuple[str, int]] = {}

    def repeats(self, function: str, sent: Optional[str], result: Any) -> int:
        """How many times in a row this function has now handed back ``sent``, the token it was called with (0: progress)."""
        returned = result.get("nextToken") if isinstance(result, dict) else None
        if sent is None or returned != sent:
            self._repeats.pop(function, None)
            return 0
        token, count = self._repeats.get(function, (sent, 0))
        count = count + 1 if token == sent else 1
        self._repeats[function] = (sent, count)
        return count


def loop_message(token: str, repeats: int) -> str:
    return (
        f"LIST paging makes no progress: the handler returned the nextToken it was called with ({token!r}) "
        f"{repeats} time(s) in a row, so a client following nextToken would loop forever. {PAGINATION_LOOP_HINT}"
    )
