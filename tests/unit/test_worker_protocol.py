"""The frames' JSON: the worker's shortcut to the C encoder writes what ``json`` writes, and fails as it fails."""
from __future__ import annotations

import json
import re
from typing import Any

import pytest

from cfnrun.runtime.worker import protocol

VALUES = [
    {"status": "SUCCESS", "resourceModel": {"Id": "é", "Tags": [{"Key": "k", "Value": "\u2028"}]}},
    [1, -2, 2**80, 0.1, 1e-300, float("inf"), float("-inf"), None, True, False, ""],
    "a string \"quoted\" \\ and \n",
    3.25,
    {7: "int key", 2.5: "float key", None: "null key", False: "bool key"},
]


def test_the_shortcut_is_in_use_and_encodes_as_json_does() -> None:
    assert protocol._encode is not protocol._ENCODER.encode  # this interpreter has the C encoder: the shortcut is taken
    for value in VALUES:
        assert protocol.encode_json(value) == json.dumps(value, separators=(",", ":")).encode("utf-8")


def circular() -> Any:
    loop: Any = []
    loop.append(loop)
    return loop


@pytest.mark.parametrize("value", [{"tags": {"a"}}, {(1, 2): "tuple key"}, circular(), {"list": [object()]}], ids=["set", "tuple-key", "circular", "object"])
def test_a_value_json_cannot_carry_fails_as_with_json_and_the_next_encodes(value: Any) -> None:
    with pytest.raises((TypeError, ValueError)) as expected:
        json.dumps(value, separators=(",", ":"))
    with pytest.raises(type(expected.value), match=re.escape(str(expected.value))):
        protocol.encode_json(value)
    assert protocol.encode_json({"after": [1]}) == b'{"after":[1]}'  # nothing left behind by the failure


@pytest.mark.parametrize(
    "body",
    [b'{"id":1,"event":{"a":[1,2.5,null,"\xc3\xa9"]}}', b'{"a":1} ', b' {"a":1}', b'{"a":1}x', b'{"a":', b"[1]", b'{"a":NaN}', b""],
)
def test_a_frame_is_read_as_json_loads_reads_it(body: bytes) -> None:
    def read(decode: Any) -> Any:
        try:
            return decode(body)
        except ValueError as error:
            return (type(error), str(error))

    assert repr(read(protocol.decode_frame)) == repr(read(json.loads))
    assert repr(read(lambda raw: protocol.decode_frame(bytearray(raw)))) == repr(read(json.loads))


@pytest.mark.parametrize("request_id", ["00000000-0000-4000-8000-000000000000", 'quote " back \\ é \n \u2028 \x00', ""])
def test_a_call_frame_is_the_json_of_the_call_with_its_event_spliced_in(request_id: str) -> None:
    event = b'{"action":"LIST","n":[1,2.5,null]}'
    frame = protocol.encode_call(2**40, request_id, 2**41, event)
    (size,) = protocol.FRAME_HEADER.unpack_from(frame)
    body = frame[protocol.FRAME_HEADER.size :]
    assert size == len(body)
    call = {"id": 2**40, "request_id": request_id, "deadline_ms": 2**41, "event": json.loads(event)}
    assert body == json.dumps(call, separators=(",", ":")).encode("ascii")  # ASCII, escaped, as the encoder writes it
    assert protocol.decode_frame(body) == call
