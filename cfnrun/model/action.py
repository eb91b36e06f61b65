"""The five handler actions, on their own so the command line can name them without loading the wire models."""
from __future__ import annotations

from enum import Enum


class Action(str, Enum):
    CREATE = "CREATE"
    READ = "READ"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    LIST = "LIST"

    @property
    def is_mutating(self) -> bool:
        return self in (Action.CREATE, Action.UPDATE, Action.DELETE)

    @property
    def schema_handler(self) -> str:
        """The key of this action under the schema's ``handlers`` object."""
        return self.value.lower()
