"""A resource whose first CREATE call was running when serve was killed: found by calling CREATE again with the same token.

Until its handler first answers with the resource's primaryIdentifier, no record names the resource; the call may
have made it all the same. ``in_flight.py`` writes the call down before it is made (with ``--state``). When the next
serve carries the stack's operation on (a rollback, ContinueUpdateRollback, or a DeleteStack), each call so left is
made again, before anything is deleted: CREATE, the same clientRequestToken, the properties as they were kept, its
IN_PROGRESS answers followed to the end. The handler contract asks a handler to be idempotent for one
clientRequestToken, so cfnrun infers that this second call answers for the resource the first one made (or makes the
one the first never got to); the resource then has an identifier, and the operation deletes it with the rest.

Only a resource type's handlers make that promise, and cfnrun's AWS::* provisioner keeps it (the resource's stack on the
endpoint is named after the token): a custom resource or a type cfnrun runs itself is not asked again. When the second call cannot name the resource (it answers FAILED — AlreadyExists, InvalidRequest, … —
or with no identifier, or it is not asked), its stack event says so, and serve's output names the resource and how to
remove it (``InFlight.unidentified``). A custom resource's Update left unanswered is reported the same way: its function
may have answered it with a new physical resource, which no record names.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from cfnrun.stacks.in_flight import FirstCall, InFlight, OperationStopped
from cfnrun.stacks.provisioning import NoProvisioner, Provisioner, Provisioners, ProvisioningFailed, ResourceWork
from cfnrun.stacks.records import Stack, StackResource

ASKING = (
    "cfnrun serve was stopped during this resource's first CREATE call, before its handler named the resource: calling CREATE "
    "again with the same clientRequestToken ({token}) to learn its identifier (the handler contract makes CREATE idempotent for one token)"
)
NAMED = "Calling CREATE again with the same clientRequestToken named the resource {physical_id}: it is deleted with the rest of the operation"
UNNAMED = (
    "cfnrun serve was stopped during this resource's first CREATE call, and {why}: a resource that call made may exist with no "
    "stack naming it; serve's output says how to find and remove it"
)
NOT_IDEMPOTENT = "a {type_name} is not asked again (it promises no idempotent CREATE, as a resource type's handlers do)"
MASKED = " (its properties held writeOnly or NoEcho values, never written down: they were sent masked)"
UPDATE_UNANSWERED = "its function had not answered the Update sent to {physical_id}, which it may have answered with a new PhysicalResourceId"
UPDATE_UNNAMED = (
    "cfnrun serve was stopped during this custom resource's Update, and {why}: a physical resource that Update made may "
    "exist with no stack naming it; serve's output says how to find and remove it"
)

WorkFor = Callable[[StackResource, Dict[str, Any], Optional[str]], ResourceWork]


def creates_idempotently(provisioner: Provisioner) -> bool:
    """Does a CREATE made again with the same clientRequestToken answer for what the first made (a resource type's handlers)?"""
    return bool(getattr(provisioner, "idempotent_creates", False))


async def ask_again(stack: Stack, provisioners: Provisioners, in_flight: InFlight, work_for: WorkFor) -> None:
    """Make again each first CREATE call of ``stack`` a killed serve left; each resource so named gets its identifier."""
    for logical_id, call in list(in_flight.first_calls.get(stack.stack_id, {}).items()):
        resource = stack.resources.get(logical_id)
        if resource is not None and call.updating is not None and resource.physical_id == call.updating:
            # a custom resource's Update, unanswered: a new physical resource its function made is in no record
            _unnamed(stack, resource, call, in_flight, "UPDATE", UPDATE_UNANSWERED.format(physical_id=call.updating), UPDATE_UNNAMED)
        elif resource is not None and resource.physical_id is None and resource.type_name == call.type_name:
            await _ask(stack, resource, call, provisioners, in_flight, work_for)
        in_flight.called(stack, logical_id)


async def _ask(stack: Stack, resource: StackResource, call: FirstCall, provisioners: Provisioners, in_flight: InFlight, work_for: WorkFor) -> None:
    verb = "UPDATE" if resource.status.startswith("UPDATE") else "CREATE"  # a replacement's new resource shows UPDATE events
    try:
        provisioner = provisioners.for_type(call.type_name)
    except NoProvisioner:
        return _unnamed(stack, resource, call, in_flight, verb, f"its type {call.type_name} is no longer served, so CREATE was not called again")
    if not creates_idempotently(provisioner):
        return _unnamed(stack, resource, call, in_flight, verb, NOT_IDEMPOTENT.format(type_name=call.type_name))
    stack.set_resource_status(resource, f"{verb}_IN_PROGRESS", ASKING.format(token=call.token))
    try:
        made = await provisioner.create(work_for(resource, dict(call.properties), call.token))
    except OperationStopped:
        raise  # stopped again: the call stays written down, for the serve after
    except ProvisioningFailed as failed:
        answered = f"calling CREATE again with the same clientRequestToken did not name it: {failed.reason}"
        return _unnamed(stack, resource, call, in_flight, verb, answered + (MASKED if call.masked else ""))
    except Exception as error:  # noqa: B902 - whatever the provisioner raises is reported, never the operation's end
        return _unnamed(stack, resource, call, in_flight, verb, f"calling CREATE again failed: {type(error).__name__}: {error}")
    resource.physical_id, resource.ref, resource.model = made.physical_id, made.ref, made.model
    resource.properties = None if call.masked else dict(call.properties)
    stack.set_resource_status(resource, f"{verb}_FAILED", NAMED.format(physical_id=made.physical_id))


def _unnamed(stack: Stack, resource: StackResource, call: FirstCall, in_flight: InFlight, verb: str, why: str, text: str = UNNAMED) -> None:
    stack.set_resource_status(resource, f"{verb}_FAILED", text.format(why=why))
    in_flight.unidentified(stack, resource, call, why)
