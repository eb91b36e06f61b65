"""A returned model in the service's normal form is no violation when the schema's propertyTransform says so."""
from __future__ import annotations

from typing import Any, Dict, List

from fakes import schema

from cfnrun.contract.checker import ContractChecker
from cfnrun.contract.violations import SUCCESS_MATCHES_REQUEST
from cfnrun.model.protocol import Action


def differences(transform: Dict[str, str], requested: Dict[str, Any], returned: Dict[str, Any]) -> List[str]:
    transformed = schema()
    transformed.document["propertyTransform"] = transform
    checker = ContractChecker(transformed, Action.CREATE, requested, None)
    found = checker.check_event(1, {"status": "SUCCESS", "resourceModel": {"Id": "t-1", **returned}})
    return [f"{v.pointer}: {v.message}" for v in found if v.rule is SUCCESS_MATCHES_REQUEST]


def test_a_value_the_transform_maps_to_is_no_difference() -> None:
    lower = {"/properties/Name": "$lowercase(Name)"}
    assert differences(lower, {"Name": "MyBucket"}, {"Name": "mybucket"}) == []
    assert differences({"/properties/Name": "Name & '.fifo'"}, {"Name": "q"}, {"Name": "q.fifo"}) == []


def test_a_value_the_transform_does_not_explain_is_still_one() -> None:
    [found] = differences({"/properties/Name": "$lowercase(Name)"}, {"Name": "MyBucket"}, {"Name": "other"})
    assert found.startswith("/resourceModel/Name: requested \"mybucket\", returned \"other\"")


def test_a_transform_that_does_not_evaluate_is_reported_with_its_pointer() -> None:
    found = differences({"/properties/Name": "$lowercase(Name"}, {"Name": "MyBucket"}, {"Name": "mybucket"})
    assert any(f.startswith("/resourceModel/Name: propertyTransform at /properties/Name ('$lowercase(Name') does not evaluate") for f in found)
    assert any("requested \"MyBucket\", returned \"mybucket\"" in f for f in found)  # compared as requested


def test_without_a_transform_a_difference_is_a_difference() -> None:
    assert differences({}, {"Name": "MyBucket"}, {"Name": "mybucket"}) != []


def test_cfn_tests_comparison_transforms_with_jsonata_as_the_service_does() -> None:
    from types import SimpleNamespace

    from cfnrun.app.cfn_offline import jsonata_transform_model

    client = SimpleNamespace(_schema={**schema().document, "propertyTransform": {"/properties/Name": "$uppercase(Name)"}})
    assert jsonata_transform_model(client, {"Name": "abc", "Id": "x"}) == {"Name": "ABC", "Id": "x"}  # jq could not run this
    assert jsonata_transform_model(SimpleNamespace(_schema=schema().document), {"Name": "abc"}) is None  # no transforms: none
