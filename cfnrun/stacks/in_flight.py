"""Resource operations in flight: each IN_PROGRESS answer kept as it arrives, so a killed serve loses no resource.

A handler that answers IN_PROGRESS has usually made its resource already (the cluster sample's
CREATE answers with the ClusterId it made, then stabilizes). The service keeps that model and its
callbackContext; cfnrun keeps them too, the moment they arrive:

- the resource being created takes the answer's physical id and model at once, so a DeleteStack or a
  rollback removes it even though the create never finished;
- with ``--state``, the stack's record is written then (and the invocation — action, clientRequestToken,
  callbackContext, model — in ``state_db.py``'s ``invocations``), so after a SIGKILL the stack read back
  knows the resource, and the next DeleteStack deletes it.

Before then, while a resource's first CREATE call is running (a create's, or a replacement's new resource), nothing
names the resource yet; with ``--state`` that call is written down before it is made (``first_calls``: the type, the
handler's clientRequestToken, the properties as events show them — writeOnly and NoEcho values masked), and crossed out
once the record names the resource or the call ended without making one. A row a killed serve left is how the next one
finds what the call made: it calls CREATE again with the same token (``unanswered_creates.py``).

When serve is told to stop, the engine starts no resource operation more and each handler call in flight ends at its
next wait (``OperationStopped``): the resource stays ``*_IN_PROGRESS`` as its last answer left it, the stack operation
ends where it is, and the record shows what is left (with ``--state``, for the next serve to roll it back; without, for
the stop message to name).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable, Dict, List, Optional

from cfnrun.stacks.persistence import scrubbed
from cfnrun.stacks.provisioning import Provisioned
from cfnrun.stacks.records import Stack, StackResource
from cfnrun.stacks.state_db import StateDatabase


STOPPED = "cfnrun serve stopped: no further handler calls were made; the resource is as its handler's last answer left it"


@dataclass(frozen=True)
class FirstCall:
    """A resource's first CREATE call, as written before it was made; or (``updating``) a custom resource's Update, which
    its function may answer with a new physical resource."""

    type_name: str
    token: Optional[str]  # the handler's clientRequestToken
    properties: Dict[str, Any]  # as events show them: writeOnly and NoEcho values masked
    masked: bool  # did masking change them (then they are not the properties the first call sent)
    updating: Optional[str] = None  # an Update's: the physical id it was sent to


class OperationStopped(Exception):
    """Serve is stopping: the resource operation ends where it is, and so does its stack's operation."""


class InFlight:
    """What the engine tells of each IN_PROGRESS answer; ``database`` and ``save`` are --state's (None: memory only)."""

    def __init__(self, database: Optional[StateDatabase] = None, save: Optional[Callable[[Stack], None]] = None) -> None:
        self.database = database
        self.save = save
        # by stack id: the old resource of each replacement the stack's update in flight (or its last, left UPDATE_FAILED or
        # UPDATE_ROLLBACK_FAILED) made, until that update or its rollback completes (with --state: read back after a restart)
        self.replaced_before: Dict[str, Dict[str, StackResource]] = {}
        # by stack id: the old resources of replacements earlier updates made that ended UPDATE_FAILED (one batch per
        # update), no longer any record's: deleted once the update after them ends, whichever way, or with the stack
        self.superseded: Dict[str, List[Dict[str, StackResource]]] = {}
        self.first_calls: Dict[str, Dict[str, FirstCall]] = {}  # by stack id, then logical id: first calls a killed serve left
        # told of a resource a first call may have made that no CREATE call again could name (the app prints how to remove it)
        self.unidentified: Callable[[Stack, StackResource, FirstCall, str], None] = lambda stack, resource, call, why: None

    def replacing(self, stack: Stack, old: StackResource) -> None:
        """An update replaces ``old`` (or a custom resource moved off it): with --state, it is written before the new one is
        made, so that the rollback after a restart can put it back (its properties and attributes are not written: the
        DELETE or the rollback needs only its id and model)."""
        self.replaced_before.setdefault(stack.stack_id, {})[old.logical_id] = old
        if self.database is not None:
            self.database.put_replaced(stack.stack_id, old.logical_id, self._kept(stack, {old.logical_id: old})[old.logical_id])

    def replacements_done(self, stack: Stack) -> None:
        """The update (or its rollback) is complete: its old resources are deleted, or back in the stack's record."""
        self.replaced_before.pop(stack.stack_id, None)
        if self.database is not None:
            self.database.drop_replaced(stack.stack_id)

    def supersede(self, stack: Stack) -> None:
        """An update starts on a stack whose last one failed and was not rolled back (UPDATE_FAILED): the old resources of
        that one's replacements are set aside as a batch of their own (with --state, moved in one transaction), so the
        new update's replacements cannot take their place."""
        replaced = self.replaced_before.pop(stack.stack_id, None)
        if not replaced:
            return
        batches = self.superseded.setdefault(stack.stack_id, [])
        batches.append(replaced)
        if self.database is not None:
            with self.database.one_transaction():
                self.database.put_superseded(stack.stack_id, [self._kept(stack, batch) for batch in batches])
                self.database.drop_replaced(stack.stack_id)

    def superseded_gone(self, stack: Stack, left: List[Dict[str, StackResource]]) -> None:
        """The superseded old resources were deleted; ``left``: those whose delete failed, still to go."""
        if left:
            self.superseded[stack.stack_id] = left
        else:
            self.superseded.pop(stack.stack_id, None)
        if self.database is not None:
            self.database.put_superseded(stack.stack_id, [self._kept(stack, batch) for batch in left])

    @staticmethod
    def _kept(stack: Stack, batch: Dict[str, StackResource]) -> Dict[str, Any]:
        return {lid: scrubbed(asdict(replace(old, properties=None, attributes={})), stack) for lid, old in batch.items()}

    def calling(
        self, stack: Stack, resource: StackResource, token: Optional[str], shown: str, properties: Dict[str, Any], updating: Optional[str] = None,
    ) -> None:
        """``resource``'s first CREATE call (or, ``updating``, a custom resource's Update of that physical id) is about to be
        made (``shown``: its properties as events show them): with --state, written down first, so that a SIGKILL during
        the call leaves a row naming it."""
        if self.database is None:
            return
        masked = shown != json.dumps(properties, sort_keys=True, default=str)
        try:
            kept = json.loads(shown)
        except ValueError:  # a NoEcho value masked where it was JSON's own text (":", say): nothing of it is kept
            kept = {}
        record = {"type": resource.type_name, "token": token, "properties": kept, "masked": masked, "updating": updating}
        self.database.put_first_call(stack.stack_id, resource.logical_id, record)

    def called(self, stack: Stack, logical_id: str) -> None:
        """The first call ended, and the stack's record says how (it names the resource, or the call made none)."""
        self.first_calls.get(stack.stack_id, {}).pop(logical_id, None)
        if self.database is not None:
            self.database.drop_first_call(stack.stack_id, logical_id)

    def restore(self) -> None:
        """Read back the old resources of replacements an interrupted or failed update made (and those of earlier failed
        updates, superseded), and the first calls a killed serve left."""
        if self.database is None:
            return
        for call in self.database.first_calls():
            self.first_calls.setdefault(call["stack_id"], {})[call["logical_id"]] = FirstCall(
                str(call["type"]), call.get("token"), dict(call.get("properties") or {}), bool(call.get("masked")), call.get("updating"),
            )
        for record in self.database.replaced():
            stack_id = record.pop("stack_id")
            self.replaced_before.setdefault(stack_id, {})[record["logical_id"]] = StackResource(**record)
        for stack_id, batches in self.database.superseded().items():
            self.superseded[stack_id] = [{lid: StackResource(**old) for lid, old in batch.items()} for batch in batches]

    def progressed(
        self, stack: Stack, resource: StackResource, made: Provisioned, callback_context: Optional[Dict[str, Any]], token: Optional[str]
    ) -> None:
        """``resource``'s handler answered IN_PROGRESS with ``made``'s identifier: the stack knows the resource from now on."""
        if resource.physical_id is not None:
            return  # an update or a delete in flight: the resource is known already, its last finished model kept
        resource.physical_id, resource.ref, resource.model = made.physical_id, made.ref, made.model
        if self.database is None or self.save is None:
            return
        record = {"action": resource.status.split("_")[0], "token": token, "callbackContext": callback_context, "physicalId": made.physical_id}
        self.database.put_invocation(stack.stack_id, resource.logical_id, record)
        self.save(stack)
        self.called(stack, resource.logical_id)  # the record names it now
