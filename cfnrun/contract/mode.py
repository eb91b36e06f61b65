"""How strictly the handler contract is applied; light, so the command line can offer it."""
from __future__ import annotations

import enum


class ContractMode(str, enum.Enum):
    WARN = "warn"  # report violations; outcomes unchanged
    STRICT = "strict"  # a MUST violation fails the operation
    OFF = "off"
