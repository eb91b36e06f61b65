"""The stacks and change sets of one serve: what each stack operation checks, then starts.

Each mutating operation checks its input as the service does (an error here is the API's
ValidationError, AlreadyExistsException, …), then starts the stack operation in the
background and returns at once, like the service: status and events advance as the handlers
run. ``settled`` waits for a stack's operation (``cfnrun stack test`` and tests use it).
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from cfnrun.stacks.background import finish_or_cancel
from cfnrun.stacks.blueprint import Blueprint, Blueprints, StackEnvironment
from cfnrun.stacks.engine import StackEngine
from cfnrun.stacks.names import CHANGE_SET_NAME, stack_name_problem
from cfnrun.events.stack import StackEvent
from cfnrun.stacks.hooks import CHANGE_SET_ACTION, CHANGE_SET_TARGET, HookedOperation, change_set_model, with_reasons
from cfnrun.stacks import auto_imports, drift_aware
from cfnrun.stacks.drift_aware import REVERT_DRIFT, ActualState
from cfnrun.stacks.plan import ChangePlan, plan_create, plan_update
from cfnrun.stacks.change_sets import UNPROCESSED, ChangeSet
from cfnrun.stacks.kept_change_sets import KeptChangeSets
from cfnrun.stacks.kept_refactors import KeptRefactors
from cfnrun.stacks.persistence import (
    RolledBackTo, blueprint_record_of, restored_blueprint, restored_rolled_back_to, restored_stack, rolled_back_to_record, stack_record,
)
from cfnrun.stacks.state_db import StateDatabase, StateError
from cfnrun.stacks.in_flight import InFlight, OperationStopped
from cfnrun.stacks.interrupted_operations import carried_on_as, carry_on
from cfnrun.stacks.request_tokens import RequestTokens
from cfnrun.stacks.change_details import ChangeDetail
from cfnrun.stacks.changes import value_text
from cfnrun.stacks.change_notices import ChangeNotices
from cfnrun.stacks.operation_events import OperationLog
from cfnrun.stacks.provisioning import NoProvisioner, Provisioners
from cfnrun.stacks.validation import ValidationFailure, failed_reason, names_taken, refuse, validate_plan
from cfnrun.stacks.records import Stack, mask_values
from cfnrun.stacks.refactors import MAX_STACKS, RefactorProblem, StackRefactor, new_refactor_id, plan_refactor, rehome
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.stack_policy import StackPolicy, policy_of
from cfnrun.stacks.imports import IMPORT, ImportProblem, execute_import, plan_import
from cfnrun.stacks.template.parameters import NO_ECHO_MASK
from cfnrun.stacks.template.secure_references import secure_reference_problem
from cfnrun.stacks.statuses import ROLLBACK_FROM, UPDATABLE


EXECUTED = ("EXECUTE_COMPLETE", "EXECUTE_FAILED")


# OnStackFailure (CreateChangeSet) beside ExecuteChangeSet's DisableRollback: the model says they exclude each other; the
# words are inferred from CreateStack's refusal of OnFailure with DisableRollback, which are the service's.
BOTH_ON_STACK_FAILURE_AND_DISABLE_ROLLBACK = "Either DisableRollback or OnStackFailure can be specified, not both."
ON_STACK_FAILURE_DELETE_NOT_CREATE = "OnStackFailure DELETE is only valid when ChangeSetType is CREATE"  # inferred words


class StackError(Exception):
    """An operation the service would refuse: ``code`` is the API's error code."""

    def __init__(self, message: str, code: str = "ValidationError", status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status


class StackStore:
    def __init__(self, engine: StackEngine, blueprints: Blueprints, state: Optional[Path] = None) -> None:
        self.engine = engine
        self.prepare = blueprints.prepare  # raises TemplateError for what the service refuses up front
        self.blueprints = blueprints
        self.state = state  # --state DIR: every change is written there (``persistence.py``, ``state_db.py``)
        self.database = StateDatabase(state) if state is not None else None
        if self.database is not None:
            engine.in_flight = InFlight(self.database, self.save)  # each IN_PROGRESS answer written as it arrives
        self.stacks: Dict[str, Stack] = {}  # by stack id, deleted ones included (DescribeStacks by id shows them)
        self.change_sets: Dict[str, ChangeSet] = {}
        self.kept_change_sets = KeptChangeSets(self.database, engine.provisioners)  # each written as it changes (``--state``)
        self.kept_refactors = KeptRefactors(self.database, engine.provisioners)
        self.refactors: Dict[str, StackRefactor] = {}  # by StackRefactorId (kept with --state, as change sets are)
        self._tasks: Dict[str, "asyncio.Task[None]"] = {}  # each stack's operation, and each change set's hooks, by id
        self._tokens: Dict[Tuple[str, str], str] = {}  # (stack id, ClientRequestToken) → the operation it started
        self.tokens = RequestTokens(self.database)  # a retried CreateStack/UpdateStack/DeleteStack is answered as the first (``request_tokens.py``)
        self.log = OperationLog()  # each operation's validation events (DescribeEvents)
        if self.database is not None:
            self.log.kept = self.database.put_validation_events
        self._interrupted: Dict[str, str] = {}  # stacks read back mid-operation: the status each was in (``interrupted_operations.py``)
        self.notices = ChangeNotices()  # the console's live pages follow the stacks (``change_notices.py``)
        # by stack id: its blueprint and what its record keeps of it, worked out once per blueprint, not once per event
        self._blueprint_records: Dict[str, Tuple[Blueprint, Dict[str, Any]]] = {}
        self._rolled_back_to_records: Optional[Tuple[Blueprint, Dict[str, Any]]] = None  # the last one ``_blueprint_record`` made

    # -- kept across restarts --------------------------------------------------------------------

    def _keep(self, stack: Stack, on_event: Optional[Callable[[StackEvent], None]] = None) -> None:
        """Hold ``stack``: each of its events is saved (``--state``), then told to ``on_event``."""
        self.stacks[stack.stack_id] = stack

        def saved(event: StackEvent) -> None:
            self.save(stack)
            self.notices.changed(stack.stack_id)
            if on_event is not None:
                on_event(event)

        stack.on_event = saved

    def save(self, stack: Stack) -> None:
        """Write ``stack`` to ``--state`` (nothing without it): its own record and its new events, nothing else."""
        if self.database is None:
            return
        secrets = stack.secrets()  # found once for all the resources, not once per resource
        masked = {r.logical_id: self.engine.holds_secrets(stack, r, secrets) for r in stack.resources.values()}
        blueprint = self.engine.blueprints.get(stack.stack_id)
        kept = self._blueprint_records.get(stack.stack_id)
        if blueprint is None:
            self._blueprint_records.pop(stack.stack_id, None)
        elif kept is None or kept[0] is not blueprint:
            kept = self._blueprint_records[stack.stack_id] = (blueprint, blueprint_record_of(blueprint))
        written = self.database.written(stack.stack_id)
        record = stack_record(stack, blueprint, masked, written, kept[1] if kept else None)
        # what a rollback after a restart goes back to; in the cleanup, the DeletionPolicy of each resource the update removes
        if stack.status in ("UPDATE_IN_PROGRESS", "UPDATE_FAILED", "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS"):
            before = self._rolled_back_to(stack)
            if before is not None:
                record["rolled_back_to"] = rolled_back_to_record(stack, before, self._blueprint_record(before.blueprint))
        self.database.put(record, written)

    def _rolled_back_to(self, stack: Stack) -> Optional[RolledBackTo]:
        """The update's own before while it runs here; else the one read back with the stack (an update serve was
        stopped during, rolled back or cleaned up by this serve, which may be stopped in its turn)."""
        run = self.engine.updates.get(stack.stack_id)
        if run is None:
            return self.engine.rolled_back_to.get(stack.stack_id)
        before = run.before
        return RolledBackTo(before.blueprint, before.parameters, before.tags, before.outputs)

    def _blueprint_record(self, blueprint: Blueprint) -> Dict[str, Any]:
        """What a record keeps of ``blueprint``, worked out once per blueprint (an update's before, saved with each event)."""
        kept = self._rolled_back_to_records
        if kept is None or kept[0] is not blueprint:
            kept = self._rolled_back_to_records = (blueprint, blueprint_record_of(blueprint))
        return kept[1]

    def restore(self) -> List[Stack]:
        """Read the stacks ``--state`` holds; raises StateError."""
        if self.database is None:
            return []
        self.database.open()
        try:
            self.log.restore(self.database.validation_events())
        except (KeyError, TypeError, ValueError) as error:
            raise StateError(f"{self.database.path}: a kept validation event is damaged ({type(error).__name__}: {error})") from None
        self.engine.in_flight.restore()  # before any stack is written back: what completes a stack's update clears them
        restored = []
        for record in self.database.records():
            try:
                stack = restored_stack(record)
                blueprint = restored_blueprint(record, self.blueprints.environment(stack.name, stack.stack_id, stack.notification_arns))
            except (KeyError, TypeError, ValueError, AttributeError) as error:
                name = record.get("name") or record.get("stack_id")
                raise StateError(f"{self.database.path}: the record of stack {name} is damaged ({type(error).__name__}: {error})") from None
            if blueprint is not None and stack.status != "DELETE_COMPLETE":
                self.engine.blueprints[stack.stack_id] = blueprint
                before = restored_rolled_back_to(record, self.blueprints.environment(stack.name, stack.stack_id, stack.notification_arns))
                if before is not None:
                    self.engine.rolled_back_to[stack.stack_id] = before
                self.engine.exports.publish(stack.stack_id, stack.name, {o.export_name: str(o.value) for o in stack.outputs if o.export_name})
                self.engine.exports.set_imports(stack.name, blueprint.imports())
            self._keep(stack)
            restored.append(stack)
            if stack.status != record["status"]:
                self._interrupted[stack.stack_id] = record["status"]
                if carried_on_as(self.engine, stack, record["status"]) is None:
                    self.save(stack)  # what was caught mid-operation and stays so is written as read back: failed
                # one carried on is written by the first event of what carries it on (``carry_on``), not before: a serve
                # stopped in between leaves the record as it was, and the next serve carries it on in its turn
        try:
            for change_set, operation_id in self.kept_change_sets.restore(self.stacks, self._environment_of):
                self.change_sets[change_set.change_set_id] = change_set
                if operation_id is not None:
                    self.log.change_set_operations[change_set.change_set_id] = operation_id
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise StateError(f"{self.database.path}: a kept change set is damaged ({type(error).__name__}: {error})") from None
        try:
            self.refactors = {r.refactor_id: r for r in self.kept_refactors.restore(self.stacks, self.blueprints.environment)}
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise StateError(f"{self.database.path}: a kept stack refactor is damaged ({type(error).__name__}: {error})") from None
        self.tokens.restore(self.stacks)
        return restored

    def _environment_of(self, stack: Stack, notification_arns: Sequence[str]) -> StackEnvironment:
        return self.blueprints.environment(stack.name, stack.stack_id, notification_arns)

    def sync_change_sets(self) -> None:
        """Write each change set that changed to ``--state`` (nothing without it), and drop each one gone."""
        self.kept_change_sets.sync(self.change_sets, self.stacks, self.log.change_set_operations)

    def carry_on(self) -> List[Tuple[Stack, str]]:
        """Roll back (or go on deleting) each stack ``restore`` read back mid-operation, as the service would; each stack so
        carried on, with the type of the operation that carries it on."""
        resumed = []
        for stack_id, was in self._interrupted.items():
            stack = self.stacks[stack_id]
            operation_type = carried_on_as(self.engine, stack, was)
            if operation_type is not None:
                self._begin(stack, operation_type)
                self._start(stack, carry_on(self.engine, stack, operation_type))
                resumed.append((stack, operation_type))
        self._interrupted.clear()
        return resumed

    def stop_starting(self, why: str) -> None:
        """Serve stops: no stack operation starts a resource operation from now on (``in_flight.py``)."""
        self.engine.stopped = why

    @staticmethod
    def _require_kept(stack: Stack, parameters: Dict[str, Optional[str]]) -> None:
        """UsePreviousValue of a NoEcho parameter whose value was not kept across a restart: say so plainly."""
        for key, value in parameters.items():
            if value is None and key in stack.no_echo and key not in stack.parameters:
                raise StackError(
                    f"Invalid input for parameter key {key}: it is NoEcho, and its value is never written to --state, so it did "
                    "not survive the restart of cfnrun serve; give its value again"
                )

    # -- finding -------------------------------------------------------------------------------

    def find(self, name_or_id: str) -> Optional[Stack]:
        """The stack a call names: by id, by name, or by its alias (SetAlias); a deleted one by id only."""
        stack = self.stacks.get(name_or_id)
        if stack is not None:
            return stack
        live = [s for s in self.stacks.values() if name_or_id in (s.name, s.alias_name) and s.status != "DELETE_COMPLETE"]
        return live[-1] if live else None

    def get(self, name_or_id: str, *, bracketed: bool = False) -> Stack:
        """The stack a call names, refused as DescribeStacks words it ("Stack with id X does not exist") or, ``bracketed``,
        as UpdateStack and DescribeStackEvents do ("Stack [X] does not exist")."""
        stack = self.find(name_or_id)
        if stack is None:
            raise StackError(f"Stack [{name_or_id}] does not exist" if bracketed else f"Stack with id {name_or_id} does not exist")
        return stack

    def change_set(self, name_or_id: str, stack_name: Optional[str] = None) -> ChangeSet:
        """The change set a call names, by ARN or by name and stack; refused in the service's words."""
        found = self.change_sets.get(name_or_id)
        if found is None and not name_or_id.startswith("arn:"):
            if not stack_name:
                raise StackError("StackName must be specified if ChangeSetName is not specified as an ARN.")
            stack = self.find(stack_name)
            if stack is None:
                raise StackError(f"Stack [{stack_name}] does not exist")
            found = next((c for c in self.change_sets.values() if c.stack_id == stack.stack_id and c.name == name_or_id), None)
        if found is None:
            raise StackError(f"ChangeSet [{name_or_id}] does not exist", "ChangeSetNotFound", 404)
        return found

    # -- stack operations ----------------------------------------------------------------------

    def create_stack(
        self,
        name: str,
        template_body: str,
        parameters: Dict[str, Optional[str]],
        tags: Dict[str, str],
        disable_rollback: bool = False,
        token: Optional[str] = None,
        on_event: Optional[Callable[[StackEvent], None]] = None,
        disable_validation: bool = False,
        delete_on_failure: bool = False,
        notification_arns: Sequence[str] = (),
    ) -> Stack:
        """``on_event``: told of each of the stack's events from its first on (``cfnrun stack test`` follows a stack so).
        ``disable_validation``: skip the pre-deployment validation (``validation.py``). ``notification_arns``: the
        stack's NotificationARNs (what ``Ref: AWS::NotificationARNs`` gives)."""
        retried = self.tokens.retried("CreateStack", name, token)
        if retried is not None:
            return retried
        stack = self._new_stack(name, template_body, parameters, tags, disable_rollback)
        self.tokens.started("CreateStack", stack, token)
        stack.delete_on_failure = delete_on_failure
        blueprint = self.prepare(template_body, parameters, {}, name, stack.stack_id, notification_arns)
        _refuse_secure_references(blueprint)
        stack.parameters, stack.no_echo, stack.description = blueprint.parameters, blueprint.no_echo, blueprint.description
        stack.change_set_id = self._change_set_arn(f"{name}-create")  # CreateStack runs a change set of its own
        plan = plan_create(blueprint)
        failures = [] if disable_validation else self._validated(plan, stack)
        self._keep(stack, on_event)
        self._begin(stack, "CREATE_STACK", failures)
        if failures:
            refuse(stack, "CREATE", failed_reason(failures), token)
            return stack
        self.engine.blueprints[stack.stack_id] = plan.blueprint  # written before CreateStack answers: a SIGKILL then loses no stack
        self.save(stack)
        self._start(stack, self.engine.create(stack, plan, token))
        return stack

    def _validated(self, plan: ChangePlan, stack: Stack) -> List[ValidationFailure]:
        """The pre-deployment validation's failures of ``plan``, the values of its NoEcho parameters masked in their reasons."""
        failures = validate_plan(plan, self.engine.provisioners, names_taken(self.stacks.values()), stack.stack_id)
        secrets = [plan.blueprint.parameters.get(name) for name in plan.blueprint.no_echo]
        return [replace(f, reason=stack.masked(mask_values(f.reason, secrets))) for f in failures]

    def _begin(self, stack: Stack, operation_type: str, failures: Sequence[ValidationFailure] = ()) -> None:
        """A new operation of ``stack``, with what its validation found."""
        operation_id = stack.begin(operation_type)
        if failures:
            self.log.validated(stack.stack_id, operation_id, operation_type, list(failures))
            return
        for change_set in self.change_sets.values():  # planned against the stack as it was: the service makes them OBSOLETE
            if change_set.stack_id == stack.stack_id and change_set.status != "FAILED" and change_set.execution_status in ("AVAILABLE", "UNAVAILABLE"):
                change_set.execution_status = "OBSOLETE"
        self.sync_change_sets()

    def _new_stack(
        self, name: str, template_body: str, parameters: Dict[str, Optional[str]], tags: Dict[str, str], disable_rollback: bool,
        stack_id: Optional[str] = None,
    ) -> Stack:
        """``stack_id``: the id it was given ahead (a stack refactor's StackIds name the stack it will create)."""
        problem = stack_name_problem(name)
        if problem is not None:
            raise StackError(problem)
        if self.find(name) is not None:
            raise StackError(f"Stack [{name}] already exists", "AlreadyExistsException")
        return Stack(stack_id or self.new_stack_id(name), name, "CREATE_IN_PROGRESS", template_body, {}, tags=dict(tags), disable_rollback=disable_rollback)

    def new_stack_id(self, name: str) -> str:
        return f"arn:aws:cloudformation:{self.engine.region}:{self.engine.account_id}:stack/{name}/{uuid.uuid4()}"

    def update_stack(
        self,
        name: str,
        template_body: Optional[str],
        parameters: Dict[str, Optional[str]],
        tags: Optional[Dict[str, str]],
        token: Optional[str] = None,
        policy_during_update: Optional[StackPolicy] = None,
        disable_validation: bool = False,
        disable_rollback: bool = False,
        notification_arns: Optional[Sequence[str]] = None,
    ) -> Stack:
        """``policy_during_update``: StackPolicyDuringUpdateBody, guarding this update instead of the stack's policy.
        ``notification_arns``: the NotificationARNs given (None: the stack's are kept)."""
        retried = self.tokens.retried("UpdateStack", name, token)
        if retried is not None:
            return retried
        stack = self.get(name, bracketed=True)
        self._require_status(stack, UPDATABLE, "updated")
        body = template_body if template_body is not None else stack.template_body
        self._require_kept(stack, parameters)
        arns = stack.notification_arns if notification_arns is None else notification_arns
        blueprint = self.prepare(body, parameters, stack.parameters, stack.name, stack.stack_id, arns)
        _refuse_secure_references(blueprint)
        new_tags = dict(stack.tags) if tags is None else tags
        current = self.engine.blueprints.get(stack.stack_id)
        same_ssm = blueprint.same_ssm_values(current)
        plan = plan_update(stack.resources, current, blueprint, self.engine.provisioners)
        unchanged = body == stack.template_body and blueprint.parameters == stack.parameters and new_tags == stack.tags and same_ssm
        if unchanged and not plan.nested_templates_changed():
            raise StackError("No updates are to be performed.")
        policy = policy_during_update or policy_of(stack.policy_body)
        stack.change_set_id = self._change_set_arn(f"{stack.name}-update")  # so does UpdateStack
        failures = [] if disable_validation else self._validated(plan, stack)
        self._begin(stack, "UPDATE_STACK", failures)
        if failures:
            refuse(stack, "UPDATE", failed_reason(failures), token)
            return stack
        self.tokens.started("UpdateStack", stack, token)
        stack.disable_rollback = disable_rollback
        self._start(stack, self.engine.update(stack, plan, blueprint.parameters, new_tags, token, policy=policy))
        return stack

    def delete_stack(self, name: str, retain: Tuple[str, ...] = (), token: Optional[str] = None) -> None:
        stack = self.find(name)
        if stack is not None and self.tokens.retried("DeleteStack", name, token) is stack:
            return  # a retry of the delete under way
        if stack is None or stack.status == "DELETE_COMPLETE":
            return  # the service answers a delete of a missing stack with success
        if stack.termination_protection:
            raise StackError(f"Stack [{stack.name}] cannot be deleted while TerminationProtection is enabled")
        if not stack.settled:
            raise StackError(f"Stack [{stack.name}] is in {stack.status} state and can not be deleted")
        if retain and stack.status != "DELETE_FAILED":
            raise StackError(
                "Invalid operation on stack: RetainResources is only valid for a stack in DELETE_FAILED state"
            )
        unknown = [r for r in retain if r not in stack.resources]
        if unknown:
            raise StackError(f"The specified resources to retain [{', '.join(unknown)}] do not exist in the stack")
        self._begin(stack, "DELETE_STACK")
        self.tokens.started("DeleteStack", stack, token)
        self._start(stack, self.engine.delete(stack, frozenset(retain), token))

    def cancel_update(self, name: str) -> None:
        stack = self.get(name)
        if stack.status != "UPDATE_IN_PROGRESS":
            raise StackError(f"CancelUpdateStack cannot be called from current stack status {stack.status}")
        self.engine.cancel_update(stack)

    def continue_update_rollback(self, name: str, skip: Tuple[str, ...] = (), force: bool = False) -> None:
        """``force`` (ForceRollback): skip every resource the failed rollback left UPDATE_FAILED, as if each were named in
        ResourcesToSkip (botocore's model documents it so)."""
        stack = self.get(name)
        if stack.status != "UPDATE_ROLLBACK_FAILED":
            raise StackError(f"Stack {stack.stack_id} is in {stack.status} state and can not continue update rollback")
        if force:
            skip = tuple(r.logical_id for r in stack.resources.values() if r.status == "UPDATE_FAILED")
        self._begin(stack, "CONTINUE_ROLLBACK")
        self._start(stack, self.engine.continue_update_rollback(stack, frozenset(skip)))

    def rollback_stack(self, name: str, token: Optional[str] = None, retain_except_on_create: Optional[bool] = None) -> Stack:
        """RollbackStack: a stack whose create or update failed with rollback disabled goes back to its last stable state."""
        stack = self.get(name)
        if stack.status not in ROLLBACK_FROM:
            raise StackError(f"Stack {stack.stack_id} is in {stack.status} state and can not be rolled back")
        self._begin(stack, "ROLLBACK")
        self._start(stack, self.engine.roll_back(stack, token, bool(retain_except_on_create)))
        return stack

    # -- change sets ---------------------------------------------------------------------------

    def create_change_set(
        self,
        stack_name: str,
        name: str,
        change_set_type: str,
        template_body: Optional[str],
        parameters: Dict[str, Optional[str]],
        tags: Optional[Dict[str, str]],
        description: Optional[str] = None,
        resources_to_import: Optional[List[Dict[str, Any]]] = None,
        disable_validation: bool = False,
        refused: Optional[str] = None,
        notification_arns: Optional[Sequence[str]] = None,
        actual: Optional[Callable[[Stack], Awaitable[Mapping[str, ActualState]]]] = None,
        import_existing: bool = False,
    ) -> ChangeSet:
        """``resources_to_import``: an IMPORT change set's ResourcesToImport (``imports.py``). ``refused``: the template could
        not be processed (a failing macro): the change set is FAILED with this reason, and has no changes.
        ``notification_arns``: the NotificationARNs given (None: the stack's). ``actual``: a drift-aware change set's
        (DeploymentMode REVERT_DRIFT) READs of each existing resource, made while it is CREATE_IN_PROGRESS (the service
        answers CreateChangeSet at once); its plan is made against what they found. ``import_existing``: ImportExistingResources
        (``auto_imports.py``)."""
        if not CHANGE_SET_NAME.match(name):
            raise StackError(f"ChangeSet name {name!r} must match [a-zA-Z][-a-zA-Z0-9]*")
        stack = self.find(stack_name)
        made_here = stack is None  # a new stack in REVIEW_IN_PROGRESS, dropped again if its import is refused
        if change_set_type == "CREATE" or (change_set_type == IMPORT and (stack is None or stack.status == "REVIEW_IN_PROGRESS")):
            if stack is not None and stack.status != "REVIEW_IN_PROGRESS":
                raise StackError(f"Stack [{stack_name}] already exists and cannot be created again with the changeSet [{name}].", "AlreadyExistsException")
            if stack is None:
                if template_body is None:
                    raise StackError("A template must be given for a change set of type CREATE")
                stack = self._new_stack(stack_name, template_body, parameters, tags or {}, False)
                stack.status = "REVIEW_IN_PROGRESS"
                self._keep(stack)
                stack.record(stack.name, stack.stack_id, "AWS::CloudFormation::Stack", "REVIEW_IN_PROGRESS", "User Initiated")
            previous_parameters: Dict[str, str] = {}
        else:
            if stack is None:
                raise StackError(f"Stack [{stack_name}] does not exist")
            self._require_status(stack, UPDATABLE, "updated")
            self._require_kept(stack, parameters)
            previous_parameters = stack.parameters
        same_name = [c for c in self.change_sets.values() if c.stack_id == stack.stack_id and c.name == name]
        if any(c.execution_status not in EXECUTED for c in same_name):
            raise StackError(f"ChangeSet {name} already exists", "AlreadyExistsException")
        for executed in same_name:  # an executed change set's name can be used again: the new one takes its place
            del self.change_sets[executed.change_set_id]
        body = template_body if template_body is not None else stack.template_body
        if refused is not None:
            return self._refused_change_set(stack, name, change_set_type, body, parameters, tags, description, refused)
        arns = stack.notification_arns if notification_arns is None else notification_arns
        blueprint = self.prepare(body, parameters, previous_parameters, stack.name, stack.stack_id, arns)
        current = self.engine.blueprints.get(stack.stack_id)
        try:
            plan = (
                plan_import(stack, current, blueprint, resources_to_import or [], self.engine.provisioners)
                if change_set_type == IMPORT
                else plan_update(stack.resources, current, blueprint, self.engine.provisioners, None)
            )
        except ImportProblem as problem:
            if made_here:
                del self.stacks[stack.stack_id]
                if self.database is not None:
                    self.database.drop(stack.stack_id)
            raise StackError(str(problem)) from None
        change_set = ChangeSet(
            change_set_id=self._change_set_arn(name),
            name=name,
            stack_id=stack.stack_id,
            change_set_type=change_set_type,
            plan=plan,
            parameters=blueprint.parameters,
            tags=dict(stack.tags) if tags is None else tags,
            description=description,
        )
        if actual is not None:
            change_set.deployment_mode = REVERT_DRIFT
        self.change_sets[change_set.change_set_id] = change_set
        self.log.change_set_operations[change_set.change_set_id] = str(uuid.uuid4())
        change_set.import_existing_resources = import_existing
        if actual is None:  # else once the READs are made: the plan is made again against them
            self._judge_plan(change_set, stack, disable_validation)
        wanted = self._to_import(change_set) if actual is None else {}
        if change_set.status != "FAILED" and (actual is not None or wanted or self.engine.hooks is not None):
            change_set.status, change_set.execution_status = "CREATE_IN_PROGRESS", "UNAVAILABLE"
            finish = self._finish_change_set(change_set, stack, wanted, actual, disable_validation)
            self._tasks[change_set.change_set_id] = asyncio.ensure_future(finish)
        return change_set

    def _judge_plan(self, change_set: ChangeSet, stack: Stack, disable_validation: bool) -> None:
        """A plan that changes nothing, a template with a secure reference where none may be, or failures of the
        pre-deployment validation make the change set FAILED, in the service's words."""
        blueprint = change_set.plan.blueprint
        unchanged = blueprint.parameters == stack.parameters and blueprint.same_ssm_values(self.engine.blueprints.get(stack.stack_id))
        if not change_set.plan.changes and change_set.change_set_type == "UPDATE" and change_set.tags == stack.tags and unchanged:
            change_set.status, change_set.execution_status = "FAILED", "UNAVAILABLE"
            change_set.status_reason = "The submitted information didn't contain changes. Submit different information to create a change set."
        secure_problem = secure_reference_problem(blueprint.template)
        if secure_problem is not None:  # the service makes such a change set FAILED, its reason naming each place
            change_set.status, change_set.execution_status, change_set.status_reason = "FAILED", "UNAVAILABLE", secure_problem
        failures = [] if disable_validation or change_set.status == "FAILED" else self._validated(change_set.plan, stack)
        if failures:  # a change set the validation stops cannot be executed
            operation_id = self.log.change_set_operations[change_set.change_set_id]
            self.log.validated(stack.stack_id, operation_id, "CREATE_CHANGESET", failures)
            change_set.status, change_set.execution_status, change_set.status_reason = "FAILED", "UNAVAILABLE", failed_reason(failures)

    def _to_import(self, change_set: ChangeSet) -> Dict[str, auto_imports.Identifier]:
        """ImportExistingResources' candidates of the change set's plan."""
        if not change_set.import_existing_resources:
            return {}
        return auto_imports.candidates(change_set.plan, self.engine.provisioners, self.stacks.values())

    async def _finish_change_set(
        self, change_set: ChangeSet, stack: Stack, wanted: Dict[str, auto_imports.Identifier],
        actual: Optional[Callable[[Stack], Awaitable[Mapping[str, ActualState]]]], disable_validation: bool,
    ) -> None:
        try:
            await self._make_ready(change_set, stack, wanted, actual, disable_validation)
        finally:
            self.sync_change_sets()

    async def _make_ready(
        self, change_set: ChangeSet, stack: Stack, wanted: Dict[str, auto_imports.Identifier],
        actual: Optional[Callable[[Stack], Awaitable[Mapping[str, ActualState]]]], disable_validation: bool,
    ) -> None:
        """What a change set waits for before it can be executed: a drift-aware one's READs of the stack's resources
        (``drift_aware.py``) and its plan made again against what they found, the READs of the resources it may import
        (ImportExistingResources, ``auto_imports.py``), then its CHANGE_SET hooks."""
        if actual is not None:
            try:
                found = await actual(stack)
            except Exception as error:  # noqa: B902 - a change set never stays CREATE_IN_PROGRESS because cfnrun failed
                change_set.status = "FAILED"
                change_set.status_reason = f"cfnrun failed reading the stack's resources: {type(error).__name__}: {error}"
                return
            blueprint = change_set.plan.blueprint
            current = self.engine.blueprints.get(stack.stack_id)
            change_set.plan = plan_update(stack.resources, current, blueprint, self.engine.provisioners, found)
            change_set.stack_drift_status = drift_aware.stack_status(found)
            self._judge_plan(change_set, stack, disable_validation)
            if change_set.status == "FAILED":
                return
            wanted = self._to_import(change_set)
        if wanted:
            context = self.engine.context(stack, change_set.blueprint)
            try:
                change_set.plan = await auto_imports.with_existing_imported(change_set.plan, wanted, self.engine.provisioners, context)
            except Exception as error:  # noqa: B902 - a change set never stays CREATE_IN_PROGRESS because cfnrun failed
                change_set.status = "FAILED"
                change_set.status_reason = f"cfnrun failed looking for the resources to import: {type(error).__name__}: {error}"
                return
        if self.engine.hooks is not None:
            await self._change_set_hooks(change_set, stack)
        else:
            _complete(change_set)

    def _refused_change_set(
        self, stack: Stack, name: str, change_set_type: str, body: str, parameters: Dict[str, Optional[str]],
        tags: Optional[Dict[str, str]], description: Optional[str], reason: str,
    ) -> ChangeSet:
        """A change set whose template could not be processed: FAILED, no changes; its blueprint only shows the template as sent."""
        unprocessed = replace(self.prepare(UNPROCESSED, {}, {}, stack.name, stack.stack_id), template_body=body)
        given = {key: stack.parameters.get(key, "") if value is None else value for key, value in parameters.items()}
        change_set = ChangeSet(
            self._change_set_arn(name), name, stack.stack_id, change_set_type, ChangePlan(unprocessed, {}), given,
            dict(stack.tags) if tags is None else tags, description, status="FAILED", status_reason=reason, execution_status="UNAVAILABLE",
        )
        self.change_sets[change_set.change_set_id] = change_set
        return change_set

    def refused_create(
        self, name: str, template_body: str, tags: Dict[str, str], reason: str, disable_rollback: bool = False, token: Optional[str] = None,
    ) -> Stack:
        """A CreateStack whose template could not be processed (a failing macro): the stack is made and rolled back at once,
        ``reason`` on its ROLLBACK_IN_PROGRESS event (CREATE_FAILED with DisableRollback); no resource is touched."""
        retried = self.tokens.retried("CreateStack", name, token)
        if retried is not None:
            return retried
        stack = self._new_stack(name, template_body, {}, tags, disable_rollback)
        self.tokens.started("CreateStack", stack, token)
        self._keep(stack)
        self._begin(stack, "CREATE_STACK")
        # the service's ROLLBACK_IN_PROGRESS reason is the macro's failure, then ". Rollback requested by user." (as
        # LocalStack's tests recorded against AWS show it, test_template_engine's test_failed_state)
        refuse(stack, "CREATE", reason if disable_rollback else f"{reason}. Rollback requested by user.", token)
        return stack

    def _change_set_arn(self, name: str) -> str:
        return f"arn:aws:cloudformation:{self.engine.region}:{self.engine.account_id}:changeSet/{name}/{uuid.uuid4()}"

    async def _change_set_hooks(self, change_set: ChangeSet, stack: Stack) -> None:
        """The CHANGE_SET hooks judge the change set as it is created: a refusal makes it FAILED with their reasons."""
        assert self.engine.hooks is not None
        try:
            before = {r.logical_id: r.properties for r in stack.resources.values() if r.exists and r.properties is not None}
            deployed = self.engine.blueprints.get(stack.stack_id)
            target = HookedOperation(
                self.engine.context(stack, change_set.blueprint),
                CHANGE_SET_ACTION,  # whatever the change set's type: the hook judges its creation
                change_set.change_set_id,
                CHANGE_SET_TARGET,
                {},
                operation=CHANGE_SET_TARGET,
                model=change_set_model(change_set.blueprint.template_body, change_set.changes, before),
                change_set_id=change_set.change_set_id,
                target_id=change_set.change_set_id,
                previous_template=deployed.template_body if deployed is not None else None,
            )
            refused = await self.engine.hooks.before(target, change_set.hook_results.append)
        except Exception as error:  # noqa: B902 - a change set never stays CREATE_IN_PROGRESS because cfnrun failed
            refused = f"cfnrun failed running the change set's hooks: {type(error).__name__}: {error}"
        if refused is None:
            _complete(change_set)
            return
        change_set.status, change_set.status_reason = "FAILED", with_reasons(refused, change_set.hook_results)

    def execute_change_set(self, name_or_id: str, stack_name: Optional[str], token: Optional[str] = None,
                           disable_rollback: Optional[bool] = None, from_root: bool = False) -> None:
        """``from_root``: a nested change set, executed as its root's execution reaches its stack; ``disable_rollback``:
        ExecuteChangeSet's DisableRollback, None when not given (the change set's OnStackFailure then decides)."""
        change_set = self.change_set(name_or_id, stack_name)
        _require_root(change_set, "executed", from_root)
        if change_set.on_stack_failure is not None and disable_rollback is not None:
            raise StackError(BOTH_ON_STACK_FAILURE_AND_DISABLE_ROLLBACK)
        if change_set.execution_status != "AVAILABLE":
            raise StackError(
                f"ChangeSet [{change_set.change_set_id}] cannot be executed in its current execution status of [{change_set.execution_status}]",
                "InvalidChangeSetStatus",
            )
        if change_set.unexecutable is not None:
            raise StackError(
                f"ChangeSet [{change_set.change_set_id}] cannot be executed: it was read back from --state after cfnrun serve "
                f"restarted, without {change_set.unexecutable}; create the change set again",
                "InvalidChangeSetStatus",
            )
        stack = self.stacks[change_set.stack_id]
        creating = stack.status == "REVIEW_IN_PROGRESS"
        if not creating:  # checked before anything changes: a refused execution leaves the change set executable
            self._require_status(stack, UPDATABLE, "updated")
        change_set.execution_status = "EXECUTE_IN_PROGRESS"
        if disable_rollback is None and "DisableRollback" in change_set.deployment_config:
            disable_rollback = bool(change_set.deployment_config["DisableRollback"])  # the change set's, unless the execution says
        stack.disable_rollback = bool(disable_rollback) or change_set.on_stack_failure == "DO_NOTHING"
        if change_set.deployment_config:
            stack.deployment_config = dict(change_set.deployment_config)
        stack.delete_on_failure = change_set.on_stack_failure == "DELETE"  # a CREATE change set's only
        stack.capabilities = change_set.capabilities  # what its nested stacks are created or updated with
        stack.notification_arns, stack.rollback_configuration = change_set.notification_arns, change_set.rollback_configuration
        stack.role_arn = change_set.role_arn
        if creating:
            stack.parameters, stack.no_echo = change_set.parameters, change_set.blueprint.no_echo
            stack.description = change_set.blueprint.description
        if change_set.change_set_type == IMPORT:
            run = self._import(stack, change_set.plan, token)
        elif change_set.change_set_type == "CREATE":
            run = self.engine.create(stack, change_set.plan, token, change_set.skips_stack_hooks)
        else:
            run = self.engine.update(
                stack, change_set.plan, change_set.parameters, change_set.tags, token, change_set.skips_stack_hooks, policy=policy_of(stack.policy_body)
            )
        stack.change_set_id = change_set.change_set_id
        self._begin(stack, "CREATE_STACK" if creating or change_set.change_set_type == "CREATE" else "UPDATE_STACK")
        self._start(stack, self._executing(change_set, stack, run))
        for other in [c for c in self.change_sets.values() if c.stack_id == stack.stack_id and c is not change_set]:
            del self.change_sets[other.change_set_id]  # executing one change set deletes the stack's others, as the service does
        self.sync_change_sets()

    async def _executing(self, change_set: ChangeSet, stack: Stack, run: Awaitable[None]) -> None:
        self.engine.executing_change_sets[stack.stack_id] = change_set.change_set_id
        try:
            await run
        finally:
            self.engine.executing_change_sets.pop(stack.stack_id, None)
            ok = stack.status in ("CREATE_COMPLETE", "UPDATE_COMPLETE", "IMPORT_COMPLETE")
            change_set.execution_status = "EXECUTE_COMPLETE" if ok else "EXECUTE_FAILED"
            self.sync_change_sets()

    async def _import(self, stack: Stack, plan: ChangePlan, token: Optional[str]) -> None:
        if await execute_import(stack, plan, self.engine.provisioners, self.engine.context(stack), token):
            self.engine.blueprints[stack.stack_id] = plan.blueprint

    def delete_change_set(self, name_or_id: str, stack_name: Optional[str], from_root: bool = False) -> None:
        change_set = self.change_set(name_or_id, stack_name)
        _require_root(change_set, "deleted", from_root)
        if change_set.execution_status == "EXECUTE_IN_PROGRESS":
            raise StackError(f"ChangeSet [{change_set.change_set_id}] is being executed and cannot be deleted", "InvalidChangeSetStatus")
        del self.change_sets[change_set.change_set_id]
        for nested in change_set.nested_change_sets.values():  # a change set's nested ones go with it
            if nested in self.change_sets and self.change_sets[nested].execution_status != "EXECUTE_IN_PROGRESS":
                self.delete_change_set(nested, None, from_root=True)
        self.sync_change_sets()

    def property_values(self, change_set: ChangeSet) -> "MaskedValues":
        """A change's values as IncludePropertyValues shows them: writeOnly values masked by their provisioner, the
        values of NoEcho parameters (the change set's and the stack's) masked."""
        return MaskedValues(self.engine.provisioners, change_set, self.stacks[change_set.stack_id])

    def change_sets_of(self, stack_name: str) -> List[ChangeSet]:
        stack = self.get(stack_name)
        return [c for c in self.change_sets.values() if c.stack_id == stack.stack_id]

    # -- stack refactors (``refactors.py``) -----------------------------------------------------

    def create_refactor(
        self, definitions: Sequence[Tuple[str, str]], mappings: Sequence[Dict[str, Any]], enable_creation: bool, description: Optional[str],
    ) -> StackRefactor:
        """``definitions``: (stack name, template body) of each stack. A refactor the service would not make is kept
        CREATE_FAILED with the reason, as the service reports it; a call it would refuse outright raises StackError."""
        definitions = [(self._name_of(name), body) for name, body in definitions]  # a stack may be named by its ARN
        mappings = [{end: {**(m.get(end) or {}), "StackName": self._name_of(str((m.get(end) or {}).get("StackName")))}
                     for end in ("Source", "Destination")} for m in mappings]
        names = [name for name, _ in definitions]
        if not 1 <= len(names) <= MAX_STACKS:
            raise StackError(f"StackDefinitions must name between 1 and {MAX_STACKS} stacks")
        if len(set(names)) != len(names):
            raise StackError("StackDefinitions name a stack more than once")
        stacks = {name: self.find(name) for name in names}
        refactor = StackRefactor(new_refactor_id(), description, {}, tuple(n for n, s in stacks.items() if s is None))
        refactor.stack_ids = {name: stack.stack_id if stack is not None else self.new_stack_id(name) for name, stack in stacks.items()}
        refactor.operations = {s.stack_id: s.operation_id for s in stacks.values() if s is not None}
        self.refactors[refactor.refactor_id] = refactor
        try:
            if refactor.created and not enable_creation:
                raise RefactorProblem(f"Stack [{refactor.created[0]}] does not exist: set EnableStackCreation to have the refactor create it")
            for name, body in definitions:
                stack = stacks[name]
                previous = stack.parameters if stack is not None else {}
                arns = stack.notification_arns if stack is not None else ()
                refactor.blueprints[name] = self.prepare(body, {key: None for key in previous}, previous, name, refactor.stack_ids[name], arns)
            now = {name: self.engine.blueprints.get(s.stack_id) if s is not None else None for name, s in stacks.items()}
            refactor.moves = plan_refactor(stacks, now, refactor.blueprints, mappings)
        except (RefactorProblem, TemplateError) as problem:
            refactor.failed(str(problem))
        self.kept_refactors.sync(self.refactors, self.stacks)
        return refactor

    def _name_of(self, name_or_id: str) -> str:
        stack = self.find(name_or_id)
        return stack.name if stack is not None else name_or_id

    def refactor(self, refactor_id: str) -> StackRefactor:
        """The refactor a call names (AVAILABLE ones made OBSOLETE by an operation of one of their stacks since)."""
        refactor = self.refactors.get(refactor_id)
        if refactor is None:
            raise StackError(f"Stack refactor [{refactor_id}] does not exist", "StackRefactorNotFoundException", 404)
        if refactor.execution_status == "AVAILABLE":
            moved_on = [i for i, operation in refactor.operations.items() if self.stacks[i].operation_id != operation]
            if moved_on or any(self.find(name) is not None for name in refactor.created):
                refactor.execution_status = "OBSOLETE"
                refactor.execution_status_reason = "A stack of the refactor changed since the refactor was created"
        return refactor

    def execute_refactor(self, refactor_id: str) -> None:
        """Carry a refactor out: each stack an operation of its own (a stack it creates CREATE_STACK, the others
        UPDATE_STACK), their resources re-homed, and all of it written to ``--state`` in one transaction, so that a
        process killed at any point leaves every resource in the records as before, or as after."""
        refactor = self.refactor(refactor_id)
        if refactor.status != "CREATE_COMPLETE" or refactor.execution_status != "AVAILABLE":
            raise StackError(f"Stack refactor [{refactor_id}] cannot be executed in its current execution status of [{refactor.execution_status}]")
        if refactor.unexecutable is not None:
            raise StackError(f"Stack refactor [{refactor_id}] cannot be executed: it was read back from --state after cfnrun serve "
                             f"restarted, without {refactor.unexecutable}; create the stack refactor again")
        existing = {name: self.stacks[stack_id] for name, stack_id in refactor.stack_ids.items() if name not in refactor.created}
        for stack in existing.values():
            self._require_status(stack, UPDATABLE, "updated")
        refactor.execution_status = "EXECUTE_IN_PROGRESS"
        with self.database.one_transaction() if self.database is not None else contextlib.nullcontext():
            stacks: Dict[str, Stack] = {}
            for name, stack_id in refactor.stack_ids.items():
                if name in refactor.created:
                    stack = stacks[name] = self._new_stack(name, refactor.blueprints[name].template_body, {}, {}, False, stack_id)
                    self._keep(stack)
                    self._begin(stack, "CREATE_STACK")
                    stack.set_status("CREATE_IN_PROGRESS", "User Initiated")
                else:
                    stack = stacks[name] = existing[name]
                    self._begin(stack, "UPDATE_STACK")
                    stack.set_status("UPDATE_IN_PROGRESS", "User Initiated")
            rehome(refactor, stacks)
            for name, stack in stacks.items():
                self.engine.blueprints[stack.stack_id] = blueprint = refactor.blueprints[name]
                stack.parameters, stack.no_echo = blueprint.parameters, blueprint.no_echo
            problems = self._publish_all(stacks, refactor.blueprints)
            for name, stack in stacks.items():
                stack.updated_at = None if name in refactor.created else time.time()
                stack.set_status("CREATE_COMPLETE" if name in refactor.created else "UPDATE_COMPLETE")
            refactor.execution_status = "EXECUTE_COMPLETE"
            refactor.execution_status_reason = "; ".join(f"[{name}] {problem}" for name, problem in problems.items()) or None
            self.kept_refactors.sync(self.refactors, self.stacks)  # with the stacks' records: all as before, or all as after

    def _publish_all(self, stacks: Dict[str, Stack], blueprints: Dict[str, Blueprint]) -> Dict[str, str]:
        """Each stack's outputs and exports from its new blueprint, in turns, so that an export moving from one stack to
        another is given up before it is taken; what still cannot be published, by stack name."""
        pending = dict(stacks)
        while True:
            problems = {name: self.engine.publish_outputs(stack, blueprints[name]) for name, stack in pending.items()}
            left = {name: problem for name, problem in problems.items() if problem is not None}
            if len(left) in (0, len(pending)):
                return left
            pending = {name: stacks[name] for name in left}

    # -- running -------------------------------------------------------------------------------

    @staticmethod
    def _require_status(stack: Stack, allowed: "frozenset[str]", verb: str) -> None:
        if stack.status not in allowed:
            raise StackError(f"Stack:{stack.stack_id} is in {stack.status} state and can not be {verb}.")

    def _start(self, stack: Stack, run: Awaitable[None]) -> None:
        async def guarded() -> None:
            try:
                await run
            except OperationStopped:  # serve stops: the operation ends where it is, as recorded (``in_flight.py``)
                self.save(stack)
            except Exception as error:  # noqa: B902 - a stack never stays IN_PROGRESS because cfnrun failed
                stack.set_status(_failed_status(stack.status), f"cfnrun failed running the stack operation: {type(error).__name__}: {error}")

        self._tasks[stack.stack_id] = asyncio.ensure_future(guarded())

    async def settled(self, name_or_id: str) -> Stack:
        stack = self.get(name_or_id)
        task = self._tasks.get(stack.stack_id)
        if task is not None:
            await asyncio.shield(task)
        return stack

    async def change_set_settled(self, name_or_id: str, stack_name: Optional[str] = None) -> ChangeSet:
        """The change set once its CHANGE_SET hooks have judged it."""
        change_set = self.change_set(name_or_id, stack_name)
        task = self._tasks.get(change_set.change_set_id)
        if task is not None:
            await asyncio.shield(task)
        return change_set

    async def close(self, timeout_s: float) -> None:
        """On stop: stack operations in flight get ``timeout_s`` to finish, then they are cancelled."""
        await finish_or_cancel(list(self._tasks.values()), timeout_s)
        if self.database is not None:
            self.database.close()


@dataclass
class MaskedValues:
    """``changes.PropertyValues`` for one change set: what its provisioners and NoEcho parameters let be shown."""

    provisioners: Provisioners
    change_set: ChangeSet
    stack: Stack

    def context(self, type_name: str, properties: Dict[str, Any]) -> str:
        return self._masked(json.dumps({"Properties": self._shown(type_name, properties)}, sort_keys=True, default=str))

    def value(self, type_name: str, detail: ChangeDetail, value: Any) -> str:
        if detail.name is not None:
            value = self._shown(type_name, {detail.name: value}).get(detail.name)
        return self._masked(value_text(value))

    def _shown(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        try:
            return self.provisioners.for_type(type_name).shown(type_name, properties)
        except NoProvisioner:
            return {}

    def _masked(self, text: str) -> str:
        for name in self.change_set.blueprint.no_echo:
            value = self.change_set.parameters.get(name)
            if value:
                text = text.replace(value, NO_ECHO_MASK)
        return self.stack.masked(text)


def _require_root(change_set: ChangeSet, verb: str, from_root: bool) -> None:
    """A nested change set is executed and deleted from its root change set only, as the service requires."""
    if change_set.parent_change_set_id is not None and not from_root:
        raise StackError(f"ChangeSet [{change_set.change_set_id}] is a nested change set: it is {verb} with its root change set "
                         f"[{change_set.root_change_set_id}]")


def _failed_status(status: str) -> str:
    for start, failed in (
        ("UPDATE_ROLLBACK", "UPDATE_ROLLBACK_FAILED"),
        ("ROLLBACK", "ROLLBACK_FAILED"),
        ("UPDATE", "UPDATE_ROLLBACK_FAILED"),
        ("DELETE", "DELETE_FAILED"),
    ):
        if status.startswith(start):
            return failed
    return "CREATE_FAILED"


def _refuse_secure_references(blueprint: Blueprint) -> None:
    """CreateStack and UpdateStack refuse ssm-secure where the service does not take it (a ValidationError: inferred,
    as a change set's FAILED reason is what users quote)."""
    problem = secure_reference_problem(blueprint.template)
    if problem is not None:
        raise StackError(problem)


def _complete(change_set: ChangeSet) -> None:
    """A change set made: it can be executed, unless its stack changed meanwhile."""
    change_set.status = "CREATE_COMPLETE"
    if change_set.execution_status != "OBSOLETE":
        change_set.execution_status = "AVAILABLE"
