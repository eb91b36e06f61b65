"""The handler actions and a hook's invocation points, on their own so the command line can name them without loading the wire models."""
from __future__ import annotations

from enum import Enum
from typing import Optional


class Action(str, Enum):
    CREATE = "CREATE"
    READ = "READ"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    LIST = "LIST"
    # a hook's invocation points (HookInvocationPoint in the support library)
    CREATE_PRE_PROVISION = "CREATE_PRE_PROVISION"
    UPDATE_PRE_PROVISION = "UPDATE_PRE_PROVISION"
    DELETE_PRE_PROVISION = "DELETE_PRE_PROVISION"

    @property
    def is_hook(self) -> bool:
        return self.value.endswith("_PRE_PROVISION")

    @property
    def is_mutating(self) -> bool:
        """May answer IN_PROGRESS, and has the 60 s response budget."""
        return self not in (Action.READ, Action.LIST)

    @property
    def schema_handler(self) -> str:
        """The key of this action under the schema's ``handlers`` object (``preCreate`` for a hook point)."""
        if self.is_hook:
            return "pre" + self.value.split("_", 1)[0].capitalize()
        return self.value.lower()


RESOURCE_ACTIONS = (Action.CREATE, Action.READ, Action.UPDATE, Action.DELETE, Action.LIST)
HOOK_POINTS = (Action.CREATE_PRE_PROVISION, Action.UPDATE_PRE_PROVISION, Action.DELETE_PRE_PROVISION)


def action_from_argument(text: str) -> Action:
    """``CREATE``…``LIST``, or a hook point: ``CREATE_PRE_PROVISION``… or its handler key ``preCreate``…"""
    aliases = {point.schema_handler.lower(): point for point in HOOK_POINTS}
    action = Action.__members__.get(text.strip().upper()) or aliases.get(text.strip().lower())
    if action is None:
        raise ValueError(
            f"'{text}' is not an action: use CREATE, READ, UPDATE, DELETE or LIST for a resource type, "
            f"{_points()} for a hook"
        )
    return action


def _points() -> str:
    return ", ".join(f"{p.value} ({p.schema_handler})" for p in HOOK_POINTS)


def action_mismatch(action: Action, hook: bool) -> Optional[str]:
    """Why ``action`` cannot run in this kind of project, or None when it can."""
    if hook and not action.is_hook:
        return f"{action.value} is a resource action, but this is a hook project: use one of {_points()}"
    if not hook and action.is_hook:
        return f"{action.value} is a hook invocation point, but this is a resource type project: use CREATE, READ, UPDATE, DELETE or LIST"
    return None
