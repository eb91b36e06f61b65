"""A stabilizing resource: create, update and delete take several IN_PROGRESS rounds.

Each mutating handler starts the change, then answers IN_PROGRESS with a
callbackContext and CallbackDelaySeconds until the (simulated) cluster is stable;
CloudFormation, or cfnrun, calls back with that context after the delay.
"""
import logging
import os
import uuid
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
TYPE_NAME = "Cfnrun::Sample::Cluster"
# How many callbacks a change needs before the cluster is stable.
STATUS_CHECKS = 2
# A cluster still in one of these was left by a create or delete that stopped before it ended: a CREATE of its name takes it over.
UNFINISHED = ("CREATING", "DELETING")

resource = Resource(TYPE_NAME, ResourceModel)
test_entrypoint = resource.test_entrypoint


def _delay() -> int:
    return int(os.environ.get("CALLBACK_DELAY_SECONDS", "2"))


def _model(record: Dict[str, Any]) -> ResourceModel:
    return ResourceModel._deserialize({k: v for k, v in record.items() if not k.startswith("_")})


def _in_progress(record: Dict[str, Any], stage: str, checks_left: int) -> ProgressEvent:
    return ProgressEvent(
        status=OperationStatus.IN_PROGRESS,
        resourceModel=_model(record),
        callbackContext={"stage": stage, "checksLeft": checks_left},
        callbackDelaySeconds=_delay(),
        message=f"{record['Status'].lower()}: {checks_left} status check(s) to go",
    )


def _existing(model: Optional[ResourceModel], clusters: store.Clusters) -> Dict[str, Any]:
    record = store.find(clusters, model.ClusterId, model.Name) if model else None
    if record is None:
        raise exceptions.NotFound(TYPE_NAME, (model.ClusterId or model.Name) if model else "(no identifier)")
    return record


def _stabilize(record: Dict[str, Any], callback_context: MutableMapping[str, Any]) -> Optional[ProgressEvent]:
    """One status check: IN_PROGRESS while checks remain, None once the cluster is stable."""
    checks_left = int(callback_context.get("checksLeft", 0)) - 1
    if checks_left > 0:
        LOG.info("%s still %s", record["ClusterId"], record["Status"])
        return _in_progress(record, callback_context["stage"], checks_left)
    return None


@resource.handler(Action.CREATE)
def create_handler(
    session: Optional[SessionProxy],
    request: ResourceHandlerRequest,
    callback_context: MutableMapping[str, Any],
) -> ProgressEvent:
    model = request.desiredResourceState
    with store.change() as clusters:
        if callback_context.get("stage") == "create":
            record = _existing(model, clusters)
            pending = _stabilize(record, callback_context)
            if pending:
                return pending
            record.update(Status="ACTIVE", Endpoint=f"{record['ClusterId']}.cluster.local:7000")
            LOG.info("%s is ACTIVE", record["ClusterId"])
            return ProgressEvent(status=OperationStatus.SUCCESS, resourceModel=_model(record))

        if model is None or not model.Name or not model.NodeCount:
            return ProgressEvent.failed(HandlerErrorCode.InvalidRequest, "Name and NodeCount are required")
        taken = store.find(clusters, None, model.Name)
        token = request.clientRequestToken
        if taken is not None and taken["Status"] == "ACTIVE" and token and taken.get("_clientRequestToken") == token:
            # the same request again (the contract: create is idempotent for one clientRequestToken): the cluster it made
            LOG.info("%s was made by this request (%s) already", taken["ClusterId"], token)
            return ProgressEvent(status=OperationStatus.SUCCESS, resourceModel=_model(taken))
        if taken is not None and taken["Status"] in UNFINISHED:
            # left by a create or delete that never finished (stopped mid-way): no SUCCESS ever handed it to anyone
            LOG.info("taking over %s, left %s", taken["ClusterId"], taken["Status"])
            del clusters[taken["ClusterId"]]
        elif taken is not None:
            return ProgressEvent.failed(
                HandlerErrorCode.AlreadyExists,
                f"a cluster named {model.Name} exists ({taken['ClusterId']}, {taken['Status']}): delete it first (requests/delete.json)",
            )
        record = {"ClusterId": f"cl-{uuid.uuid4().hex[:10]}", "Name": model.Name, "NodeCount": model.NodeCount, "Status": "CREATING", "_clientRequestToken": token}
        clusters[record["ClusterId"]] = record
    LOG.info("creating %s with %s node(s)", record["ClusterId"], model.NodeCount)
    return _in_progress(record, "create", STATUS_CHECKS)


@resource.handler(Action.UPDATE)
def update_handler(
    session: Optional[SessionProxy],
    request: ResourceHandlerRequest,
    callback_context: MutableMapping[str, Any],
) -> ProgressEvent:
    model = request.desiredResourceState
    with store.change() as clusters:
        record = _existing(model, clusters)
        if callback_context.get("stage") == "update":
            pending = _stabilize(record, callback_context)
            if pending:
                return pending
            record["Status"] = "ACTIVE"
            return ProgressEvent(status=OperationStatus.SUCCESS, resourceModel=_model(record))

        if model.Name and model.Name != record["Name"]:
            return ProgressEvent.failed(HandlerErrorCode.NotUpdatable, "Name is create-only")
        record.update(NodeCount=model.NodeCount, Status="UPDATING")
    LOG.info("resizing %s to %s node(s)", record["ClusterId"], model.NodeCount)
    return _in_progress(record, "update", STATUS_CHECKS)


@resource.handler(Action.DELETE)
def delete_handler(
    session: Optional[SessionProxy],
    request: ResourceHandlerRequest,
    callback_context: MutableMapping[str, Any],
) -> ProgressEvent:
    model = request.desiredResourceState
    with store.change() as clusters:
        record = _existing(model, clusters)
        if callback_context.get("stage") == "delete":
            pending = _stabilize(record, callback_context)
            if pending:
                return pending
            del clusters[record["ClusterId"]]
            LOG.info("%s deleted", record["ClusterId"])
            return ProgressEvent(status=OperationStatus.SUCCESS)
        record["Status"] = "DELETING"
    return _in_progress(record, "delete", STATUS_CHECKS)


@resource.handler(Action.READ)
def read_handler(
    session: Optional[SessionProxy],
    request: ResourceHandlerRequest,
    callback_context: MutableMapping[str, Any],
) -> ProgressEvent:
    return ProgressEvent(status=OperationStatus.SUCCESS, resourceModel=_model(_existing(request.desiredResourceState, store.current())))


@resource.handler(Action.LIST)
def list_handler(
    session: Optional[SessionProxy],
    request: ResourceHandlerRequest,
    callback_context: MutableMapping[str, Any],
) -> ProgressEvent:
    clusters = sorted(store.load().values(), key=lambda r: r["ClusterId"])
    return ProgressEvent(status=OperationStatus.SUCCESS, resourceModels=[_model(r) for r in clusters])
