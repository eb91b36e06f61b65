"""Recording operations (``cfnrun invoke`` records its own with these: ``app/invoke.py``), and reading recorded operations back
as operation events."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from cfnrun.app.options import to_record
from cfnrun.app.settings.invoke import InvokeSettings
from cfnrun.events.encoding import decode
from cfnrun.events.operation import ContractChecked, InvocationCompleted, Observer, OperationCompleted, OperationEvent, OperationResult
from cfnrun.history.masking import Masker
from cfnrun.history.recorder import OperationRecorder
from cfnrun.history.store import HistoryStore, RecordedOperation
from cfnrun.history.writer import HistoryWriter
from cfnrun.model.endings import EndReason
from cfnrun.model.protocol import Action, OperationStatus
from cfnrun.model.schema import ResourceSchema

if TYPE_CHECKING:
    from cfnrun.invoker.payloads import OperationRequest
    from cfnrun.invoker.request_files import OperationInput

CLOUD_CONTROL_SOURCE = "cloudcontrol"
STACK_SOURCE = "stack"  # a resource operation of a local stack
FUZZ_SOURCE = "fuzz"  # a minimal case cfnrun fuzz found
IAC_GENERATOR_SOURCE = "iac-generator"  # a resource scan's LIST, a generated template's READ
SERVED_SOURCES = ("invoke", CLOUD_CONTROL_SOURCE, STACK_SOURCE, IAC_GENERATOR_SOURCE)  # the records that carry the request and the settings
SERVED_VIA = {CLOUD_CONTROL_SOURCE: "cfnrun serve's Cloud Control API", IAC_GENERATOR_SOURCE: "cfnrun serve's IaC generator"}


_settings_recorded: Tuple[Optional[InvokeSettings], Dict[str, Any]] = (None, {})  # the last settings recorded, and their record


def settings_record(settings: InvokeSettings) -> Dict[str, Any]:
    """``to_record(settings)``, worked out once for the settings object many operations share (a wide stack's resources
    share one: ``TypeOperations._ran_with``); a dict of the caller's own. The settings are frozen: the same object, the same
    record."""
    global _settings_recorded
    kept, record = _settings_recorded
    if kept is not settings:
        record = to_record(settings)
        _settings_recorded = (settings, record)
    return dict(record)


def operation_record(source: str, type_name: str, operation: "OperationInput", ran_with: InvokeSettings, masker: Masker) -> Dict[str, Any]:
    return {
        "source": source,
        "typeName": type_name,
        "request": {
            "desiredResourceState": masker.model(operation.desired),
            "previousResourceState": masker.model(operation.previous),
            "typeConfiguration": masker.configuration(operation.type_configuration),  # never kept: a replay is told
            "logicalResourceIdentifier": operation.logical_resource_id,
            "targetName": operation.target_name,  # a hook's target type
        },
        "settings": settings_record(ran_with),
        "maskedWriteOnly": masker.masked_pointers(operation.desired, operation.previous),
    }


def cloud_control_recorder(
    store: HistoryStore,
    schema: ResourceSchema,
    type_name: str,
    request: "OperationRequest",
    ran_with: InvokeSettings,
    source: str = CLOUD_CONTROL_SOURCE,
    writer: Optional[HistoryWriter] = None,
    masker: Optional[Masker] = None,
) -> OperationRecorder:
    """An observer recording one operation serve ran for a Cloud Control request or a stack, as ``cfnrun invoke``
    records its own: ``cfnrun history`` lists it (via ``source``, under its token), ``replay`` runs it again."""
    record = lambda masker: operation_record(source, type_name, request.operation, ran_with, masker)  # noqa: E731
    return operation_recorder(store, schema, request, record, writer, masker)


def request_masker(schema: ResourceSchema, request: "OperationRequest") -> Masker:
    """A masker that knows the request's writeOnly values, credentials and type configuration: the history's records and
    the live output of the operation (the console, ``--json``) hide them."""
    masker = Masker(schema)
    operation = request.operation
    masker.learn([operation.desired, operation.previous], [request.credentials.model_dump() if request.credentials else None])
    masker.learn_configuration(operation.type_configuration)
    return masker


def operation_recorder(
    store: HistoryStore,
    schema: ResourceSchema,
    request: "OperationRequest",
    record: Callable[[Masker], Dict[str, Any]],
    writer: Optional[HistoryWriter] = None,
    masker: Optional[Masker] = None,
) -> OperationRecorder:
    """A recorder whose masker (``request_masker``, unless given) knows the request's secrets before anything is written."""
    masker = masker if masker is not None else request_masker(schema, request)
    return OperationRecorder(store, masker, record(masker), request.client_request_token, writer)


def recorded_events(operation: RecordedOperation, records: List[Dict[str, Any]]) -> List[OperationEvent]:
    """The events of a recorded operation, ending with its result (built from the last answer for serve's calls)."""
    events = [decode(record) for record in records]
    if events and isinstance(events[-1], OperationCompleted):
        return events
    answers = [e.progress for e in events if isinstance(e, InvocationCompleted)]
    last = answers[-1] if answers else None
    result = OperationResult(
        action=Action(operation.action),
        status=OperationStatus(operation.status),
        reason=EndReason.HANDLER,
        message=(last.message if last is not None else None) or "",
        invocations=operation.invocations,
        elapsed_s=operation.duration_s,
        error_code=operation.error_code,
        resource_model=last.resourceModel if last is not None else None,
        resource_models=last.resourceModels if last is not None else None,
        violations=[v for e in events if isinstance(e, ContractChecked) for v in e.violations],
    )
    return events + [OperationCompleted(result)]


def show_operation(store: HistoryStore, operation_id: int, observers: List[Observer]) -> RecordedOperation:
    """Play a recorded operation's events to ``observers`` (the renderers ``cfnrun invoke`` uses)."""
    operation = store.get(operation_id)
    for event in recorded_events(operation, store.events(operation_id)):
        for observer in observers:
            observer(event)
    return operation
