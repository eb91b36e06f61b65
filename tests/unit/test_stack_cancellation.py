"""``Cancellation``: every listener told once, a late one at once, one that stopped listening never."""
from __future__ import annotations

from typing import List

from cfnrun.stacks.cancellation import Cancellation


def test_listeners_are_told_once_late_ones_at_once_and_those_gone_never() -> None:
    told: List[str] = []
    cancellation = Cancellation()
    cancellation.listen(lambda reason: told.append(f"a: {reason}"))
    stop_b = cancellation.listen(lambda reason: told.append(f"b: {reason}"))
    stop_b()
    assert not cancellation.cancelled and told == []
    cancellation.cancel("First failed")
    cancellation.cancel("Second failed")  # the first reason stands; nobody is told twice
    cancellation.listen(lambda reason: told.append(f"c: {reason}"))
    assert told == ["a: First failed", "c: First failed"]
    assert cancellation.reason == "First failed"
