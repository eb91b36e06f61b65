"""A stack operation serve stopped during (SIGKILL, or a stop with ``--state``), carried on by the next serve on the same state.

The service never loses track of an operation; when one cannot go on it rolls it back. cfnrun does the same on
restart, on what the record holds (``persistence.py`` reads the stack back failed, each resource as it was last
recorded, one whose operation was in flight with the id its handler's last IN_PROGRESS answer gave, ``in_flight.py``):

- a create (or its rollback) goes on as a rollback: CREATE_FAILED, ROLLBACK_IN_PROGRESS, each resource it made deleted,
  ROLLBACK_COMPLETE — unless the create disabled rollback (CREATE_FAILED stays, as the service keeps it);
- an update (or its rollback) goes on as its rollback: UPDATE_ROLLBACK_IN_PROGRESS, each resource it touched put back to
  its properties from before (``interrupted_update.py``), what it added deleted, UPDATE_ROLLBACK_COMPLETE — or
  UPDATE_ROLLBACK_FAILED naming what cannot be put back (then ContinueUpdateRollback with ResourcesToSkip, or DeleteStack);
- a delete goes on deleting: DELETE_COMPLETE, or DELETE_FAILED naming what would not go (DeleteStack again);
- an update's cleanup goes on: the old resources of its replacements (kept aside as they were replaced) are deleted, and
  so is each resource it removes, by its DeletionPolicy in the template from before the update (kept with the update,
  ``persistence.py``; a record of an earlier cfnrun lacks it: then only those whose delete had begun, read back
  DELETE_FAILED, go, and the rest stays in the stack for DeleteStack).

An update's replacements are rolled back too: the old resource of each was written aside before its new one was made.

Why not resume the create where it stopped, with the last callbackContext? Its properties would have to be resolved
again from a template whose NoEcho parameter values and writeOnly properties were never written to disk. A rollback
needs only what the record holds: the physical id and model. Each call it makes carries the interrupted operation's
ClientRequestToken. A resource whose first CREATE call never answered is named first, by that call made again with the
same token (``unanswered_creates.py``).
"""
from __future__ import annotations

from typing import List, Optional

from cfnrun.stacks.engine import StackEngine
from cfnrun.stacks.records import Stack

RESUMED = "cfnrun serve stopped during this operation and was started again: carrying on as the service would"


def operation_token(stack: Stack) -> Optional[str]:
    """The ClientRequestToken of the operation serve stopped during, as its last ``*_IN_PROGRESS`` stack event carries it."""
    moving = (e for e in reversed(stack.events) if e.logical_id == stack.name and e.status.endswith("_IN_PROGRESS"))
    return next((e.client_request_token for e in moving), None)


def carried_on_as(engine: StackEngine, stack: Stack, was: str) -> Optional[str]:
    """The operation (its type, as DescribeEvents names it) that carries on what ``stack`` was in (``was``); None: it stays failed."""
    if stack.stack_id not in engine.blueprints:
        return None  # nothing to order its resources by: DeleteStack removes what it holds
    if was == "CREATE_IN_PROGRESS" and not stack.disable_rollback or was == "ROLLBACK_IN_PROGRESS":
        return "ROLLBACK"
    replaced = engine.in_flight.replaced_before.get(stack.stack_id)
    if was in ("UPDATE_IN_PROGRESS", "UPDATE_ROLLBACK_IN_PROGRESS") or was == "UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS" and replaced:
        return "CONTINUE_ROLLBACK"  # (a rollback's cleanup, too, when it had old resources still to put back)
    if was == "DELETE_IN_PROGRESS":
        return "DELETE_STACK"
    if was == "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS" and (replaced or removed_by_update(engine, stack)):
        return "UPDATE_STACK"
    return None  # nothing left to do (a rollback's cleanup: what it had not deleted yet is still in the stack, for DeleteStack)


def removed_by_update(engine: StackEngine, stack: Stack) -> List[str]:
    """The resources an update's cleanup had still to delete when serve stopped: no longer in its template. Without the
    template from before the update (their DeletionPolicy), only those whose delete had begun (read back DELETE_FAILED,
    ``persistence.py``) or failed."""
    template = engine.blueprints[stack.stack_id].template.resources
    removed = [lid for lid in stack.resources if lid not in template]
    if stack.stack_id in engine.rolled_back_to:
        return removed
    last = {e.logical_id: e.status for e in stack.events}
    return [lid for lid in removed if last.get(lid) in ("DELETE_IN_PROGRESS", "DELETE_FAILED", "DELETE_COMPLETE")]


async def carry_on(engine: StackEngine, stack: Stack, operation_type: str) -> None:
    """Roll back (or, for a delete, go on with) the operation ``stack`` was in when serve stopped (``carried_on_as``)."""
    token = operation_token(stack)
    if operation_type == "ROLLBACK":
        await engine.roll_back(stack, token, reason=RESUMED)
    elif operation_type == "CONTINUE_ROLLBACK":
        await engine.continue_update_rollback(stack, frozenset(), token)
    elif operation_type == "UPDATE_STACK":
        replaced = dict(engine.in_flight.replaced_before.get(stack.stack_id) or {})
        await engine.finish_cleanup(stack, replaced, removed_by_update(engine, stack), token, RESUMED)
    else:
        await engine.delete(stack, frozenset(), token, reason=RESUMED)
