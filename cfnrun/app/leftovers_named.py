"""What an interrupted ``cfnrun invoke`` may have left, and the command that removes it.

A CREATE (or UPDATE, or DELETE) stopped while IN_PROGRESS may leave a half-made resource behind:
the handler started it and nobody called back. The last model the handler answered names it (its
primary identifier, else what the request asked for); a DELETE request for it is written to the
project's ``.cfnrun/`` so the removing command is one line to copy.
"""
from __future__ import annotations

import json
import shlex
import uuid
from pathlib import Path
from typing import Any, Dict, List, Optional

from cfnrun.events.operation import OperationResult
from cfnrun.model.endings import EndReason
from cfnrun.model.identifiers import identifier_names
from cfnrun.model.local_state import state_folder
from cfnrun.model.project import Project
from cfnrun.model.protocol import Action

LEFT_PREFIX = "left-"  # .cfnrun/left-<id>.json: a DELETE request for what an interrupted operation left

_MUTATING = (Action.CREATE, Action.UPDATE, Action.DELETE)


def _naming_model(project: Project, result: OperationResult, asked: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The primary identifier's values from the last answer; else the model the request asked for; None if neither."""
    model = result.resource_model or {}
    names = identifier_names(project.schema)
    identified = {name: model[name] for name in names if model.get(name) is not None}
    if names and len(identified) == len(names):
        return identified
    chosen = asked or model  # never a writeOnly value on disk
    return project.schema.without_write_only(dict(chosen)) if chosen else None


def left_behind(
    project: Project, result: OperationResult, asked: Optional[Dict[str, Any]], shown_project: str
) -> List[str]:
    """Lines naming what an interrupted operation left and the command that removes it; [] if it was not interrupted mid-way."""
    if result.reason is not EndReason.INTERRUPTED or result.action not in _MUTATING or project.is_hook:
        return []
    model = _naming_model(project, result, asked)
    if model is None:
        return [f"{project.schema.type_name}: the interrupted {result.action.value} may have left a resource; its model is not known"]
    request = state_folder(project.root) / f"{LEFT_PREFIX}{uuid.uuid4().hex[:8]}.json"
    request.write_text(json.dumps({"desiredResourceState": model, "previousResourceState": None}, indent=4) + "\n", encoding="utf-8")
    verb = "finish removing" if result.action is Action.DELETE else "remove"
    where = _shown_path(request)
    return [
        f"left: {project.schema.type_name} {json.dumps(model, sort_keys=True)} (its {result.action.value} stopped IN_PROGRESS)",
        f"to {verb} it: cfnrun invoke DELETE {shlex.quote(where)} --project {shlex.quote(shown_project)}",
    ]


def _shown_path(path: Path) -> str:
    """The path as the user would type it from here: relative to the current folder when it is under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
