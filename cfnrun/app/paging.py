"""LIST paging that makes no progress, as serve sees it, and when serve stops it.

A LIST handler behind the support library's production entrypoint never receives the
request's nextToken, so if it pages it answers every call with the first page and the
same nextToken: a client that follows tokens (``cfn test``) loops forever. Serve sees it
as a LIST call whose answer hands back the very token it was called with. Under
``--contract warn`` it answers the first repeats as they are, with a note, and stops the
loop at ``PAGING_LOOP_LIMIT``; under ``--contract strict`` at the first repeat.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Tuple

from cfnrun.model.endings import PAGINATION_LOOP_HINT
from cfnrun.model.seen_call import SeenCall
from cfnrun.runtime.outcome import InvocationOutcome

PAGING_LOOP_LIMIT = 3  # --contract warn: answers handing back their own nextToken before serve stops the loop


class PagingWatch:
    """Counts, per function, consecutive LIST answers that return the token they were sent."""

    def __init__(self) -> None:
        self._repeats: Dict[str, Tuple[str, int]] = {}
        self.stopped = 0  # loops answered FAILED, for a summary (cfnrun test)

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

    def answer(self, function: str, payload: Any, outcome: InvocationOutcome, notes: List[str], strict: bool) -> InvocationOutcome:
        """What to answer a LIST call (``payload``, as sent) the handler returned from: its answer, or FAILED once the paging loops.

        The call's own nextToken matters only when the answer hands one back, so only then is the call parsed for it."""
        result = outcome.result
        handed_back = result.get("nextToken") if isinstance(result, dict) else None
        sent = SeenCall.parse(payload).next_token if handed_back is not None else None
        repeats = self.repeats(function, sent, result)
        if not repeats:
            return outcome
        message = loop_message(sent or "", repeats)
        if not strict and repeats < PAGING_LOOP_LIMIT:
            notes.append(f"LOOP? {message} (answered as is; cfnrun stops it at {PAGING_LOOP_LIMIT} in a row)")
            return outcome
        self.stopped += 1
        notes.append(f"LOOP stopped: answered FAILED. {message}")
        failed = {"status": "FAILED", "errorCode": "InternalFailure", "message": f"cfnrun stopped a paging loop: {message}"}
        return dataclasses.replace(outcome, result=failed)


def loop_message(token: str, repeats: int) -> str:
    return (
        f"LIST paging makes no progress: the handler returned the nextToken it was called with ({token!r}) "
        f"{repeats} time(s) in a row, so a client following nextToken would loop forever. {PAGINATION_LOOP_HINT}"
    )
