"""Observers that write what an operation did into the history store."""
from __future__ import annotations

import functools
import sqlite3
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from cfnrun.contract.violations import Violation
from cfnrun.events.encoding import Record, encode, encode_invocation
from cfnrun.events.operation import (
    ContractChecked,
    InvocationCompleted,
    OperationCompleted,
    OperationEvent,
    OperationStarted,
)
from cfnrun.history.masking import Masker, call_masker, plain_json
from cfnrun.history.store import HistoryStore, not_recorded
from cfnrun.history.writer import HistoryWriter, Then
from cfnrun.model.budgets import Budget
from cfnrun.model.endings import EndReason
from cfnrun.model.errors import CfnrunError
from cfnrun.model.hook_protocol import parse_hook_progress_event
from cfnrun.model.protocol import Action, InvalidProgressEvent, OperationStatus, ProgressEvent, parse_progress_event
from cfnrun.model.schema import ResourceSchema
from cfnrun.model.seen_call import SeenCall
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind


def ending_error(reason: EndReason) -> Optional[str]:
    """What the history's ERROR column shows for an operation the invoker ended (a timeout, an interruption)."""
    return None if reason is EndReason.HANDLER else reason.value


class OperationRecorder:
    """Records one operation (an Observer): ``cfnrun invoke``'s (with --watch, every run of it), or one serve runs
    for Cloud Control or a stack — there through serve's ``writer``, in its batches."""

    def __init__(
        self, store: HistoryStore, masker: Masker, request: Dict[str, Any], token: Optional[str], writer: Optional[HistoryWriter] = None
    ) -> None:
        self.store, self.masker, self.request, self.token, self.writer = store, masker, request, token, writer
        self._records: List[Record] = []
        self._started_at = time.time()
        self._function = ""
        self.recorded_id: Optional[int] = None

    def __call__(self, event: OperationEvent) -> None:
        if isinstance(event, OperationStarted):
            self._records, self._started_at, self._function = [], time.time(), event.function
        record = encode(event, self.masker)
        if record is not None:
            self._records.append(record)
        if isinstance(event, OperationCompleted):
            result = event.result
            head = {
                "started_at": self._started_at,
                "type_name": self.request.get("typeName", ""),
                "action": result.action.value,
                "function": self._function,
                "status": result.status.value,
                "error_code": result.error_code or ending_error(result.reason),
                "invocations": result.invocations,
                "duration_s": result.elapsed_s,
            }
            records = self._records  # the next OperationStarted (``invoke --watch``) starts a new list
            if self.writer is not None:  # their JSON text made in serve's batch: off the path from this answer to the next call
                self.writer.write(lambda: self._add(head, records))
            else:
                self._add(head, records)

    def _add(self, head: Dict[str, Any], records: List[Record]) -> None:
        request, events = self.masker.dumps(self.request), [self.masker.dumps(r) for r in records]
        try:
            self.recorded_id = self.store.add(self.request.get("source", "invoke"), self.token, head, request, events)
        except (sqlite3.Error, OSError, CfnrunError) as error:
            not_recorded(error)


def _progress(action: Action, call: SeenCall, result: Any) -> ProgressEvent:
    """The answer as a ProgressEvent: a hook's TypeFunction answers ``hookStatus``, its test entrypoint ``status``."""
    if action.is_hook:
        return parse_hook_progress_event(result, "status" if call.test_event else "hookStatus")
    return parse_progress_event(result)


MAX_OPEN_OPERATIONS = 1000  # serve: IN_PROGRESS operations awaiting their next call, at most
MAX_PLAIN_ANSWERS = 64  # answers of strings alone whose reading a CallRecorder keeps, at most
PLAIN_ANSWER_KEYS = 4  # status, errorCode, message, nextToken: an answer with more is read each time


def _plain_answer(result: Any) -> Optional[Tuple[Tuple[str, str], ...]]:
    """A resource handler's answer made of a few strings alone (a no-op's, a DELETE's, a FAILED's), as a key; else None."""
    if not isinstance(result, dict) or len(result) > PLAIN_ANSWER_KEYS:
        return None
    for value in result.values():  # a loop, not all() over a generator: every recorded call asks
        if type(value) is not str:
            return None
    return tuple(result.items())


def _same_budget(kept: Budget, given: Budget) -> bool:
    return kept is given or kept == given


class _Open:
    def __init__(self, operation_id: int, started: float) -> None:
        self.operation_id, self.started, self.invocations = operation_id, started, 1


class CallRecorder:
    """Records the calls ``cfnrun serve`` answers, grouped per operation: the calls of one
    clientRequestToken, for one action, while the handler answers IN_PROGRESS (or pages a LIST)."""

    def __init__(self, writer: HistoryWriter, schema: Callable[[], ResourceSchema], type_name: str) -> None:
        self.store, self.schema, self.type_name = writer.store, schema, type_name
        self.writer = writer
        self._open: Dict[Tuple[str, str, str], _Open] = {}  # the writer's batches alone read and change it
        self._starts: Dict[Tuple[Action, str, str], Tuple[Budget, Budget, str]] = {}  # the writer's batches alone read and change it
        # Answers of strings alone read before, with their wire form; the writer's batches alone read and change it.
        self._plain: Dict[Tuple[Tuple[str, str], ...], Tuple[ProgressEvent, Record]] = {}

    def call(
        self,
        function: str,
        action: Action,
        call: SeenCall,
        outcome: InvocationOutcome,
        violations: List[Violation],
        budgets: Tuple[Budget, Budget],
        then: Optional[Then] = None,
        masker: Optional[Masker] = None,
    ) -> None:
        """Hand the call to the history's writer; ``then`` runs on the event loop once it is recorded. ``masker``: the
        call's (``call_masker``), when the caller made it already."""
        # A partial, not a record of the call and a lambda: nothing made in Python on the event loop for each call.
        self.writer.write(functools.partial(self._record, function, action, call, outcome, violations, budgets, time.time(), masker), then)

    def _record(
        self, function: str, action: Action, call: SeenCall, outcome: InvocationOutcome, violations: List[Violation],
        budgets: Tuple[Budget, Budget], now: float,  # when serve answered it
        masker: Optional[Masker] = None,
    ) -> None:
        masker = masker if masker is not None else call_masker(self.schema(), call)
        progress: Optional[ProgressEvent] = None
        wire: Optional[Record] = None
        problem: Optional[str] = None
        if outcome.kind is OutcomeKind.RETURNED:
            try:
                progress, wire = self._progress(action, call, outcome.result)
            except InvalidProgressEvent as error:
                problem = str(error)
        token = call.client_request_token
        key = (function, action.value, token) if token else None
        ongoing = self._open.pop(key, None) if key else None  # type: ignore[arg-type]
        number = ongoing.invocations + 1 if ongoing else 1
        started = ongoing.started if ongoing else now - outcome.duration_ms / 1000.0
        events: List[str] = []
        if ongoing is None:
            entrypoint = "test" if call.test_event else "type"
            events.append(masker.masked_text(self._start_text(action, function, entrypoint, budgets, masker)))
        events.append(masker.dumps(encode_invocation(InvocationCompleted(number, outcome, progress, problem, now - started), masker, wire)))
        if violations:
            events.append(masker.dumps(encode(ContractChecked(number, [Violation(v.rule, v.message, v.pointer, number) for v in violations]), masker) or {}))
        # ``_value_``: an Enum's ``value`` is a Python-level property, read per recorded call
        status = progress.status._value_ if progress is not None else OperationStatus.FAILED._value_
        head = {
            "started_at": started,
            "type_name": self.type_name,
            "action": action._value_,
            "function": function,
            "status": status,
            "error_code": progress.errorCode if progress is not None else outcome.error_type or "InvalidResponse",
            "invocations": number,
            "duration_s": now - started,
        }
        try:
            self.store.hold()
            if ongoing is None:
                request = {"source": "serve", "payload": masker.payload(call.payload)}
                ongoing = _Open(self.store.add("serve", token, head, masker.dumps(request), events), started)
            else:
                ongoing.invocations = number
                self.store.extend(ongoing.operation_id, head, events)
        except (sqlite3.Error, OSError, CfnrunError) as error:
            not_recorded(error)
            return
        goes_on = progress is not None and (
            progress.status is OperationStatus.IN_PROGRESS or (action is Action.LIST and bool(progress.nextToken))
        )
        if key and goes_on:
            if len(self._open) >= MAX_OPEN_OPERATIONS:  # operations a client abandoned IN_PROGRESS
                self._open.pop(next(iter(self._open)))
            self._open[key] = ongoing

    def _progress(self, action: Action, call: SeenCall, result: Any) -> Tuple[ProgressEvent, Optional[Record]]:
        """``_progress``, and its wire form when it is known already: a resource handler's answer of strings alone is
        read once and its wire form made once (the same strings read the same); the record gets a copy of it (of
        strings alone, a copy of the dict is a copy of it all)."""
        key = None if action.is_hook else _plain_answer(result)
        if key is None:
            return _progress(action, call, result), None
        kept = self._plain.get(key)
        if kept is None:  # an answer that is no ProgressEvent raises here every time: it is never kept
            progress = _progress(action, call, result)
            if len(self._plain) >= MAX_PLAIN_ANSWERS:
                self._plain.clear()
            kept = self._plain[key] = (progress, progress.wire())
        return kept[0], dict(kept[1])

    def _start_text(self, action: Action, function: str, entrypoint: str, budgets: Tuple[Budget, Budget], masker: Masker) -> str:
        """The start record's JSON text before masking: the same for every operation of one function, action, entrypoint and budgets."""
        key = (action, function, entrypoint)
        kept = self._starts.get(key)
        # The budgets are compared, not hashed with the key (a Budget's hash is a dataclass's, in Python); serve hands the
        # same Budget objects call after call, so the comparison is mostly an identity.
        if kept is None or not (_same_budget(kept[0], budgets[0]) and _same_budget(kept[1], budgets[1])):
            if len(self._starts) >= MAX_OPEN_OPERATIONS:
                self._starts.clear()
            started = OperationStarted(action, self.type_name, function, entrypoint, budgets[0], budgets[1], False)
            kept = self._starts[key] = (budgets[0], budgets[1], plain_json(encode(started, masker) or {}))
        return kept[2]

    def close(self) -> None:
        self.writer.close()
