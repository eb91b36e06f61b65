"""``AWS::CloudFormation::Stack``: a nested stack, run as a local stack of its own through the same stack operations.

The child's template comes from ``TemplateURL``: an object in the AWS endpoint's S3, or a path on
disk (what cfn-lint and ``aws cloudformation package`` read before packaging): ``template_locations.py``. The child is created as the service
names it (``<parent>-<logical id>-<12 random characters>``) with the resource's ``Parameters``;
its physical id (and Ref) is its stack id, ``Fn::GetAtt Child.Outputs.X`` reads its outputs. An
update updates the child in place, also when only the child's template file changed (the parent's
template being the same: ``template_changed``, a Modify whose ChangeSource is Automatic); a delete deletes it. A child that fails fails the resource
with the service's words (``Embedded stack <id> was not successfully created: <reason>``). The child is given the IAM capabilities
its parent's operation acknowledged: a child with IAM resources the parent did not acknowledge fails the resource with the
child's refusal (``Requires capabilities : [CAPABILITY_IAM]``).
"""
from __future__ import annotations

import asyncio
import random
import string
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Protocol, Sequence, Tuple

from cfnrun.app.stacks.template_locations import UnreadableLocation, read_location, s3_location
from cfnrun.invoker.cancellable_clock import CancelRequested, Stopping
from cfnrun.invoker.clock import RealClock
from cfnrun.stacks.blueprint import KNOWN_AFTER_APPLY
from cfnrun.stacks.in_flight import OperationStopped
from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, Replacement, ResourceWork, property_problem, required_key
from cfnrun.stacks.change_sets import ChangeSet
from cfnrun.stacks.store import StackError, StackStore

NESTED_STACK = "AWS::CloudFormation::Stack"
# A child is given its parent's IAM capabilities (CAPABILITY_IAM, CAPABILITY_NAMED_IAM): one whose template needs more is
# refused as the parent's would be, its resource failing with that refusal. CAPABILITY_AUTO_EXPAND is always given (a
# child's macros are not asked to be acknowledged again).
AUTO_EXPAND = "CAPABILITY_AUTO_EXPAND"
# Where each operation on the child ends (a status read before the operation began is none of them).
ENDS = {
    "CREATE": ("CREATE_COMPLETE", "CREATE_FAILED", "ROLLBACK_COMPLETE", "ROLLBACK_FAILED"),
    "UPDATE": ("UPDATE_COMPLETE", "UPDATE_FAILED", "UPDATE_ROLLBACK_COMPLETE", "UPDATE_ROLLBACK_FAILED"),
    "DELETE": ("DELETE_COMPLETE", "DELETE_FAILED"),
}
ROLLBACK_STARTS = ("ROLLBACK_IN_PROGRESS", "UPDATE_ROLLBACK_IN_PROGRESS")  # a child's status as it starts undoing a failure
ROLLBACK_REQUESTED = "Rollback requested by user."
SETTLED = "ANY"  # any end: the child is in no operation
POLL_FIRST_S = 0.05
POLL_MAX_S = 0.5


class StackCalls(Protocol):
    async def call(self, operation: str, params: Dict[str, Any]) -> Dict[str, Any]: ...


class NestedStacks:
    """The ``Provisioner`` of ``AWS::CloudFormation::Stack``; ``calls`` (the local stack operations) are given once they exist."""

    def __init__(self, endpoint_url: Optional[str], region: str, stopping: Optional[Stopping] = None, own_url: Optional[str] = None) -> None:
        self.endpoint_url = endpoint_url
        self.own_url = own_url  # serve's address: a TemplateURL there is in the endpoint's S3 too (``template_locations.py``)
        self.region = region
        self.stopping = stopping or Stopping()  # serve stopping ends the wait for the child at once (it stops too: same engine)
        self.calls: Optional[StackCalls] = None
        self.adopt: Callable[[str, str], None] = lambda child_id, parent_id: None  # records the child's ParentId/RootId
        self.child_template: Callable[[str], Optional[str]] = lambda child_id: None  # the template the child was last given
        self.store: Optional[StackStore] = None  # the stacks and change sets (IncludeNestedStacks), given once they exist

    def validate(self, type_name: str, logical_id: str, properties: Dict[str, Any]) -> Optional[str]:
        if not isinstance(properties.get("TemplateURL"), str):
            return property_problem(logical_id, required_key("TemplateURL"))
        return None

    def shown(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        return properties

    def replacement(self, type_name: str, property_path: str) -> Replacement:
        return Replacement.NEVER  # every property of a nested stack updates it in place

    def template_changed(self, child_id: Optional[str], properties: Dict[str, Any]) -> bool:
        """Is the child's template on disk no longer the one it was last given (the parent's properties being the same)?
        An S3 object is not read again here (a packaged template's key changes with its content)."""
        url = properties.get("TemplateURL")
        if child_id is None or not isinstance(url, str):
            return False
        try:
            if s3_location(url, self.endpoint_url, self.own_url) is not None:
                return False
        except UnreadableLocation:
            return False
        path = Path(url).expanduser()
        given = self.child_template(child_id)
        return given is not None and path.is_file() and path.read_text() != given

    async def create(self, work: ResourceWork) -> Provisioned:
        nested = self._nested_change_set(work)
        if nested is not None:  # the parent executes a change set made with IncludeNestedStacks: the child's CREATE one runs
            assert self.store is not None
            stack_id = self.store.change_sets[nested].stack_id
            self._execute(nested)
        else:
            body = await self._template(work.properties["TemplateURL"])
            suffix = "".join(random.choices(string.ascii_uppercase + string.digits, k=12))
            name = f"{work.stack.stack_name}-{work.logical_id}-{suffix}"
            answer = await self._call("CreateStack", {"StackName": name, "TemplateBody": body, "Capabilities": self._capabilities(work),
                                                      "Parameters": _parameters(work.properties), "DisableRollback": False,
                                                      **_notified(work.properties)})
            stack_id = answer["StackId"]
            self.adopt(stack_id, work.stack.stack_id)
        work.progress(Provisioned(stack_id, stack_id), None)  # the parent's record names the child from now on (``in_flight.py``)
        status, reason = await self._settled(stack_id, "CREATE")
        if status != "CREATE_COMPLETE":
            await self._delete(stack_id)
            raise ProvisioningFailed(f"Embedded stack {stack_id} was not successfully created: {reason}")
        return await self._provisioned(stack_id, work)

    async def update(self, work: ResourceWork) -> Provisioned:
        stack_id = str(work.physical_id)
        nested = self._nested_change_set(work)
        if nested is not None:  # the parent executes a change set made with IncludeNestedStacks: so does the child
            self._execute(nested)
            status, reason = await self._settled(stack_id, "UPDATE")
            if status != "UPDATE_COMPLETE":
                raise ProvisioningFailed(f"Embedded stack {stack_id} was not successfully updated. Currently in {status} with reason: {reason}")
            return await self._provisioned(stack_id, work)
        body = await self._template(work.properties["TemplateURL"])
        try:
            await self._call("UpdateStack", {"StackName": stack_id, "TemplateBody": body, "Capabilities": self._capabilities(work),
                                             "Parameters": _parameters(work.properties), **_notified(work.properties)})
        except ProvisioningFailed as error:
            if "No updates are to be performed" not in error.reason:
                raise
            return await self._provisioned(stack_id, work)
        status, reason = await self._settled(stack_id, "UPDATE")
        if status != "UPDATE_COMPLETE":
            raise ProvisioningFailed(f"Embedded stack {stack_id} was not successfully updated. Currently in {status} with reason: {reason}")
        return await self._provisioned(stack_id, work)

    async def include_nested(self, change_set_id: str) -> None:
        """CreateChangeSet with IncludeNestedStacks: a change set of each nested stack the change set modifies or adds
        (and of theirs, down), linked to it (ParentChangeSetId, RootChangeSetId, the resource's ChangeSetId). An added
        one is a new stack in REVIEW_IN_PROGRESS with a CREATE change set, unless its TemplateURL or Parameters are
        known only once the change set runs (it is then created as it runs). A nested change set that cannot be made
        fails its parent's."""
        if self.store is None:
            return
        parent = self.store.change_sets.get(change_set_id)
        if parent is None or parent.status == "FAILED":
            return
        stack = self.store.stacks[parent.stack_id]
        added = {c.logical_id for c in parent.changes if c.action == "Add"}
        for change in parent.changes:
            if change.resource_type != NESTED_STACK or change.action not in ("Add", "Modify"):
                continue
            properties = change.after if change.after is not None else parent.blueprint.planned_properties(
                change.logical_id, stack.resources, added)
            try:
                if change.action == "Modify" and change.physical_id:
                    child = await self._child_change_set(parent, change.logical_id, change.physical_id, "UPDATE", properties)
                elif change.action == "Add" and _known(properties):
                    suffix = "".join(random.choices(string.ascii_uppercase + string.digits, k=12))
                    name = f"{stack.name}-{change.logical_id}-{suffix}"
                    child = await self._child_change_set(parent, change.logical_id, name, "CREATE", properties)
                    self.adopt(child.stack_id, stack.stack_id)
                else:
                    continue
            except ProvisioningFailed as error:
                parent.status, parent.execution_status = "FAILED", "UNAVAILABLE"
                parent.status_reason = f"Nested change set for {change.logical_id} was not successfully created: {error.reason}"
                return
            parent.nested_change_sets[change.logical_id] = child.change_set_id
            await self.include_nested(child.change_set_id)

    async def _child_change_set(self, parent: ChangeSet, logical_id: str, child: str, change_set_type: str,
                                properties: Dict[str, Any]) -> ChangeSet:
        assert self.store is not None
        url = properties.get("TemplateURL")
        if not isinstance(url, str) or url == KNOWN_AFTER_APPLY:
            raise ProvisioningFailed("its TemplateURL is not known before the change set runs")
        body = await self._template(url)
        given = properties.get("Parameters") if isinstance(properties.get("Parameters"), dict) else {}
        parameters = [p if p["ParameterValue"] != KNOWN_AFTER_APPLY else {"ParameterKey": p["ParameterKey"], "UsePreviousValue": True}
                      for p in _parameters({"Parameters": given})]
        suffix = "".join(random.choices(string.ascii_uppercase + string.digits, k=12))
        name = f"{parent.name}-{logical_id}-{suffix}"[-128:].lstrip("-0123456789") or f"Nested-{suffix}"
        answer = await self._call("CreateChangeSet", {"StackName": child, "ChangeSetName": name, "TemplateBody": body,
                                                      "ChangeSetType": change_set_type, "Capabilities": _given(parent.capabilities),
                                                      "Parameters": parameters})
        made = self.store.change_sets[answer["Id"]]
        made.include_nested_stacks = True
        made.parent_change_set_id = parent.change_set_id
        made.root_change_set_id = parent.root_change_set_id or parent.change_set_id
        return made

    def _capabilities(self, work: ResourceWork) -> List[str]:
        """The capabilities the parent stack's operation acknowledged, for its child's."""
        parent = self.store.find(work.stack.stack_id) if self.store is not None else None
        return _given(parent.capabilities if parent is not None else ())

    def _execute(self, change_set_id: str) -> None:
        assert self.store is not None
        try:
            self.store.execute_change_set(change_set_id, None, from_root=True)
        except StackError as error:
            raise ProvisioningFailed(error.message) from None

    def _nested_change_set(self, work: ResourceWork) -> Optional[str]:
        """The change set of this nested stack that the parent's executing change set includes, if it can run."""
        if self.store is None:
            return None
        parent = self.store.find(work.stack.stack_id)
        executing = self.store.change_sets.get(parent.change_set_id or "") if parent is not None else None
        if executing is None or executing.execution_status != "EXECUTE_IN_PROGRESS":
            return None
        nested = self.store.change_sets.get(executing.nested_change_sets.get(work.logical_id, ""))
        return nested.change_set_id if nested is not None and nested.execution_status == "AVAILABLE" else None

    async def delete(self, work: ResourceWork) -> None:
        if work.physical_id and not work.retain:
            await self._delete(work.physical_id)

    async def _delete(self, stack_id: str) -> None:
        await self._settled(stack_id, SETTLED)  # a child in an operation of its own (one carried on after a restart) ends it first
        await self._call("DeleteStack", {"StackName": stack_id})
        status, reason = await self._settled(stack_id, "DELETE")
        if status != "DELETE_COMPLETE":
            raise ProvisioningFailed(f"Embedded stack {stack_id} was not successfully deleted: {reason}")

    async def _provisioned(self, stack_id: str, work: ResourceWork) -> Provisioned:
        [stack] = (await self._call("DescribeStacks", {"StackName": stack_id}))["Stacks"]
        outputs = {f"Outputs.{o['OutputKey']}": o.get("OutputValue") for o in stack.get("Outputs") or ()}
        missing = sorted(name for name in work.attributes_wanted if name not in outputs)
        if missing:
            raise ProvisioningFailed(f"Template error: nested stack {work.logical_id} has no output {missing[0][len('Outputs.'):]}")
        return Provisioned(stack_id, stack_id, outputs)

    async def _settled(self, stack_id: str, operation: str) -> Tuple[str, str]:
        """Wait for the child's ``operation`` (CREATE, UPDATE, DELETE) to end: its status and reason."""
        delay = POLL_FIRST_S
        clock = self.stopping.clock(RealClock())
        while True:
            stacks: List[Dict[str, Any]] = (await self._call("DescribeStacks", {"StackName": stack_id}))["Stacks"]
            status = stacks[0]["StackStatus"] if stacks else "DELETE_COMPLETE"
            if status in ENDS.get(operation, ()) or operation == SETTLED and not status.endswith("_IN_PROGRESS"):
                reason = stacks[0].get("StackStatusReason") if stacks else ""
                if not reason and "ROLLBACK" in status:
                    reason = await self._failure_reason(stack_id)
                return status, str(reason or status) if stacks else ""
            try:
                await clock.sleep(delay)
            except CancelRequested as stopped:
                raise OperationStopped(str(stopped)) from None
            delay = min(delay * 2, POLL_MAX_S)

    async def _failure_reason(self, stack_id: str) -> Optional[str]:
        """Why the child's operation failed, when its final status has no reason (a rollback that completed): the reason
        it entered rollback with, without the "Rollback requested by user." there — what the service's parent event
        quotes ("Embedded stack <id> was not successfully created: The following resource(s) failed to create: [Bad].",
        in users' reports)."""
        events: List[Dict[str, Any]] = (await self._call("DescribeStackEvents", {"StackName": stack_id}))["StackEvents"]
        for event in events:  # the newest first
            if event.get("PhysicalResourceId") == stack_id and event["ResourceStatus"] in ROLLBACK_STARTS:
                reason = str(event.get("ResourceStatusReason") or "")
                return reason[:-len(ROLLBACK_REQUESTED)] if reason.endswith(ROLLBACK_REQUESTED) else reason or None
        return None

    async def _call(self, operation: str, params: Dict[str, Any]) -> Dict[str, Any]:
        if self.calls is None:
            raise ProvisioningFailed("nested stacks are not wired to the local stack operations")
        try:
            return await self.calls.call(operation, params)
        except ProvisioningFailed:
            raise
        except Exception as error:  # the child's refusal (a ValidationError) is the resource's failure
            raise ProvisioningFailed(str(getattr(error, "message", None) or error)) from None

    async def _template(self, url: str) -> str:
        try:
            return await asyncio.to_thread(read_location, url, self.endpoint_url, self.region, self.own_url)
        except UnreadableLocation as error:
            raise ProvisioningFailed(f"TemplateURL {error}") from None


def _parameters(properties: Dict[str, Any]) -> List[Dict[str, str]]:
    given = properties.get("Parameters") or {}
    return [{"ParameterKey": str(key), "ParameterValue": ",".join(map(str, value)) if isinstance(value, list) else str(value)}
            for key, value in given.items()]


def _notified(properties: Dict[str, Any]) -> Dict[str, List[str]]:
    """The child's NotificationARNs: the resource's property (none when it declares none, an update too), which the
    child's ``AWS::NotificationARNs`` gives."""
    declared = properties.get("NotificationARNs")
    return {"NotificationARNs": [str(arn) for arn in declared] if isinstance(declared, list) else []}


def _given(capabilities: Sequence[str]) -> List[str]:
    return [*(c for c in capabilities if c != AUTO_EXPAND), AUTO_EXPAND]


def _known(properties: Dict[str, Any]) -> bool:
    """Are a new nested stack's TemplateURL and Parameters known before the change set runs?"""
    given = properties.get("Parameters")
    values = list(given.values()) if isinstance(given, dict) else [given]
    return all(value != KNOWN_AFTER_APPLY for value in [properties.get("TemplateURL"), *values])
