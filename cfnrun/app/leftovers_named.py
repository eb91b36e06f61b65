"""What an interrupted ``cfnrun invoke`` or ``cfnrun stack test`` may have left, and the command that removes it.

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
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from cfnrun.events.operation import OperationResult
from cfnrun.model.endings import EndReason
from cfnrun.events.stack import StackEvent
from cfnrun.model.identifiers import IdentifierError, identifier_model, identifier_names
from cfnrun.model.local_state import state_folder
from cfnrun.model.project import Project
from cfnrun.model.protocol import Action
from cfnrun.stacks.records import Stack

LEFT_PREFIX = "left-"  # .cfnrun/left-<id>.json: a DELETE request for what an interrupted operation left

STACK_TYPE = "AWS::CloudFormation::Stack"
AWS_LEFT = "it is on the AWS endpoint serve used (with --moto, gone with it): delete it there"
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
    request = _written_request(project, model)
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


class MadeByStack:
    """Passes each stack event on and keeps the resources the stack made and has not deleted: what a stopped run leaves."""

    def __init__(self, observer: Callable[[Any], None]) -> None:
        self.observer = observer
        self.made: Dict[Tuple[str, str], str] = {}  # (LogicalResourceId, PhysicalResourceId) → its type

    def __call__(self, event: Any) -> None:
        self.observer(event)
        if not isinstance(event, StackEvent) or event.hook_type is not None or not event.physical_id:
            return
        key = (event.logical_id, event.physical_id)
        if event.resource_type == STACK_TYPE:
            return
        if event.status in ("CREATE_COMPLETE", "UPDATE_COMPLETE", "CREATE_FAILED", "UPDATE_FAILED"):
            self.made[key] = event.resource_type
        elif event.status in ("DELETE_COMPLETE", "DELETE_SKIPPED"):
            self.made.pop(key, None)

    def left_behind(self, providers: Sequence[Project], aws_stand_in: str) -> List[str]:
        """A line per resource left, each with the command that removes it (``aws_stand_in``: where AWS::* ones went)."""
        by_type = {project.type_name: project for project in providers}
        return [_left_line(logical_id, type_name, physical_id, by_type.get(type_name), aws_stand_in) for (logical_id, physical_id), type_name in self.made.items()]


def unfinished_stacks_left(stacks: Iterable[Stack], providers: Sequence[Project], aws_stand_in: str) -> List[str]:
    """What each stack still IN_PROGRESS when serve stopped (without --state: forgotten) leaves, each with the command that removes it."""
    by_type = {project.type_name: project for project in providers}
    lines = []
    for stack in stacks:
        if not stack.status.endswith("_IN_PROGRESS"):
            continue
        for resource in stack.resources.values():
            if resource.exists and resource.physical_id is not None:
                named = _left_line(
                    resource.logical_id, resource.type_name, resource.physical_id, by_type.get(resource.type_name), aws_stand_in, resource.model
                )
                lines.append(f"stack {stack.name} ({stack.status}): {named}")
    return lines


def unnamed_left_line(stack_name: str, logical_id: str, type_name: str, properties: Dict[str, Any], project: Optional[Project], why: str) -> str:
    """A resource the first CREATE call serve was killed during may have made, which no second call could name: how to find
    it, and a DELETE request (the properties it was created with, writeOnly values left out) to complete with its identifier."""
    named = f"stack {stack_name}: {logical_id} ({type_name}) may be left with no stack naming it ({why})"
    if project is None:
        return f"{named}: find it and delete it where it was made" if not type_name.startswith("AWS::") else f"{named}: {AWS_LEFT}"
    where = shlex.quote(_shown_path(project.root))
    request = _written_request(project, project.schema.without_write_only(dict(properties)) or {})
    return (
        f"{named}: find it with cfnrun invoke LIST --project {where}, then remove it with cfnrun invoke DELETE "
        f"{shlex.quote(_shown_path(request))} --project {where} (that request holds the properties it was created with; add its identifier)"
    )


def _left_line(
    logical_id: str, type_name: str, physical_id: str, project: Optional[Project], aws_stand_in: str, model: Optional[Dict[str, Any]] = None
) -> str:
    """``model``: the resource's model as its handler last answered it, when the stack kept it."""
    named = f"left: {logical_id} ({type_name}) {physical_id}"
    if project is not None:
        return f"{named}: remove it with {_delete_command(project, physical_id, model)}"
    if type_name.startswith("AWS::"):
        return f"{named}: {aws_stand_in}"
    return f"{named}: delete it where it was made"


def _delete_command(project: Project, physical_id: str, last_model: Optional[Dict[str, Any]] = None) -> str:
    """A DELETE request as the service would send it: the model the handler last answered (its writeOnly values left out,
    as they are never written to disk), with the identifier the physical id names."""
    try:
        model = identifier_model(project.schema, physical_id)
    except IdentifierError:
        model = {}
    if model and last_model:
        model = {**(project.schema.without_write_only(dict(last_model)) or {}), **model}
    if not model:
        return f"cfnrun invoke DELETE --project {shlex.quote(_shown_path(project.root))} (a request naming {physical_id})"
    request = _written_request(project, model)
    return f"cfnrun invoke DELETE {shlex.quote(_shown_path(request))} --project {shlex.quote(_shown_path(project.root))}"


def _written_request(project: Project, model: Dict[str, Any]) -> Path:
    request = state_folder(project.root) / f"{LEFT_PREFIX}{uuid.uuid4().hex[:8]}.json"
    request.write_text(json.dumps({"desiredResourceState": model, "previousResourceState": None}, indent=4) + "\n", encoding="utf-8")
    return request
