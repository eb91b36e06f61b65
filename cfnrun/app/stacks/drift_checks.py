"""Drift detection on the local stacks: each user resource's READ, run by the one invoker, against its template.

DetectStackDrift starts a detection and answers its id at once, as the service does; the READs
run in the background (all of a stack's at once) and DescribeStackDriftDetectionStatus shows
DETECTION_IN_PROGRESS until each has answered. Every READ is an operation of the served type
like any other: on its warm workers, with its budgets, contract checks and a history record.
Only the served types' resources are checked: an AWS::* resource lives on the AWS endpoint,
which has no READ handler cfnrun runs, and a custom resource has no READ at all, so both are
NOT_CHECKED and, as the service leaves out what it cannot check, absent from
DescribeStackResourceDrifts. The last result of each resource is kept for DescribeStacks',
ListStackResources' and DescribeStackResource's DriftInformation.
"""
from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

from cfnrun.stacks.template.declarations import is_custom_resource
from cfnrun.app.stacks.user_types import UserTypes
from cfnrun.app.type_operations import TypeOperations
from cfnrun.stacks.drift import (
    NOT_CHECKED,
    DriftDetection,
    ResourceDrift,
    compare_resource,
    deleted_resource,
    not_checked_resource,
    stack_drift_status,
    unknown_resource,
)
from cfnrun.model.schema import pointer_to_path
from cfnrun.stacks.drift_aware import ActualState, actual_state
from cfnrun.stacks.background import BackgroundTasks
from cfnrun.stacks.provisioning import ProvisioningFailed, ResourceWork, StackContext
from cfnrun.stacks.records import Stack, StackResource
from cfnrun.stacks.store import StackError, StackStore

CUSTOM_NOT_CHECKED = "A custom resource has no READ handler, so its drift cannot be detected (the service does not check it either)"
AWS_NOT_CHECKED = (
    "cfnrun detects drift on the served types' resources only: {type_name} is provisioned on the AWS endpoint, "
    "where cfnrun has no READ handler to run"
)

GONE_NOT_CHECKED = "{type_name} is not served now, so there is no READ handler to run"


def _not_checked_reason(type_name: str) -> str:
    if is_custom_resource(type_name):
        return CUSTOM_NOT_CHECKED
    return (AWS_NOT_CHECKED if type_name.startswith("AWS::") else GONE_NOT_CHECKED).format(type_name=type_name)


class DriftChecks:
    """The drift detections of one serve's stacks, and each resource's last result."""

    def __init__(self, store: StackStore, operations: TypeOperations, user_types: UserTypes) -> None:
        self.store = store
        self.operations = operations
        self.user_types = user_types
        self.detections: Dict[str, DriftDetection] = {}  # by StackDriftDetectionId
        self.latest: Dict[str, Dict[str, ResourceDrift]] = {}  # stack id → logical id → the last checked result
        self._tasks = BackgroundTasks()

    # -- detecting -------------------------------------------------------------------------

    def detect_stack(self, name_or_id: str, logical_ids: Sequence[str] = ()) -> DriftDetection:
        """DetectStackDrift: the detection, its READs started in the background."""
        stack = self._checkable(name_or_id)
        unknown = [logical_id for logical_id in logical_ids if logical_id not in stack.resources]
        if unknown:
            raise StackError(f"The following resource(s) do not exist in stack {stack.name}: [{', '.join(unknown)}]")
        wanted = [stack.resources[i] for i in logical_ids] if logical_ids else list(stack.resources.values())
        detection = DriftDetection(str(uuid.uuid4()), stack.stack_id)
        self.detections[detection.detection_id] = detection
        self._tasks.start(self._run(detection, stack, [r for r in wanted if r.exists]))
        return detection

    async def _run(self, detection: DriftDetection, stack: Stack, resources: List[StackResource]) -> None:
        try:
            results = await asyncio.gather(*(self._drift(stack, r) for r in resources))
        except Exception as error:  # noqa: B902 - a detection never stays IN_PROGRESS because cfnrun failed
            detection.fail(f"cfnrun failed detecting drift: {type(error).__name__}: {error}")
            return
        checked = [r for r in results if r.status != NOT_CHECKED]
        self._remember(checked)
        detection.finish(checked)

    async def detect_resource(self, name_or_id: str, logical_id: str) -> ResourceDrift:
        """DetectStackResourceDrift: one resource, checked before the answer."""
        stack = self._checkable(name_or_id)
        resource = stack.resources.get(logical_id)
        if resource is None or not resource.exists:
            raise StackError(f"Resource {logical_id} does not exist for stack {stack.name}")
        drift = await self._drift(stack, resource)
        if drift.status != NOT_CHECKED:
            self._remember([drift])
        return drift

    def _checkable(self, name_or_id: str) -> Stack:
        stack = self.store.get(name_or_id)
        if not stack.settled or stack.status == "DELETE_COMPLETE":
            raise StackError(f"Stack [{stack.name}] is in {stack.status} state: drift is detected on a stack no operation is changing")
        return stack

    async def actual_states(self, stack: Stack) -> Dict[str, ActualState]:
        """A drift-aware change set's view of each existing resource (``cfnrun.stacks.drift_aware``): their READs, all at
        once, each kept as the resource's last drift result too."""
        resources = [r for r in stack.resources.values() if r.exists]
        found = await asyncio.gather(*(self._read(stack, r) for r in resources))
        self._remember([drift for drift, _ in found if drift.status != NOT_CHECKED])
        return {r.logical_id: actual_state(drift, actual, self._write_only(r.type_name)) for r, (drift, actual) in zip(resources, found)}

    def _write_only(self, type_name: str) -> FrozenSet[str]:
        """The type's writeOnly properties' top-level names."""
        schema = self.operations.schema(type_name)
        paths = [pointer_to_path(pointer) for pointer in schema.write_only_properties] if schema is not None else []
        return frozenset(str(path[0]) for path in paths if path)

    def forget(self, stack: Stack, logical_ids: Sequence[str]) -> None:
        """Drop the last drift results of these resources (a drift-aware change set executed resets them)."""
        kept = self.latest.get(stack.stack_id, {})
        for logical_id in logical_ids:
            kept.pop(logical_id, None)

    async def _drift(self, stack: Stack, resource: StackResource) -> ResourceDrift:
        return (await self._read(stack, resource))[0]

    async def _read(self, stack: Stack, resource: StackResource) -> Tuple[ResourceDrift, Optional[Dict[str, Any]]]:
        """The resource's drift, and its model as READ answered it (None when it found none, failed or was not run)."""
        schema = self.operations.schema(resource.type_name)
        if schema is None:
            reason = _not_checked_reason(resource.type_name)
            return not_checked_resource(stack.stack_id, resource, reason, time.time()), None
        work = ResourceWork(
            StackContext(stack.stack_id, stack.name, self.store.engine.region, self.store.engine.account_id, dict(stack.tags)),
            resource.logical_id,
            resource.type_name,
            resource.properties or {},
            physical_id=resource.physical_id,
            model=resource.model,
        )
        try:
            actual = await self.user_types.read(work)
        except ProvisioningFailed as failed:
            return unknown_resource(stack.stack_id, resource, failed.reason, time.time()), None
        if actual is None:
            return deleted_resource(stack.stack_id, resource, time.time()), None
        return compare_resource(schema, stack.stack_id, resource, actual, time.time()), actual

    def _remember(self, drifts: List[ResourceDrift]) -> None:
        for drift in drifts:
            self.latest.setdefault(drift.stack_id, {})[drift.logical_id] = drift

    # -- what was found --------------------------------------------------------------------

    def detection(self, detection_id: str) -> DriftDetection:
        found = self.detections.get(detection_id)
        if found is None:
            raise StackError(f"Drift detection [{detection_id}] does not exist")
        return found

    def resource_drifts(self, name_or_id: str) -> List[ResourceDrift]:
        """DescribeStackResourceDrifts: the last result of each resource of the stack that was checked."""
        stack = self.store.get(name_or_id)
        return list(self._latest(stack).values())

    def _latest(self, stack: Stack) -> Dict[str, ResourceDrift]:
        kept = self.latest.get(stack.stack_id, {})
        return {logical_id: drift for logical_id, drift in kept.items() if logical_id in stack.resources}

    def stack_information(self, stack: Stack) -> Tuple[str, Optional[float]]:
        """StackDriftStatus and LastCheckTimestamp: NOT_CHECKED until a resource was checked."""
        drifts = list(self._latest(stack).values())
        return stack_drift_status(drifts), max((d.timestamp for d in drifts), default=None)

    def resource_information(self, stack: Stack, logical_id: str) -> Tuple[str, Optional[float]]:
        """StackResourceDriftStatus and LastCheckTimestamp of one resource."""
        drift = self._latest(stack).get(logical_id)
        return (drift.status, drift.timestamp) if drift else (NOT_CHECKED, None)

    async def close(self, timeout_s: float) -> None:
        """On stop: detections in flight get ``timeout_s`` to finish, then they are cancelled."""
        await self._tasks.close(timeout_s)
