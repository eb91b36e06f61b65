"""A resource's READ against its template properties: the drift result the CloudFormation API reports."""
from __future__ import annotations

import json
from typing import Any, Dict, Optional

from cfnrun.model.schema import ResourceSchema
from cfnrun.stacks.drift import (
    DETECTION_COMPLETE,
    DETECTION_FAILED,
    DETECTION_IN_PROGRESS,
    DriftDetection,
    PropertyDifference,
    compare_resource,
    deleted_resource,
    unknown_resource,
)
from cfnrun.stacks.records import StackResource

STACK = "arn:aws:cloudformation:us-east-1:123456789012:stack/drift/1"


def schema(transform: Optional[Dict[str, str]] = None) -> ResourceSchema:
    document: Dict[str, Any] = {
        "typeName": "Test::Drift::Thing",
        "properties": {
            "Id": {"type": "string"},
            "Title": {"type": "string"},
            "Color": {"type": "string"},
            "Size": {"type": "integer"},
            "Enabled": {"type": "boolean"},
            "Secret": {"type": "string"},
            "Tags": {"type": "array", "insertionOrder": False, "items": {"type": "string"}},
            "Steps": {"type": "array", "items": {"type": "string"}},
        },
        "readOnlyProperties": ["/properties/Id"],
        "writeOnlyProperties": ["/properties/Secret"],
        "primaryIdentifier": ["/properties/Id"],
    }
    if transform:
        document["propertyTransform"] = transform
    return ResourceSchema(document)


def resource(**properties: Any) -> StackResource:
    return StackResource("Thing", "Test::Drift::Thing", "CREATE_COMPLETE", physical_id="t-1", model={"Id": "t-1"}, properties=properties)


def drift(template: Dict[str, Any], actual: Dict[str, Any], transform: Optional[Dict[str, str]] = None) -> Any:
    return compare_resource(schema(transform), STACK, resource(**template), {"Id": "t-1", **actual}, 100.0)


def test_a_read_that_carries_the_template_values_is_in_sync_with_template_text_typed_by_the_schema() -> None:
    # template values arrive as text ("3", "true"); the handler answers typed values
    found = drift({"Title": "a", "Size": "3", "Enabled": "true"}, {"Title": "a", "Size": 3, "Enabled": True, "Color": "extra"})
    assert found.status == "IN_SYNC" and found.differences == ()
    assert json.loads(found.expected_properties) == {"Title": "a", "Size": 3, "Enabled": True}
    assert json.loads(found.actual_properties) == {"Title": "a", "Size": 3, "Enabled": True}  # only what the template sets


def test_a_changed_value_is_modified_with_its_property_difference() -> None:
    found = drift({"Title": "a", "Size": "3"}, {"Title": "b", "Size": 3})
    assert found.status == "MODIFIED" and found.drifted
    assert found.differences == (PropertyDifference("/Title", "a", "b", "NOT_EQUAL"),)
    assert json.loads(found.actual_properties) == {"Title": "b", "Size": 3}


def test_a_property_the_read_no_longer_has_is_removed_and_array_items_are_added_or_removed() -> None:
    found = drift({"Title": "a", "Tags": ["x", "y"], "Steps": ["one"]}, {"Tags": ["y", "z"], "Steps": ["one", "two"]})
    assert set(found.differences) == {
        PropertyDifference("/Title", "a", "null", "REMOVE"),
        PropertyDifference("/Tags/0", "x", "null", "REMOVE"),
        PropertyDifference("/Tags/1", "null", "z", "ADD"),
        PropertyDifference("/Steps/1", "null", "two", "ADD"),
    }


def test_an_unordered_array_in_another_order_is_in_sync() -> None:
    assert drift({"Tags": ["x", "y"]}, {"Tags": ["y", "x"]}).status == "IN_SYNC"
    assert drift({"Steps": ["x", "y"]}, {"Steps": ["y", "x"]}).differences == (
        PropertyDifference("/Steps/0", "x", "y", "NOT_EQUAL"),
        PropertyDifference("/Steps/1", "y", "x", "NOT_EQUAL"),
    )


def test_property_transform_explains_a_normalized_value_as_the_service_does() -> None:
    upper = {"/properties/Color": "$uppercase(Color)"}
    assert drift({"Color": "red"}, {"Color": "RED"}, upper).status == "IN_SYNC"
    assert drift({"Color": "red"}, {"Color": "RED"}).differences == (PropertyDifference("/Color", "red", "RED", "NOT_EQUAL"),)
    changed = drift({"Color": "red"}, {"Color": "BLUE"}, upper)
    assert changed.differences == (PropertyDifference("/Color", "RED", "BLUE", "NOT_EQUAL"),)


def test_a_transform_that_does_not_evaluate_is_named_in_the_reason() -> None:
    found = drift({"Color": "red"}, {"Color": "RED"}, {"/properties/Color": "$uppercase(Color"})
    assert found.status == "MODIFIED"
    assert found.reason is not None and "propertyTransform at /properties/Color" in found.reason


def test_write_only_values_are_neither_compared_nor_shown() -> None:
    found = drift({"Title": "a", "Secret": "hunter2222"}, {"Title": "a"})  # READ never returns the writeOnly Secret
    assert found.status == "IN_SYNC"
    assert "hunter2222" not in found.expected_properties and json.loads(found.expected_properties)["Secret"] == "*** writeOnly ***"
    leaked = drift({"Title": "a", "Secret": "hunter2222"}, {"Title": "b", "Secret": "other-secret"})
    assert [d.path for d in leaked.differences] == ["/Title"]
    assert "other-secret" not in leaked.actual_properties


def test_read_only_properties_are_not_compared() -> None:
    assert drift({"Title": "a", "Id": "stale"}, {"Title": "a"}).status == "IN_SYNC"


def test_a_detection_is_drifted_when_one_resource_is_and_failed_when_one_could_not_be_read() -> None:
    detection = DriftDetection("d-1", STACK)
    assert (detection.status, detection.stack_status, detection.drifted_count) == (DETECTION_IN_PROGRESS, None, None)
    in_sync = drift({"Title": "a"}, {"Title": "a"})
    detection.finish([in_sync, deleted_resource(STACK, resource(Title="b"), 1.0)])
    assert (detection.status, detection.stack_status, detection.drifted_count) == (DETECTION_COMPLETE, "DRIFTED", 1)

    failing = DriftDetection("d-2", STACK)
    failing.finish([in_sync, unknown_resource(STACK, resource(), "Resource handler returned message: boom", 1.0)])
    assert (failing.status, failing.stack_status, failing.drifted_count) == (DETECTION_FAILED, "UNKNOWN", 0)
    assert failing.reason is not None and "[Thing]" in failing.reason and "boom" in failing.reason

    nothing = DriftDetection("d-3", STACK)
    nothing.finish([])
    assert (nothing.status, nothing.stack_status) == (DETECTION_COMPLETE, "NOT_CHECKED")
