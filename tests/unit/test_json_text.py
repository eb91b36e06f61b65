"""The JSON writer made once (serve's answers, its history's records) writes what the json module writes."""
from __future__ import annotations

import json
from json import encoder as json_encoder
from typing import Any

import pytest

from cfnrun.model.json_text import JsonWriter

VALUES = [
    {"status": "SUCCESS", "resourceModel": {"b": [1, 2.5, -0.0, None, True], "a": "é\u2028\x1b\"q\""}, "nextToken": None},
    [float("inf"), float("nan"), 1e-7, 10**30],
    "a string alone",
    {"z": {}, "a": []},
]


@pytest.mark.parametrize("value", VALUES)
def test_an_answer_is_written_as_json_dumps_writes_it(value: Any) -> None:
    assert JsonWriter().text(value) == json.dumps(value)


@pytest.mark.parametrize("value", VALUES)
def test_without_the_c_encoder_the_json_module_writes_it(value: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json_encoder, "c_make_encoder", None)
    writer = JsonWriter(sort_keys=True, default=str)
    assert writer._made is None
    assert writer.text(value) == json.dumps(value, sort_keys=True, default=str)


def test_what_json_cannot_say_is_refused_as_json_dumps_refuses_it() -> None:
    with pytest.raises(TypeError):
        JsonWriter().text({"when": object()})
    with pytest.raises(TypeError):
        json.dumps({"when": object()})
