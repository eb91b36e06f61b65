"""Stack drift: a resource as its READ handler sees it now, against its template properties as last applied.

The service compares only the properties the template sets, and so does this: the comparison is
the contract checker's (``cfnrun.contract.compare``: writeOnly properties left out, arrays
without insertion order compared as multisets, the schema's ``propertyTransform`` applied with
JSONata), so a READ the contract accepts after a CREATE is in sync here too. readOnly properties
are never compared (a template cannot set them). Template values were resolved as text; they are
typed by the schema before the comparison, as they were before the handler got them.

Results are worded as the CloudFormation API words them (StackResourceDrift, PropertyDifference,
DescribeStackDriftDetectionStatus); writeOnly values never appear in them.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from cfnrun.contract.compare import Difference, compared
from cfnrun.model.schema import ResourceSchema, pointer_to_path
from cfnrun.model.schema_values import typed_properties
from cfnrun.stacks.records import StackResource

# StackResourceDriftStatus
IN_SYNC, MODIFIED, DELETED, NOT_CHECKED, UNKNOWN = "IN_SYNC", "MODIFIED", "DELETED", "NOT_CHECKED", "UNKNOWN"
DRIFTED_STATUSES = frozenset({MODIFIED, DELETED})
# StackDriftStatus (IN_SYNC, NOT_CHECKED and UNKNOWN are shared with the resource statuses)
DRIFTED = "DRIFTED"
# StackDriftDetectionStatus
DETECTION_IN_PROGRESS, DETECTION_COMPLETE, DETECTION_FAILED = "DETECTION_IN_PROGRESS", "DETECTION_COMPLETE", "DETECTION_FAILED"


@dataclass(frozen=True)
class PropertyDifference:
    """One PropertyDifference: values as the API shows them (text; JSON for anything but a string)."""

    path: str  # PropertyPath, a JSON pointer into the properties: /Title, /Tags/1
    expected: str
    actual: str
    kind: str  # DifferenceType: ADD | REMOVE | NOT_EQUAL


@dataclass(frozen=True)
class ResourceDrift:
    """One StackResourceDrift."""

    stack_id: str
    logical_id: str
    physical_id: Optional[str]
    resource_type: str
    status: str  # StackResourceDriftStatus
    timestamp: float
    expected_properties: Optional[str] = None  # JSON text, writeOnly values masked
    actual_properties: Optional[str] = None
    differences: Tuple[PropertyDifference, ...] = ()
    reason: Optional[str] = None  # DriftStatusReason

    @property
    def drifted(self) -> bool:
        return self.status in DRIFTED_STATUSES


@dataclass
class DriftDetection:
    """One DetectStackDrift run: in progress until each resource it checks has a result."""

    detection_id: str
    stack_id: str
    started_at: float = field(default_factory=time.time)
    status: str = DETECTION_IN_PROGRESS
    reason: Optional[str] = None
    drifts: List[ResourceDrift] = field(default_factory=list)

    @property
    def drifted_count(self) -> Optional[int]:
        """DriftedStackResourceCount: None until the detection is over."""
        return None if self.status == DETECTION_IN_PROGRESS else sum(d.drifted for d in self.drifts)

    @property
    def stack_status(self) -> Optional[str]:
        """StackDriftStatus once the detection is over."""
        return None if self.status == DETECTION_IN_PROGRESS else stack_drift_status(self.drifts)

    def finish(self, drifts: List[ResourceDrift]) -> None:
        self.drifts = drifts
        failed = [d for d in drifts if d.status == UNKNOWN]
        if failed:
            self.status = DETECTION_FAILED
            self.reason = "; ".join(f"Failed to detect drift on resource [{d.logical_id}]: {d.reason}" for d in failed)
        else:
            self.status = DETECTION_COMPLETE

    def fail(self, reason: str) -> None:
        self.status, self.reason = DETECTION_FAILED, reason


def stack_drift_status(drifts: List[ResourceDrift]) -> str:
    """A stack has drifted when one resource has; UNKNOWN when one could not be checked; NOT_CHECKED with none checked."""
    if any(d.drifted for d in drifts):
        return DRIFTED
    if any(d.status == UNKNOWN for d in drifts):
        return UNKNOWN
    return IN_SYNC if drifts else NOT_CHECKED


def expected_properties(schema: ResourceSchema, resource: StackResource) -> Dict[str, Any]:
    """The template properties as last applied, typed like the schema, without readOnly properties."""
    expected = typed_properties(schema, resource.properties or {})
    return {key: value for key, value in expected.items() if not _read_only(schema, key)}


def _read_only(schema: ResourceSchema, key: str) -> bool:
    return any(pointer_to_path(pointer) == [key] for pointer in schema.read_only_properties)


def compare_resource(schema: ResourceSchema, stack_id: str, resource: StackResource, actual: Dict[str, Any], at: float) -> ResourceDrift:
    """The drift of a resource whose READ answered ``actual``: IN_SYNC or MODIFIED with its PropertyDifferences."""
    expected = expected_properties(schema, resource)
    found, problems = compared(expected, actual, schema)
    differences = tuple(_difference(leaf) for difference in found for leaf in difference.leaves())
    shown_actual = {key: actual[key] for key in expected if key in actual}
    return ResourceDrift(
        stack_id=stack_id,
        logical_id=resource.logical_id,
        physical_id=resource.physical_id,
        resource_type=resource.type_name,
        status=MODIFIED if differences else IN_SYNC,
        timestamp=at,
        expected_properties=_json(schema.mask_write_only(expected)),
        actual_properties=_json(schema.mask_write_only(shown_actual)),
        differences=differences,
        reason="; ".join(f"{pointer}: {message}" for pointer, message in problems) or None,
    )


def deleted_resource(stack_id: str, resource: StackResource, at: float) -> ResourceDrift:
    """The drift of a resource its READ handler no longer finds (NotFound)."""
    return ResourceDrift(stack_id, resource.logical_id, resource.physical_id, resource.type_name, DELETED, at)


def unknown_resource(stack_id: str, resource: StackResource, reason: str, at: float) -> ResourceDrift:
    """A resource whose READ failed otherwise: its drift is not known."""
    return ResourceDrift(stack_id, resource.logical_id, resource.physical_id, resource.type_name, UNKNOWN, at, reason=reason)


def not_checked_resource(stack_id: str, resource: StackResource, reason: str, at: float) -> ResourceDrift:
    """A resource drift detection does not cover (AWS::* and custom resources on serve)."""
    return ResourceDrift(stack_id, resource.logical_id, resource.physical_id, resource.type_name, NOT_CHECKED, at, reason=reason)


def _difference(difference: Difference) -> PropertyDifference:
    return PropertyDifference(difference.pointer, _value(difference.expected), _value(difference.actual), difference.kind)


def _value(value: Any) -> str:
    """A PropertyValue: a string as it is, anything else (an absent value too: ``null``) as JSON."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _json(model: Optional[Dict[str, Any]]) -> str:
    return json.dumps(model or {}, sort_keys=True)
