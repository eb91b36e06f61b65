"""The JSON writer made once (serve's answers, its history's records) writes what the json module writes."""
from __future__ import annotations

import json
from json import encoder as json_encoder
from typing import Any

import pytest

from cfnrun.model.json_text import JsonWriter, read_json

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


TEXTS = [
    '{"action": "LIST", "n": [1, 2.5e3, -0.0, 1E400, null, true, {}], "s": "\\u00e9\\ud83d\\ude00 \\"q\\"", "k": 1, "k": 2}',
    '[1, "two", {"three": [3]}]',
    ' {"a": 1}',
    '{"a": 1}\n',
    '"a string alone"',
    "7",
    '{"a": 1} {"b": 2}',
    '{"a": 1}x',
    '{"a": 1,}',
    '{"n": 01}',
    "[1, 2",
    "{'a': 1}",
    "{",
    "",
    "\ufeff{}",
]


def _read(read: Any, text: str) -> Any:
    try:
        return ("value", read(text))
    except json.JSONDecodeError as error:
        return ("error", str(error))


@pytest.mark.parametrize("text", TEXTS)
def test_a_text_is_read_as_json_loads_reads_it_or_refused_in_its_words(text: str) -> None:
    assert repr(_read(read_json, text)) == repr(_read(json.loads, text))  # repr: -0.0 and inf told apart


def test_a_text_nested_too_deeply_raises_what_json_loads_raises() -> None:
    with pytest.raises(RecursionError):
        read_json("[" * 100_000)
