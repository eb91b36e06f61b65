"""What an update serve lost track of (a restart with ``--state``) did, read back from the stack's own events.

ContinueUpdateRollback needs each resource's properties from before the update. The engine keeps them while
it runs; after a restart only the stack record is left: its events, each with the properties the resource
was created or updated with (``ResourceProperties``). A resource the update touched goes back to the
properties of its last ``*_COMPLETE`` event before the update began — unless its properties held a writeOnly
or NoEcho value (they were never written, so the events show them masked), or it was replaced (the old
physical resource is not in the record): then it cannot be put back, and the rollback says so.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Set

from cfnrun.stacks.records import Stack, StackResource

REPLACING = "Requested update requires the creation of a new physical resource; hence creating one."
GONE = ("DELETE_COMPLETE", "DELETE_SKIPPED")  # a resource's last event once it is no longer the stack's


@dataclass
class InterruptedUpdate:
    previous: Dict[str, Dict[str, Any]] = field(default_factory=dict)  # updated in place: its properties before
    added: Set[str] = field(default_factory=set)  # created by the update: deleted by its rollback
    lost: List[str] = field(default_factory=list)  # touched, but what it was before is not in the record
    replaced: Dict[str, StackResource] = field(default_factory=dict)  # replaced: the old resource, kept aside (``in_flight.py``)


def interrupted_update(stack: Stack, replaced: Optional[Mapping[str, StackResource]] = None) -> InterruptedUpdate:
    """The last update of ``stack``, as its events tell it; ``replaced``: the old resources of its replacements, as kept."""
    found = InterruptedUpdate()
    replaced = replaced or {}
    starts = [i for i, e in enumerate(stack.events) if e.logical_id == stack.name and e.status == "UPDATE_IN_PROGRESS"]
    if not starts:
        return found
    before, since = stack.events[: starts[-1]], stack.events[starts[-1]:]
    for logical_id, resource in stack.resources.items():
        during = [e for e in since if e.logical_id == logical_id]
        if not during:
            continue
        history = [e for e in before if e.logical_id == logical_id]
        done = [e for e in history if e.status in ("CREATE_COMPLETE", "UPDATE_COMPLETE")]
        if not done or history[-1].status in GONE:  # not in the stack as the update began (an earlier one may have deleted it)
            found.added.add(logical_id)
        elif logical_id in replaced:
            found.replaced[logical_id] = replaced[logical_id]
        elif any(e.reason == REPLACING for e in during) or resource.properties is None or not done[-1].properties:
            found.lost.append(logical_id)
        elif any(e.status.startswith("UPDATE_") for e in during):
            found.previous[logical_id] = json.loads(done[-1].properties or "{}")
    return found
