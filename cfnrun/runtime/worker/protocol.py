"""What cfnrun and a worker say to each other: length-prefixed JSON frames, and one exit status.

Both sides encode with these functions (cfnrun imports this module; the worker loads it as
``cfnrun_worker.protocol``). A call's event and a reply's result are often JSON already (an
HTTP body, the handler's encoded return value): they are spliced into the frame as they are,
never decoded and encoded again.
"""
from __future__ import annotations

import json
import struct
from typing import Any, Callable, Dict, List, Optional, Union

FRAME_HEADER = struct.Struct(">I")
# Exit status of a worker whose handler closed or replaced the request/reply channel's fd:
# no reply can leave, so the parent explains the death by this status.
EXIT_CHANNEL_LOST = 86
_ENCODER = json.JSONEncoder(separators=(",", ":"))  # one instance: json.dumps(separators=...) builds one per call
# What JSON's encoder makes of a sample of every kind of value, to check the shortcut below against.
_SAMPLE = {"text": "é\n\u2028\"", "n": [0, -1, 2**70, 1.5, 1e300, float("inf"), None, True, False], "": {"1": []}, 2: 3.0}


def _one_shot_encoder() -> Callable[[Any], str]:
    """``_ENCODER.encode`` without the Python layers it runs per call (``encode``, ``iterencode``, their
    closures): the C encoder it builds, built here with the same arguments (fresh markers per call, so
    threads may share it). Checked once against ``_ENCODER`` itself; where it differs (or the interpreter
    has no C encoder, or builds it otherwise), ``_ENCODER.encode``."""
    make = getattr(json.encoder, "c_make_encoder", None)
    escape = getattr(json.encoder, "c_encode_basestring_ascii", None)
    if make is None or escape is None:
        return _ENCODER.encode
    default, key_separator, item_separator = _ENCODER.default, _ENCODER.key_separator, _ENCODER.item_separator

    def encode(value: Any) -> str:
        return "".join(make({}, default, escape, None, key_separator, item_separator, False, False, True)(value, 0))

    try:
        same = all(encode(sample) == _ENCODER.encode(sample) for sample in (_SAMPLE, "text", 1, None, [_SAMPLE]))
    except Exception:  # noqa: B902 - an interpreter whose C encoder takes other arguments
        same = False
    return encode if same else _ENCODER.encode


_encode = _one_shot_encoder()


_scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # the decoder's scanner (C where the interpreter has it), as json.loads runs it


def decode_frame(body: Union[bytes, bytearray]) -> Any:
    """A frame's JSON (UTF-8 bytes), as ``json.loads`` reads it: without its search for the text's encoding and its
    two whitespace matches, which a frame (one JSON object, from ``encode_frame`` or ``encode_call``) never needs.
    Anything else (leading or trailing text, bad JSON) goes to ``json.loads``, which reads or rejects it as ever."""
    text = body.decode("utf-8", "surrogatepass")  # json.loads decodes UTF-8 bytes so
    if text[:1] == "{":
        try:
            value, end = _scan(text, 0)
        except (ValueError, StopIteration):
            pass
        else:
            if end == len(text):
                return value
    return json.loads(text)


_CALL = b'{"id":%d,"request_id":%b,"deadline_ms":%d,"event":%b}'
_escape_ascii: Callable[[str], str] = json.encoder.encode_basestring_ascii  # what _ENCODER (ensure_ascii) makes of a str
_pack_size = FRAME_HEADER.pack


def _framed(body: bytes) -> bytes:
    return FRAME_HEADER.pack(len(body)) + body


def encode_json(value: Any) -> bytes:
    return _encode(value).encode("utf-8")


def encode_frame(message: Dict[str, Any]) -> bytes:
    return _framed(encode_json(message))


def encode_call(invocation_id: int, request_id: str, deadline_ms: int, event_json: bytes) -> bytes:
    """One call's frame, with the event spliced in as the JSON text it already is.

    Made by one bytes formatting: the request id as ``_ENCODER`` writes a string (ASCII, escaped; its C escaper
    called directly rather than through ``JSONEncoder.encode``), the numbers as ``%d`` writes an int, as JSON does."""
    body = _CALL % (invocation_id, _escape_ascii(request_id).encode("ascii"), deadline_ms, event_json)
    return _pack_size(len(body)) + body


def encode_reply(
    invocation_id: int, kind: str, body: bytes, faults: Optional[List[Dict[str, Any]]] = None, unread: Optional[int] = None,
    peak_kib: Optional[int] = None,
) -> bytes:
    """A call's reply frame, with the already encoded result or error spliced in (and the faults injected into it).

    ``unread``: the bytes of output the log pipe still held for the parent when the reply left (None: not known);
    the parent reads the pipe before taking the call's output unless that is 0. ``peak_kib``: the worker's peak
    resident set size so far (None: not known).
    """
    extra = f'"faults":{_ENCODER.encode(faults)},' if faults else ""
    if unread is not None:
        extra += f'"unread":{unread},'
    if peak_kib is not None:
        extra += f'"peak_kib":{peak_kib},'
    return _framed(f'{{"type":"{kind}","id":{invocation_id},{extra}"{kind}":'.encode("utf-8") + body + b"}")
