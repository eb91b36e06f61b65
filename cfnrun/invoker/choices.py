"""The invoker's choices the command line offers, without loading the invoker."""
from __future__ import annotations

import enum

DEFAULT_STALL_LIMIT = 20  # identical IN_PROGRESS answers with no delay before an operation is stopped


class Entrypoint(str, enum.Enum):
    TYPE = "type"
    TEST = "test"
