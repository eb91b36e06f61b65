"""Change sets kept across restarts of serve (``--state DIR``): what is written of one, and how it is read back (where:
``state_db.py``'s ``change_sets`` table).

Written each time a change set changes (``KeptChangeSets.sync``): its plan as it was made — each resource's action,
replacement, details and policy action, the properties before and after as IncludePropertyValues shows them (writeOnly
values masked by the type's provisioner) — its template (the user's file, and what the account's macros made of it, as a
stack's record keeps them), its parameter values, its hooks' verdicts, its statuses and its settings. Never written: the
value of a NoEcho parameter (masked wherever it appears); only whether it was the parameter's Default.

Read back: the plan as written, so DescribeChangeSet shows what it showed and ExecuteChangeSet carries out that same plan;
and, for a change set that can still be executed, its blueprint made again from the kept template and values (an
SSM-typed parameter's value as it was read then, not read again; no macro run again). One whose blueprint cannot be made
again is shown as it was, and ExecuteChangeSet refuses it saying why: a NoEcho value it was given (never kept), a template
that no longer reads, a type no longer served. A change set caught CREATE_IN_PROGRESS when serve stopped (its hooks or
READs running) reads back FAILED; one EXECUTE_IN_PROGRESS reads back EXECUTE_FAILED (its stack is read back failed, and
rolled back).
"""
from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from cfnrun.stacks.blueprint import StackEnvironment
from cfnrun.stacks.change_details import ChangeDetail
from cfnrun.stacks.change_sets import ChangeSet
from cfnrun.stacks.drift_aware import ActualState
from cfnrun.stacks.hooks import HookReport
from cfnrun.stacks.kept_blueprints import kept_values, made_again, no_echo_values, shown_only, shown_parameters
from cfnrun.stacks.persistence import scrubbed_with
from cfnrun.stacks.plan import ChangePlan, ResourceChange
from cfnrun.stacks.provisioning import NoProvisioner, Provisioners
from cfnrun.stacks.records import Stack
from cfnrun.stacks.state_db import StateDatabase
from cfnrun.stacks.template.parameters import NO_ECHO_MASK

# What a change set's record keeps as the change set holds it (the plan, the hooks' verdicts and the values apart).
_SETTINGS = tuple(f.name for f in fields(ChangeSet) if f.name not in ("plan", "hook_results", "parameters", "unexecutable"))
_TUPLES = ("capabilities", "notification_arns")
STOPPED_WHILE_CREATED = "cfnrun serve stopped while this change set was being created"

Shown = Callable[[str, Dict[str, Any]], Dict[str, Any]]  # a type's properties as events may show them (writeOnly masked)


class KeptChangeSets:
    """Writes each change set of a serve to ``--state`` as it changes, and reads them back."""

    def __init__(self, database: Optional[StateDatabase], provisioners: Provisioners) -> None:
        self.database = database
        self.provisioners = provisioners
        self._written: Dict[str, Tuple[Any, ...]] = {}  # change set id → what it held when last written

    def sync(self, change_sets: Mapping[str, ChangeSet], stacks: Mapping[str, Stack], operations: Mapping[str, str]) -> None:
        """Write each change set that changed since it was last written, and drop each one gone; ``operations``: the
        operation that made each (DescribeEvents')."""
        if self.database is None:
            return
        for gone in [i for i in self._written if i not in change_sets]:
            self.database.drop_change_set(gone)
            del self._written[gone]
        for change_set in change_sets.values():
            held = _held(change_set)
            if self._written.get(change_set.change_set_id) == held:
                continue
            stack = stacks.get(change_set.stack_id)
            if stack is None:
                continue
            record = change_set_record(change_set, stack, self._shown, operations.get(change_set.change_set_id))
            self.database.put_change_set(change_set.change_set_id, change_set.stack_id, record)
            self._written[change_set.change_set_id] = held

    def restore(
        self, stacks: Mapping[str, Stack], environment: Callable[[Stack, Sequence[str]], StackEnvironment],
    ) -> List[Tuple[ChangeSet, Optional[str]]]:
        """The kept change sets of kept stacks, each with the operation that made it; raises KeyError, TypeError,
        ValueError for a damaged record."""
        if self.database is None:
            return []
        restored = []
        for record in self.database.change_sets():
            stack = stacks.get(record["stack_id"])
            if stack is None:
                self.database.drop_change_set(record["change_set_id"])
                continue
            change_set = restored_change_set(record, environment(stack, record["notification_arns"]), self.provisioners)
            unchanged = (change_set.status, change_set.execution_status) == (record["status"], record["execution_status"])
            self._written[change_set.change_set_id] = _held(change_set) if unchanged else ()  # else written again as read back
            restored.append((change_set, record.get("operation_id")))
        return restored

    def _shown(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        try:
            return self.provisioners.for_type(type_name).shown(type_name, properties)
        except NoProvisioner:
            return {name: NO_ECHO_MASK for name in properties}  # nothing serves it to say what may be shown: nothing is


def _held(change_set: ChangeSet) -> Tuple[Any, ...]:
    """What a change set holds that a write keeps: when it differs from the last write's, the change set is written again."""
    return (id(change_set.plan), len(change_set.hook_results), tuple(repr(getattr(change_set, name)) for name in _SETTINGS))


def change_set_record(change_set: ChangeSet, stack: Stack, shown: Shown, operation_id: Optional[str]) -> Dict[str, Any]:
    """``change_set`` as written: no NoEcho value (the change set's or its stack's) anywhere, no writeOnly value in its plan."""
    blueprint = change_set.blueprint
    record: Dict[str, Any] = {name: getattr(change_set, name) for name in _SETTINGS}
    record.update(
        operation_id=operation_id,
        hook_results=[asdict(report) for report in change_set.hook_results],
        blueprint=kept_values(blueprint, change_set.parameters),
        plan=[resource_change_record(change, shown) for change in change_set.plan.resources.values()],
    )
    secrets = [s for s in [*stack.secrets(), *no_echo_values(blueprint, change_set.parameters)] if s]
    kept: Dict[str, Any] = scrubbed_with(record, secrets) if secrets else record
    kept["blueprint"]["template_body"] = blueprint.template_body  # the user's own file, as a stack's record keeps it
    return kept


def resource_change_record(change: ResourceChange, shown: Shown) -> Dict[str, Any]:
    def properties(values: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
        return shown(change.resource_type, dict(values)) if values is not None else None

    def value(detail: ChangeDetail, item: Any) -> Any:
        return item if detail.name is None or item is None else shown(change.resource_type, {detail.name: item}).get(detail.name)

    details = [
        dict(asdict(d), before=value(d, d.before), after=value(d, d.after),
             drift=[value(d, d.drift[0]), value(d, d.drift[1])] if d.drift is not None else None)
        for d in change.details
    ]
    drift = change.drift
    return dict(
        {f.name: getattr(change, f.name) for f in fields(ResourceChange) if f.name not in ("details", "drift", "before", "after")},
        details=details,
        before=properties(change.before),
        after=properties(change.after),
        drift=None if drift is None else {
            "status": drift.status, "checked_at": drift.checked_at, "properties": properties(drift.properties),
            "drifted": sorted(drift.drifted), "write_only": sorted(drift.write_only),
        },
    )


def restored_resource_change(record: Dict[str, Any]) -> ResourceChange:
    drift = record["drift"]
    return ResourceChange(**dict(
        record,
        details=tuple(ChangeDetail(**dict(d, drift=tuple(d["drift"]) if d["drift"] is not None else None)) for d in record["details"]),
        drift=None if drift is None else ActualState(
            drift["status"], drift["checked_at"], drift["properties"] or {}, frozenset(drift["drifted"]), frozenset(drift["write_only"]),
        ),
    ))


def restored_change_set(record: Dict[str, Any], environment: StackEnvironment, provisioners: Provisioners) -> ChangeSet:
    """A kept change set read back: its plan as written; its blueprint made again when it can still be executed."""
    settings = {name: record[name] for name in _SETTINGS if name in record}
    settings.update({name: tuple(settings.get(name) or ()) for name in _TUPLES})
    if settings["status"] == "CREATE_IN_PROGRESS":
        settings.update(status="FAILED", status_reason=STOPPED_WHILE_CREATED, execution_status="UNAVAILABLE")
    if settings["execution_status"] == "EXECUTE_IN_PROGRESS":
        settings["execution_status"] = "EXECUTE_FAILED"
    kept = record["blueprint"]
    blueprint, unexecutable = made_again(kept, environment, provisioners) if settings["execution_status"] == "AVAILABLE" else (None, None)
    parameters = dict(blueprint.parameters) if blueprint is not None else shown_parameters(kept)
    if blueprint is None:
        blueprint = shown_only(kept, environment)
    plan = ChangePlan(blueprint, {r["logical_id"]: restored_resource_change(r) for r in record["plan"]})
    return ChangeSet(
        **settings, plan=plan, parameters=parameters, hook_results=[HookReport(**r) for r in record["hook_results"]],
        unexecutable=unexecutable,
    )
