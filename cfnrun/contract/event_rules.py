"""Rules over one ProgressEvent of an operation: pure functions, (context) → violations."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Tuple

from cfnrun.contract import violations as rules
from cfnrun.contract.compare import mismatches
from cfnrun.contract.shape import ShapeValidator
from cfnrun.contract.violations import Violation
from cfnrun.model.protocol import Action, HandlerErrorCode, OperationStatus
from cfnrun.model.schema import ResourceSchema

STATUSES = tuple(status.value for status in OperationStatus)  # what c.status, the raw answer, may be
ERROR_CODES = {code.value for code in HandlerErrorCode}


@dataclass
class EventContext:
    action: Action
    schema: ResourceSchema
    shape: ShapeValidator
    requested: Dict[str, Any]  # the desired state the operation started with
    event: Dict[str, Any]  # the raw ProgressEvent, as the handler returned it
    invocation: int
    first: bool  # the operation's first event
    # read off the event once, for every rule (each asks several times): its status as the handler wrote it (any value),
    # and its resourceModel when that is an object
    status: Any = field(init=False)
    model: Optional[Dict[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        self.status = self.event.get("status")
        model = self.event.get("resourceModel")
        self.model = model if isinstance(model, dict) else None

    def violation(self, rule: rules.Rule, message: str, pointer: Optional[str] = None) -> Violation:
        return Violation(rule, message, pointer, self.invocation)


Check = Callable[[EventContext], Iterator[Violation]]


def status_and_error_code(c: EventContext) -> Iterator[Violation]:
    if c.status not in STATUSES:
        yield c.violation(rules.STATUS_VALID, f"status is {c.status!r}; use OperationStatus IN_PROGRESS, SUCCESS or FAILED", "/status")
        return
    code, message = c.event.get("errorCode"), c.event.get("message")
    if c.status == OperationStatus.FAILED:
        if code not in ERROR_CODES:
            yield c.violation(
                rules.FAILED_ERROR_CODE,
                f"FAILED with errorCode {code!r}; return one of the HandlerErrorCode values (NotFound, InvalidRequest, ...)",
                "/errorCode",
            )
        if not message:
            yield c.violation(rules.FAILED_MESSAGE, "FAILED without a message; say what went wrong, e.g. ProgressEvent.failed(code, message)", "/message")
    if c.status == OperationStatus.IN_PROGRESS:
        if code:
            yield c.violation(rules.IN_PROGRESS_NO_ERROR_CODE, f"IN_PROGRESS carries errorCode {code!r}; drop it or return FAILED", "/errorCode")
        if c.event.get("resourceModels") is not None:
            yield c.violation(rules.IN_PROGRESS_NO_RESOURCE_MODELS, "IN_PROGRESS carries resourceModels; return the single resourceModel", "/resourceModels")
    if c.status in (OperationStatus.SUCCESS, OperationStatus.FAILED) and (c.event.get("callbackDelaySeconds") or 0) > 0:
        yield c.violation(
            rules.TERMINAL_NO_CALLBACK_DELAY,
            f"{c.status} with callbackDelaySeconds {c.event['callbackDelaySeconds']}: a terminal event schedules no callback",
            "/callbackDelaySeconds",
        )


def read_and_list(c: EventContext) -> Iterator[Violation]:
    if c.status == OperationStatus.IN_PROGRESS and c.action in (Action.READ, Action.LIST):
        rule = rules.READ_NO_IN_PROGRESS if c.action is Action.READ else rules.LIST_NO_IN_PROGRESS
        yield c.violation(rule, f"{c.action.value} returned IN_PROGRESS; answer SUCCESS or FAILED in one call", "/status")
    if c.action is not Action.LIST or c.status != OperationStatus.SUCCESS:
        return
    models = c.event.get("resourceModels")
    if not isinstance(models, list):
        yield c.violation(rules.LIST_RESOURCE_MODELS, "LIST SUCCESS without a resourceModels array; return [] when there are none", "/resourceModels")
        return
    for index, model in enumerate(models):
        missing = [p for p in c.schema.primary_identifier if not c.schema.has_value(model, p)]
        if missing:
            yield c.violation(
                rules.LIST_PRIMARY_IDENTIFIER, f"listed model lacks the primaryIdentifier {', '.join(missing)}", f"/resourceModels/{index}"
            )


def delete_model(c: EventContext) -> Iterator[Violation]:
    if c.action is Action.DELETE and c.status == OperationStatus.SUCCESS and c.event.get("resourceModel"):
        yield c.violation(rules.DELETE_NO_MODEL, "DELETE SUCCESS returned a resourceModel; return none once deleted", "/resourceModel")


def primary_identifier(c: EventContext) -> Iterator[Violation]:
    if c.action not in (Action.CREATE, Action.UPDATE) or c.status not in STATUSES:
        return
    if c.status == OperationStatus.FAILED and (c.first and c.action is Action.CREATE or c.model is None):
        return
    missing = [p for p in c.schema.primary_identifier if c.model is None or not c.schema.has_value(c.model, p)]
    if missing:
        yield c.violation(
            rules.PRIMARY_IDENTIFIER,
            f"{c.status} model without the primaryIdentifier {', '.join(missing)}; set it as soon as the resource exists",
            "/resourceModel",
        )
    if c.action is Action.UPDATE and c.model is not None:
        for pointer in c.schema.primary_identifier:
            sent, got = c.schema.value_at(c.requested, pointer), c.schema.value_at(c.model, pointer)
            if sent is not None and got is not None and sent != got:
                yield c.violation(
                    rules.UPDATE_PRIMARY_IDENTIFIER,
                    f"UPDATE returned {pointer} = {got!r} but the request has {sent!r}; an update MUST NOT create a new resource",
                    "/resourceModel" + pointer.replace("/properties", "", 1),
                )


def model_shape(c: EventContext) -> Iterator[Violation]:
    models: List[tuple] = []
    if c.model is not None:
        models.append(("/resourceModel", c.model))
    for index, model in enumerate(c.event.get("resourceModels") or []):
        if isinstance(model, dict):
            models.append((f"/resourceModels/{index}", model))
    for prefix, model in models:
        for pointer, problem in c.shape.problems(model):
            yield c.violation(rules.MODEL_SHAPE, problem, prefix + (pointer if pointer != "/" else ""))


def _nulls(value: Any, pointer: str) -> Iterator[str]:
    """The pointer of every null in ``value``, in document order (a scalar is looked at here, not descended into)."""
    if value is None:
        yield pointer
        return
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if item is None:
            yield f"{pointer}/{key}"
        elif isinstance(item, (dict, list)):
            yield from _nulls(item, f"{pointer}/{key}")


def final_model(c: EventContext) -> Iterator[Violation]:
    """CREATE/UPDATE/READ SUCCESS: complete, exact, no nulls, nothing writeOnly."""
    if c.status != OperationStatus.SUCCESS or c.action not in (Action.CREATE, Action.UPDATE, Action.READ):
        return
    if c.model is None:
        yield c.violation(rules.MODEL_RETURNED, f"{c.action.value} SUCCESS without a resourceModel", "/resourceModel")
        return
    if c.action in (Action.CREATE, Action.UPDATE):
        for pointer, difference in mismatches(c.requested, c.model, c.schema):
            yield c.violation(rules.SUCCESS_MATCHES_REQUEST, difference, "/resourceModel" + pointer)
    for pointer in c.schema.read_only_properties:
        parent = pointer.rsplit("/", 1)[0]
        if "*" in pointer or (parent != "/properties" and not c.schema.has_value(c.model, parent)):
            continue
        if not c.schema.has_value(c.model, pointer):
            yield c.violation(
                rules.READ_ONLY_PRESENT, f"readOnly property {pointer} is missing; return it once it has a value", "/resourceModel"
            )
    for pointer in _nulls(c.model, ""):
        yield c.violation(rules.NO_NULL_VALUES, "null value; leave the property out instead", "/resourceModel" + pointer)
    for pointer in c.schema.write_only_properties:
        if c.schema.has_value(c.model, pointer):
            yield c.violation(
                rules.NO_WRITE_ONLY,
                f"writeOnly property {pointer} returned; remove writeOnly properties from the model before returning SUCCESS",
                "/resourceModel" + pointer.replace("/properties", "", 1),
            )


def in_progress_model(c: EventContext) -> Iterator[Violation]:
    """CREATE/UPDATE IN_PROGRESS: nothing more than what is set so far (a SHOULD).

    A property is "more" when it is null, or when the request did not ask for it and the
    schema neither marks it readOnly (the handler's to set) nor gives it a default.
    """
    if c.status != OperationStatus.IN_PROGRESS or c.action not in (Action.CREATE, Action.UPDATE) or c.model is None:
        return
    declared = c.schema.document.get("properties") or {}
    read_only = _top_level_names(tuple(c.schema.read_only_properties))
    for name, value in c.model.items():
        if value is None:
            yield c.violation(rules.IN_PROGRESS_SET_SO_FAR, "null value: leave out what is not set yet", f"/resourceModel/{name}")
        elif name not in c.requested and name not in read_only and "default" not in (declared.get(name) or {}):
            yield c.violation(
                rules.IN_PROGRESS_SET_SO_FAR,
                f"{name} is in the IN_PROGRESS model but the request did not set it and the schema neither marks it "
                "readOnly nor gives it a default; return only what is set so far",
                f"/resourceModel/{name}",
            )


@functools.lru_cache(maxsize=64)
def _top_level_names(pointers: Tuple[str, ...]) -> FrozenSet[str]:
    """The top-level property names of ``pointers`` (``/properties/Name/...`` → Name), read once per schema's list."""
    return frozenset(p.split("/")[2] for p in pointers if p.count("/") >= 2)


EVENT_CHECKS: List[Check] = [
    status_and_error_code, read_and_list, delete_model, primary_identifier, model_shape, final_model, in_progress_model,
]
# The actions a check can find anything for (its own first test says so); one not named here runs for every action.
CHECKED_ACTIONS: Dict[Check, Tuple[Action, ...]] = {
    read_and_list: (Action.READ, Action.LIST),
    delete_model: (Action.DELETE,),
    primary_identifier: (Action.CREATE, Action.UPDATE),
    final_model: (Action.CREATE, Action.UPDATE, Action.READ),
    in_progress_model: (Action.CREATE, Action.UPDATE),
}


@functools.lru_cache(maxsize=None)
def checks_for(action: Action) -> Tuple[Check, ...]:
    """EVENT_CHECKS, in their order, less those that find nothing for ``action``: each answer runs only these."""
    return tuple(check for check in EVENT_CHECKS if action in CHECKED_ACTIONS.get(check, (action,)))


def check_event(context: EventContext) -> List[Violation]:
    return [violation for check in checks_for(context.action) for violation in check(context)]
