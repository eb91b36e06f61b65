"""Random (version 4) UUIDs as text, for the ids made per handler call, per request and per stack event.

The same ids as ``str(uuid.uuid4())`` (RFC 4122 version and variant bits, lowercase 8-4-4-4-12), without
its cost on the path of every call: the random bytes are read from the OS's source 256 ids at a time, and
the text is made without a ``uuid.UUID`` object. A forked child starts with bytes of its own, so parent and
child never share an id.
"""
from __future__ import annotations

import os

_IDS_PER_READ = 256
_random = b""
_at = 0


def _forget_bytes() -> None:
    global _random, _at
    _random, _at = b"", 0


os.register_at_fork(after_in_child=_forget_bytes)


def random_uuid() -> str:
    """A random UUID (version 4, RFC 4122 variant), lowercase, in its 8-4-4-4-12 form."""
    global _random, _at
    if _at >= len(_random):
        _random, _at = os.urandom(16 * _IDS_PER_READ), 0
    digits = _random[_at : _at + 16].hex()
    _at += 16
    variant = "89ab"[int(digits[16], 16) & 3]  # the top two bits of the clock sequence are 10
    return f"{digits[:8]}-{digits[8:12]}-4{digits[13:16]}-{variant}{digits[17:20]}-{digits[20:]}"
