"""A JSON value's copy is equal to it and shares nothing that can change; other values are deep-copied as before."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Dict

from cfnrun.model.json_copy import json_copy


def test_a_json_value_is_copied_whole_and_nothing_mutable_is_shared() -> None:
    model: Dict[str, Any] = {"Name": "a", "Count": 2, "Ratio": 0.5, "On": True, "Gone": None, "Tags": [{"Key": "k", "Value": "v"}], "Nested": {"List": [[1], []]}}
    copied = json_copy(model)
    assert copied == model
    copied["Tags"][0]["Value"] = "changed"
    copied["Nested"]["List"][0].append(2)
    copied["Extra"] = 1
    assert model["Tags"][0]["Value"] == "v" and model["Nested"]["List"] == [[1], []] and "Extra" not in model


def test_values_json_has_no_word_for_are_deep_copied_as_copy_does() -> None:
    ordered = OrderedDict(a=[1])
    value = {"set": {1, 2}, "ordered": ordered, "tuple": ([1],)}
    copied = json_copy(value)
    assert copied == value
    assert type(copied["ordered"]) is OrderedDict and copied["ordered"] is not ordered and copied["ordered"]["a"] is not ordered["a"]
    assert copied["set"] is not value["set"] and copied["tuple"][0] is not value["tuple"][0]
