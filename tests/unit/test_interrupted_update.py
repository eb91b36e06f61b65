"""``interrupted_update``: what an update serve lost track of did, read back from the stack's events."""
from __future__ import annotations

import json

from cfnrun.stacks.interrupted_update import interrupted_update
from cfnrun.stacks.records import Stack, StackResource

NOTE = "Cfnrun::Sample::Note"


def _stack() -> Stack:
    return Stack("arn:aws:cloudformation:us-east-1:123456789012:stack/kept/1", "kept", "UPDATE_ROLLBACK_FAILED", "{}", {})


def _complete(stack: Stack, resource: StackResource, status: str, properties: dict) -> None:
    stack.set_resource_status(resource, status, None, json.dumps(properties))


def test_a_resource_an_earlier_update_deleted_and_this_one_creates_again_is_added_not_lost() -> None:
    """Found by the stack state machine under load: B, created by one update and deleted by the next, was being created
    again by a third when serve was killed; its earlier CREATE_COMPLETE made it look updated, not added, and with no
    properties kept (its first call never answered) the rollback refused it as lost."""
    stack = _stack()
    a, b = StackResource("A", NOTE, "NOT_STARTED"), StackResource("B", NOTE, "NOT_STARTED")
    stack.resources = {"A": a}
    stack.set_status("CREATE_IN_PROGRESS")
    _complete(stack, a, "CREATE_COMPLETE", {"Title": "one"})
    stack.set_status("UPDATE_IN_PROGRESS")  # B added, then removed by the next update
    stack.resources["B"] = b
    _complete(stack, b, "CREATE_COMPLETE", {"Title": "bee"})
    stack.set_status("UPDATE_IN_PROGRESS")
    stack.set_resource_status(b, "DELETE_IN_PROGRESS")
    stack.set_resource_status(b, "DELETE_COMPLETE")
    del stack.resources["B"]
    stack.set_status("UPDATE_COMPLETE")
    stack.set_status("UPDATE_IN_PROGRESS")  # the update serve was killed during: A updated, B's first CREATE unanswered
    _complete(stack, a, "UPDATE_COMPLETE", {"Title": "three"})
    a.properties = {"Title": "three"}
    again = StackResource("B", NOTE, "CREATE_FAILED")
    stack.resources["B"] = again
    stack.set_resource_status(again, "CREATE_IN_PROGRESS")

    found = interrupted_update(stack)
    assert found.added == {"B"} and found.lost == []
    assert found.previous == {"A": {"Title": "one"}}
