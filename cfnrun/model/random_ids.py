"""Random (version 4) UUIDs as text, for the ids made per handler call, per request and per stack event.

The same ids as ``str(uuid.uuid4())`` (RFC 4122 version and variant bits, lowercase 8-4-4-4-12), without
its cost on the path of every call: the random bytes are read from the OS's source 256 ids at a time, and
the text of those 256 is made at once, by the bytes' own operations over the whole batch (their bits set,
their hex digits laid out with the dashes), so that an id is one slice of that text. A forked child starts
with bytes of its own, so parent and child never share an id.
"""
from __future__ import annotations

import os

_IDS_PER_READ = 256
_ID_LENGTH = 36  # 32 hex digits and 4 dashes
_DASHES = (8, 13, 18, 23)
_DIGIT_PLACES = [at for at in range(_ID_LENGTH) if at not in _DASHES]  # where each of an id's 32 hex digits goes, in order
_VERSION = bytes((value & 0x0F) | 0x40 for value in range(256))  # byte 6: version 4 in its top four bits
_VARIANT = bytes((value & 0x3F) | 0x80 for value in range(256))  # byte 8: the RFC 4122 variant, 10 in its top two bits
_ids = ""  # the text of the ids read, one after another
_at = 0  # where the next one starts


def _forget_bytes() -> None:
    global _ids, _at
    _ids, _at = "", 0


os.register_at_fork(after_in_child=_forget_bytes)


def _batch() -> str:
    """The text of ``_IDS_PER_READ`` new ids, one after another."""
    random = bytearray(os.urandom(16 * _IDS_PER_READ))
    random[6::16] = random[6::16].translate(_VERSION)
    random[8::16] = random[8::16].translate(_VARIANT)
    digits = random.hex().encode("ascii")
    text = bytearray(b"-" * (_ID_LENGTH * _IDS_PER_READ))
    for digit, at in enumerate(_DIGIT_PLACES):
        text[at::_ID_LENGTH] = digits[digit::32]
    return text.decode("ascii")


def random_uuid() -> str:
    """A random UUID (version 4, RFC 4122 variant), lowercase, in its 8-4-4-4-12 form."""
    global _ids, _at
    at = _at
    if at >= len(_ids):
        _ids, at = _batch(), 0
    _at = at + _ID_LENGTH
    return _ids[at : at + _ID_LENGTH]
