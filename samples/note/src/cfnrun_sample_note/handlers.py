"""A synchronous CRUDL resource: every handler answers SUCCESS or FAILED in one call."""
import logging
import uuid
from datetime import datetime, timezone
from typing import Any, Dict, MutableMapping, Optional

from cloudformation_cli_python_lib import (
    Action,
    HandlerErrorCode,
    OperationStatus,
    ProgressEvent,
    Resource,
    SessionProxy,
    exceptions,
)

from . import store
from .models import ResourceHandlerRequest, ResourceModel

LOG = logging.getLogger(__name__)
TYPE_NAME = "Cfnrun::Sample::Note"

resource = Resource(TYPE_NAME, ResourceModel)
test_entrypoint = resource.test_entrypoint

WRITABLE = ("Title", "Content", "Folder", "Priority", "AccessPassword", "Tags")


def _public(record: Dict[str, Any]) -> ResourceModel:
    """The model CloudFormation may see: everything but the writeOnly AccessPassword.

    Tags is always a list: the support library reads an empty ``Tags: []`` in a
    request as None, so answering ``[]`` is how a requested empty list survives.
    """
    shown = {key: value for key, value in record.items() if key != "AccessPassword"}
    model = ResourceModel._deserialize(shown)
    model.Tags = model.Tags or []
    return model


def _writable(model: Optional[ResourceModel]) -> Dict[str, Any]:
    values = model._serialize() if model else {}
    return {key: values[key] for key in WRITABLE if values.get(key) is not None}


def _success(model: Optional[ResourceModel]) -> ProgressEvent:
    return ProgressEvent(status=OperationStatus.SUCCESS, resourceModel=model)


def _existing(model: Optional[ResourceModel], state: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The stored note the model names (looked up in ``state`` when the caller holds the store's lock)."""
    note_id = model.NoteId if model else None
    record = (store.load() if state is None else state)["notes"].get(note_id) if note_id else None
    if record is None:
        raise exceptions.NotFound(TYPE_NAME, model.NoteId if model else "(no NoteId)")
    return record


@resource.handler(Action.CREATE)
def create_handler(
    session: Optional[SessionProxy],
    request: ResourceHandlerRequest,
    callback_context: MutableMapping[str, Any],
) -> ProgressEvent:
    model = request.desiredResourceState
    if model is None or not model.Title:
        return ProgressEvent.failed(HandlerErrorCode.InvalidRequest, "Title is required")
    if model.NoteId or model.CreatedAt:
        return ProgressEvent.failed(HandlerErrorCode.InvalidRequest, "NoteId and CreatedAt are read-only")
    with store.change() as state:
        known = state["tokens"].get(request.clientRequestToken)
        if known and known in state["notes"]:
            LOG.info("create retried with token %s: returning %s", request.clientRequestToken, known)
            return _success(_public(state["notes"][known]))
        note_id = f"note-{uuid.uuid4().hex[:12]}"
        record = {
            "NoteId": note_id,
            "CreatedAt": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
            **_writable(model),
        }
        state["notes"][note_id] = record
        state["tokens"][request.clientRequestToken] = note_id
    LOG.info("created %s", note_id)
    return _success(_public(record))


@resource.handler(Action.READ)
def read_handler(
    session: Optional[SessionProxy],
    request: ResourceHandlerRequest,
    callback_context: MutableMapping[str, Any],
) -> ProgressEvent:
    return _success(_public(_existing(request.desiredResourceState)))


@resource.handler(Action.UPDATE)
def update_handler(
    session: Optional[SessionProxy],
    request: ResourceHandlerRequest,
    callback_context: MutableMapping[str, Any],
) -> ProgressEvent:
    model = request.desiredResourceState
    desired = _writable(model)
    with store.change() as state:  # checked and written under one lock: a concurrent DELETE is not undone
        record = _existing(model, state)
        if desired.get("Folder") != record.get("Folder"):
            return ProgressEvent.failed(HandlerErrorCode.NotUpdatable, "Folder is create-only")
        if not desired.get("Title"):
            return ProgressEvent.failed(HandlerErrorCode.InvalidRequest, "Title is required")
        updated = {"NoteId": record["NoteId"], "CreatedAt": record["CreatedAt"], **desired}
        state["notes"][record["NoteId"]] = updated
    LOG.info("updated %s", record["NoteId"])
    return _success(_public(updated))


@resource.handler(Action.DELETE)
def delete_handler(
    session: Optional[SessionProxy],
    request: ResourceHandlerRequest,
    callback_context: MutableMapping[str, Any],
) -> ProgressEvent:
    with store.change() as state:
        record = _existing(request.desiredResourceState, state)
        del state["notes"][record["NoteId"]]
    LOG.info("deleted %s", record["NoteId"])
    return ProgressEvent(status=OperationStatus.SUCCESS)


@resource.handler(Action.LIST)
def list_handler(
    session: Optional[SessionProxy],
    request: ResourceHandlerRequest,
    callback_context: MutableMapping[str, Any],
) -> ProgressEvent:
    notes = store.load()["notes"].values()
    return ProgressEvent(
        status=OperationStatus.SUCCESS,
        resourceModels=[_public(record) for record in sorted(notes, key=lambda r: r["NoteId"])],
    )
