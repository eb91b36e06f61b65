"""Random (version 4) UUIDs as text, for the ids made per handler call and per stack event.

The same sixteen bytes of ``os.urandom`` as ``str(uuid.uuid4())``, with the version and variant bits set the same
way, written out without building a ``uuid.UUID`` (most of uuid4's cost, several times per stack resource).
"""
from __future__ import annotations

import os

_VARIANT = "89ab"  # the RFC 4122 variant: the top two bits of the clock sequence are 10


def random_uuid() -> str:
    digits = os.urandom(16).hex()
    return f"{digits[:8]}-{digits[8:12]}-4{digits[13:16]}-{_VARIANT[int(digits[16], 16) & 3]}{digits[17:20]}-{digits[20:]}"
