"""Carry out a stack's change plan, and its delete, as the service does, on the provisioners the app gives.

A create or an update executes a ``ChangePlan`` (``plan.py``) step for step: it adds the Adds,
replaces exactly what the plan replaces, updates the other Modifies in place and deletes the
Removes in the cleanup phase; it never decides a replacement of its own. Resources go in dependency order, independent ones at the same time (``ordering.py``). Each
resource's properties are resolved once what it references exists (``Blueprint.properties``),
checked by its provisioner, then provisioned; every step is a stack event with the service's
status and reason. A failure rolls back: a create deletes what it made, an update puts the
updated resources back and deletes what it added. Nothing here knows about handlers or AWS:
the provisioners do.
"""
from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass, field, replace
from typing import AbstractSet, Any, Awaitable, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from cfnrun.stacks.blueprint import Blueprint, TemplateProblem
from cfnrun.stacks.cancellation import CANCELLED, Cancellation
from cfnrun.model.random_ids import random_uuid
from cfnrun.stacks.template.declarations import is_custom_resource
from cfnrun.stacks.template.policies import keeps_resource
from cfnrun.stacks.exports import ExportConflict, Exports
from cfnrun.stacks.in_flight import STOPPED, InFlight, OperationStopped
from cfnrun.stacks.persistence import RolledBackTo
from cfnrun.stacks.hooks import INVOCATION_POINT, STACK_TARGET, HookGate, HookReport, HookedOperation, stack_model, verdict_reason
from cfnrun.stacks.imports import import_resource
from cfnrun.stacks.interrupted_update import REPLACING, interrupted_update
from cfnrun.stacks.unanswered_creates import ask_again
from cfnrun.stacks.ordering import Step, reverse, run_in_order
from cfnrun.stacks.drift_aware import SYNC_WITH_ACTUAL
from cfnrun.stacks.plan import ChangePlan, ResourceChange, changed_properties, known_properties
from cfnrun.stacks.provisioning import (
    AttributeReader,
    ProvisioningFailed,
    Provisioned,
    Provisioner,
    Provisioners,
    ResourceWork,
    StackContext,
    NoProvisioner,
)
from cfnrun.stacks.records import Stack, StackOutput, StackResource, mask_values
from cfnrun.stacks.signals import ResourceSignals, SignalProblem, resource_signal_policy
from cfnrun.stacks.stack_policy import StackPolicy, refusals
from cfnrun.stacks.validation import VALIDATION_FAILED, missing_parameter_value, unsupported_attribute

HOOK_REASON_LIMIT = 1024  # HookStatusReason, as the API bounds it
CREATION_INITIATED = "Resource creation Initiated"  # the second CREATE_IN_PROGRESS, once the handler is called
# A created resource's CREATE_IN_PROGRESS once hooks have judged it and let it through (the Hooks user guide's testing and
# invocation pages: its two spaces are the service's). An update's or a delete's counterpart is not published: none is written.
HOOKS_COMPLETE = "Hook invocations complete.  Resource creation initiated"


@dataclass
class Revision:
    """What an update starts from, so that a rollback can return to it."""

    blueprint: Blueprint
    resources: Dict[str, StackResource]
    outputs: List[StackOutput]
    parameters: Dict[str, str]
    tags: Dict[str, str]


@dataclass
class UpdateRun:
    """The state of one update, kept for its rollback and for ContinueUpdateRollback."""

    before: Revision
    after: Optional[Blueprint] = None  # the template the update goes to: its dependencies order a rollback's deletes
    added: Set[str] = field(default_factory=set)  # created by this update: deleted if it rolls back
    imported: Set[str] = field(default_factory=set)  # imported by this update (ImportExistingResources): let go if it rolls back
    updated: Set[str] = field(default_factory=set)  # updated in place: put back if it rolls back
    replaced: Dict[str, StackResource] = field(default_factory=dict)  # the old resource of each replacement
    cancelled: bool = False  # CancelUpdateStack
    cancellation: Cancellation = field(default_factory=Cancellation)  # the resource operations in flight (``cancellation.py``)
    retain_except_on_create: bool = False  # RollbackStack's RetainExceptOnCreate: what the update added goes, Retain or not


class StackEngine:
    def __init__(
        self, provisioners: Provisioners, exports: Exports, region: str, account_id: str, hooks: Optional[HookGate] = None,
        signals: Optional[ResourceSignals] = None,
    ) -> None:
        self.provisioners = provisioners
        self.signals = signals or ResourceSignals()  # what resources with a CreationPolicy wait for (``signals.py``)
        self.hooks = hooks  # run before each resource is provisioned (PRE_PROVISION), when any are configured
        self.exports = exports
        self.region = region
        self.account_id = account_id
        self.blueprints: Dict[str, Blueprint] = {}  # each stack's current template, by stack id
        self.updates: Dict[str, UpdateRun] = {}  # each stack's last update, by stack id
        # by stack id: what an update read back after a restart (in flight, or UPDATE_FAILED) rolls back to (``persistence.py``)
        self.rolled_back_to: Dict[str, RolledBackTo] = {}
        # the change set each stack is executing, by stack id: its hooks' requests name it (changeSetId, the Hooks user guide)
        self.executing_change_sets: Dict[str, str] = {}
        # told of each resource right after its DELETE_COMPLETE, before what it depends on is deleted (``cfnrun stack test``
        # asks it whether it is gone while, say, the table an item was in still exists)
        self.on_deleted: Optional[Callable[[Stack, StackResource], Awaitable[None]]] = None
        self.in_flight = InFlight()  # each IN_PROGRESS answer kept as it arrives (``in_flight.py``); the store gives --state's
        self.stopped: Optional[str] = None  # why serve stops: no resource operation starts from then on (``in_flight.py``)

    # -- create ----------------------------------------------------------------------------

    async def create(self, stack: Stack, plan: ChangePlan, token: Optional[str] = None, skip_hooks: FrozenSet[str] = frozenset()) -> None:
        """Create the stack by its plan (every resource an Add); ``skip_hooks``: STACK hooks its change set's hooks said
        need not run again."""
        blueprint = plan.blueprint
        self.blueprints[stack.stack_id] = blueprint
        stack.set_status("CREATE_IN_PROGRESS", "User Initiated", token)
        for logical_id in blueprint.resource_ids():
            stack.resources[logical_id] = StackResource(logical_id, blueprint.type_of(logical_id), "NOT_STARTED")
        failed: List[str] = []
        cancellation = Cancellation()
        imported = plan.imported()  # ImportExistingResources: found, so imported rather than created (``auto_imports.py``)

        async def create_one(logical_id: str) -> bool:
            if logical_id in imported:
                ok = await import_resource(stack, blueprint, plan.of(logical_id), self.provisioners, self.context(stack), token)
            else:
                ok = await self._create(stack, blueprint, stack.resources[logical_id], token, cancellation)
            if not ok:
                failed.append(logical_id)
                cancellation.cancel(f"{logical_id} failed")
            return ok

        # the parameters and the template, checked as the operation starts
        invalid = await missing_parameter_value(blueprint) or unsupported_attribute(blueprint, self.provisioners)
        refused = invalid or await self._stack_hooks(stack, "CREATE", blueprint.template_body, None, token, skip_hooks)
        try:
            if refused is None:
                await self._in_order(blueprint.dependencies, create_one, stop=lambda: bool(failed))
        finally:  # serve stopping ends the create here too: what never started is in no record
            for resource in [r for r in stack.resources.values() if r.status == "NOT_STARTED"]:
                del stack.resources[resource.logical_id]
        problem = refused or (None if failed else self.publish_outputs(stack, blueprint))
        if not failed and problem is None:
            stack.set_status("CREATE_COMPLETE", None, token)
            return
        reason = problem or f"The following resource(s) failed to create: [{', '.join(sorted(failed))}]. "
        detail = VALIDATION_FAILED if invalid else None  # the event whose reason says where the template is wrong
        if stack.disable_rollback:
            stack.set_status("CREATE_FAILED", reason, token, detail)
            return
        # what the user is told was requested follows a failure of the template or its resources (the recorded
        # "[Error] …. Rollback requested by user."), never a hook's refusal or an output that could not be had
        requested = f"{invalid}. " if invalid else None if problem else reason
        if stack.delete_on_failure:
            await self._delete_failed_create(stack, blueprint, f"{requested}Delete requested by user." if requested else reason, token, detail, imported)
            return
        stack.set_status("ROLLBACK_IN_PROGRESS", f"{requested}Rollback requested by user." if requested else reason, token, detail)
        # what was imported was never this stack's to delete: it leaves the stack and stays
        ok = await self._delete_all(stack, blueprint, list(stack.resources), token, retain=imported, rolling_back_create=True)
        stack.set_status("ROLLBACK_COMPLETE" if ok else "ROLLBACK_FAILED", None if ok else "The following resource(s) failed to delete.", token)

    async def _delete_failed_create(
        self, stack: Stack, blueprint: Blueprint, reason: str, token: Optional[str], detail: Optional[str] = None,
        imported: FrozenSet[str] = frozenset(),
    ) -> None:
        """CreateStack's OnFailure DELETE: what the create made is deleted (what it imported stays), and then the stack
        itself (``detail``: the DetailedStatus of its first event)."""
        stack.set_status("DELETE_IN_PROGRESS", reason, token, detail)
        if not await self._delete_all(stack, blueprint, list(stack.resources), token, retain=imported, rolling_back_create=True):
            failed = sorted(r.logical_id for r in stack.resources.values() if r.status == "DELETE_FAILED")
            stack.set_status("DELETE_FAILED", f"The following resource(s) failed to delete: [{', '.join(failed)}]. ", token)
            return
        self.blueprints.pop(stack.stack_id, None)
        stack.deleted_at = time.time()
        stack.set_status("DELETE_COMPLETE", None, token)

    async def _create(
        self, stack: Stack, blueprint: Blueprint, resource: StackResource, token: Optional[str], cancellation: Optional[Cancellation] = None
    ) -> bool:
        try:
            provisioner = self.provisioners.for_type(resource.type_name)
            properties = blueprint.properties(resource.logical_id, stack.resources)
        except (TemplateProblem, NoProvisioner) as error:
            stack.set_resource_status(resource, "CREATE_FAILED", str(error), token=token)
            return False
        problem = provisioner.validate(resource.type_name, resource.logical_id, properties)
        shown = self._shown(stack, provisioner.shown(resource.type_name, properties))
        if problem is not None:
            stack.set_resource_status(resource, "CREATE_FAILED", problem, shown, token)
            return False
        work = self._work(stack, blueprint, resource, properties, token, cancellation)
        create = self._creating(stack, blueprint, resource, provisioner, work, properties, token)
        metadata = blueprint.resolved_metadata(resource.logical_id, stack.resources)
        return await self._provision(
            stack, resource, "CREATE", create, properties, None, shown, token, metadata=metadata, first_call=work, cancellation=cancellation
        )

    def _creating(
        self, stack: Stack, blueprint: Blueprint, resource: StackResource, provisioner: Provisioner, work: ResourceWork,
        properties: Dict[str, Any], token: Optional[str],
    ) -> Callable[[], Awaitable[Provisioned]]:
        """The provisioner's create of the resource, then — with a CreationPolicy — the wait for its signals (the made resource
        kept first: if they fail, the rollback deletes it)."""

        async def create() -> Provisioned:
            try:
                policy = resource_signal_policy(blueprint.declaration(resource.logical_id).creation_policy, blueprint.parameters)
            except SignalProblem as problem:
                raise ProvisioningFailed(str(problem)) from None
            made = await provisioner.create(work)
            if policy is not None:
                self._keep(resource, made, properties)
                await self.signals.wait_for_resource(
                    stack.stack_id, resource.logical_id, policy, lambda reason: stack.set_resource_status(resource, resource.status, reason, token=token)
                )
            return made

        return create

    async def _provision(
        self,
        stack: Stack,
        resource: StackResource,
        verb: str,
        call: Callable[[], Awaitable[Provisioned]],
        properties: Dict[str, Any],
        previous: Optional[Dict[str, Any]],
        shown: str,
        token: Optional[str],
        reason: Optional[str] = None,
        started: Callable[[], None] = lambda: None,
        metadata: Any = None,
        replacing: Optional[StackResource] = None,
        first_call: Optional[ResourceWork] = None,
        cancellation: Optional[Cancellation] = None,
        answered: Callable[[Provisioned], Provisioned] = lambda made: made,
    ) -> bool:
        """One resource through ``verb`` (CREATE or UPDATE): IN_PROGRESS, its hooks, the provisioner's ``call``, COMPLETE or FAILED.

        ``started`` runs once the hooks let it through, just before the call (an update notes what it changed);
        ``metadata``: the resource's resolved Metadata, kept once the call succeeds; ``replacing``: the resource a
        replacement's new one replaces (its first event names the old physical resource, as the service's does);
        ``first_call``: the work of a create whose resource no record names yet (or of a custom resource's Update, which may
        make one), written down before the call (``in_flight.py``);
        ``cancellation``: the stack operation's, which ends the resource ``{verb}_FAILED`` "Resource … cancelled" when
        another resource fails before this one is done (``cancellation.py``); ``answered``: what the stack keeps of the
        call's answer, worked out (and what it moves off written down) before the COMPLETE event saves the stack.
        """
        if replacing is not None:
            resource.status, resource.reason = f"{verb}_IN_PROGRESS", reason
            stack.record(resource.logical_id, replacing.physical_id or "", resource.type_name, resource.status, reason, shown, token)
        else:
            stack.set_resource_status(resource, f"{verb}_IN_PROGRESS", reason, shown, token)
        judged: List[HookReport] = []
        try:
            refused = await self._hooks(stack, resource, verb, properties, previous, token, judged.append)
        except OperationStopped:  # serve stopped while a hook ran: the resource stays as it is, never provisioned
            self._stopped_at(stack, resource, token)
            return False
        if refused is not None:
            stack.set_resource_status(resource, f"{verb}_FAILED", refused, shown, token)
            return False
        if self._stopped_at(stack, resource, token):
            return False
        if cancellation is not None and cancellation.cancelled:  # another resource failed while this one's hooks ran
            stack.set_resource_status(resource, f"{verb}_FAILED", CANCELLED[verb], shown, token)
            return False
        if judged and verb == "CREATE" and replacing is None:
            stack.set_resource_status(resource, resource.status, HOOKS_COMPLETE, token=token)
        started()
        if first_call is not None:
            updating = resource.physical_id if verb == "UPDATE" and replacing is None else None  # a custom resource's Update
            self.in_flight.calling(stack, resource, first_call.client_request_token, shown, properties, updating)
        if verb == "CREATE" or replacing is not None:  # a replacement's new resource too, as the service's events show it
            stack.set_resource_status(resource, f"{verb}_IN_PROGRESS", CREATION_INITIATED, shown, token)
        try:
            made = await call()
        except OperationStopped:
            if self.stopped is None and cancellation is not None and cancellation.cancelled:
                # another resource failed: what its calls made is known by now, if they named it, for the rollback to delete
                stack.set_resource_status(resource, f"{verb}_FAILED", CANCELLED[verb], shown, token)
                self.in_flight.called(stack, resource.logical_id)
                return False
            # serve stops: its first call, if it never named the resource, stays written down for the next serve
            self._stopped_at(stack, resource, token)
            return False
        except Exception as error:  # noqa: B902 - whatever a provisioner raises fails its resource, never the stack's bookkeeping
            if isinstance(error, ProvisioningFailed) and error.physical_id and resource.physical_id is None:
                # a failed create that named its physical resource: the rollback (or DeleteStack) deletes it
                resource.physical_id = resource.ref = error.physical_id
                resource.properties = properties
            stack.set_resource_status(resource, f"{verb}_FAILED", stack.masked(_reason(error)), shown, token)
            self.in_flight.called(stack, resource.logical_id)
            return False
        self._keep(resource, answered(made), properties)
        resource.metadata = metadata
        stack.set_resource_status(resource, f"{verb}_COMPLETE", None, shown, token)
        self.in_flight.called(stack, resource.logical_id)
        return True

    # -- update ----------------------------------------------------------------------------

    async def update(
        self,
        stack: Stack,
        plan: ChangePlan,
        parameters: Dict[str, str],
        tags: Dict[str, str],
        token: Optional[str] = None,
        skip_hooks: FrozenSet[str] = frozenset(),
        policy: Optional[StackPolicy] = None,
    ) -> None:
        """Update the stack by its plan: replace what it replaces, update the rest in place, then delete its Removes
        (``policy``: the stack policy that must allow each change, ``stack_policy.py``)."""
        blueprint = plan.blueprint
        previous = self.blueprints[stack.stack_id]
        run = UpdateRun(Revision(previous, copy.deepcopy(stack.resources), list(stack.outputs), dict(stack.parameters), dict(stack.tags)), blueprint)
        if stack.status == "UPDATE_FAILED":  # what the failed update replaced is left aside until this one ends
            self.in_flight.supersede(stack)
        self.rolled_back_to.pop(stack.stack_id, None)  # a failed update read back after a restart: this one takes its place
        for change in plan.resources.values():  # a drift-aware update rolls back to what actually was, not to the last template
            kept = run.before.resources.get(change.logical_id)
            if change.drift is not None and change.drift.read and kept is not None and kept.properties is not None:
                kept.properties = change.drift.restored(kept.properties)
        self.updates[stack.stack_id] = run
        self.blueprints[stack.stack_id] = blueprint
        stack.parameters, stack.tags, stack.no_echo = parameters, tags, blueprint.no_echo
        stack.template_body, stack.description = blueprint.template_body, blueprint.description
        stack.updated_at = time.time()
        stack.set_status("UPDATE_IN_PROGRESS", "User Initiated", token)
        invalid = await missing_parameter_value(blueprint) or unsupported_attribute(blueprint, self.provisioners)
        refused = invalid or await self._stack_hooks(stack, "UPDATE", blueprint.template_body, previous.template_body, token, skip_hooks)
        if refused is not None:
            await self._roll_back_update(stack, run, refused, token, VALIDATION_FAILED if invalid else None)
            return
        denied = refusals(policy, plan)
        for logical_id, reason in denied.items():  # the resource is left as it is: only its event says UPDATE_FAILED
            current = stack.resources[logical_id]
            stack.record(logical_id, current.physical_id or "", current.type_name, "UPDATE_FAILED", reason, token=token)
        if denied:
            await self._roll_back_update(stack, run, _failed_to_update(denied), token)
            return
        failed: List[str] = []

        async def update_one(logical_id: str) -> bool:
            ok = await self._update_resource(stack, plan, run, logical_id, token)
            if not ok:
                if not run.cancelled:  # cancelled by CancelUpdateStack: the user's rollback, no failure
                    failed.append(logical_id)
                run.cancellation.cancel(f"{logical_id} failed")
            return ok

        await self._in_order(blueprint.dependencies, update_one, stop=lambda: bool(failed) or run.cancelled)
        problem = None
        if not failed and not run.cancelled:
            problem = self.publish_outputs(stack, blueprint)
        if failed or run.cancelled or problem:
            reason = problem or (_failed_in_update(failed, run.added) if failed else "User Initiated")
            if stack.disable_rollback and not run.cancelled:
                stack.set_status("UPDATE_FAILED", reason, token)  # kept as it is, until RollbackStack or another update
                return
            await self._roll_back_update(stack, run, reason, token)
            return
        stack.set_status("UPDATE_COMPLETE_CLEANUP_IN_PROGRESS", None, token)
        await self._clean_up(stack, run.before.blueprint, plan.removed(), run.replaced, token)
        await self._delete_superseded(stack, token)
        for logical_id in [lid for lid in run.before.resources if lid not in plan.resources]:
            stack.resources.pop(logical_id, None)  # never created (or already gone): nothing to delete
        stack.set_status("UPDATE_COMPLETE", None, token)
        self.in_flight.replacements_done(stack)

    async def _update_resource(self, stack: Stack, plan: ChangePlan, run: UpdateRun, logical_id: str, token: Optional[str]) -> bool:
        """One resource as the plan says: added, replaced, updated in place, or — unchanged — not touched.

        Its properties are worked out now, against what ran before it; a Conditional replacement is settled by which of
        them changed (``ResourceChange.replaces``). One the plan leaves alone whose values moved all the same (an
        attribute an in-place update changed) is updated in place, never replaced."""
        blueprint, planned = plan.blueprint, plan.of(logical_id)
        type_name = blueprint.type_of(logical_id)
        current = stack.resources.get(logical_id)
        if planned.action == "Import":  # ImportExistingResources found it: brought in, not created (``auto_imports.py``)
            run.imported.add(logical_id)
            return await import_resource(stack, blueprint, planned, self.provisioners, self.context(stack), token)
        if current is None or not current.exists or planned.action == "Add":  # Add: made again, deleted outside CloudFormation
            stack.resources[logical_id] = StackResource(logical_id, type_name, "NOT_STARTED")
            run.added.add(logical_id)
            return await self._create(stack, blueprint, stack.resources[logical_id], token, run.cancellation)
        try:
            provisioner = self.provisioners.for_type(type_name)
            properties = blueprint.properties(logical_id, stack.resources)
        except (TemplateProblem, NoProvisioner) as error:
            stack.set_resource_status(current, "UPDATE_FAILED", str(error), token=token)
            return False
        if planned.action == SYNC_WITH_ACTUAL:  # the template now says what it actually is: only the record changes
            self._sync_with_actual(stack, blueprint, current, properties, token)
            return True
        reverts_drift = planned.reverts_drift
        if planned.replacement != "True" and properties == current.properties and not planned.automatic and not reverts_drift:
            if planned.action == "Modify" and "Metadata" in planned.scope:
                self._update_metadata(stack, blueprint, current, token)
            # its properties unchanged: the handler is not called (a nested stack whose child template changed is)
            return await self._read_new_attributes(stack, blueprint, current, provisioner, token)
        problem = provisioner.validate(type_name, logical_id, properties)
        shown = self._shown(stack, provisioner.shown(type_name, properties))
        if problem is not None:
            stack.set_resource_status(current, "UPDATE_FAILED", problem, shown, token)
            return False
        if planned.action == "Modify" and self._replaced_up_front(planned, type_name, changed_properties(known_properties(current, properties), properties)):
            return await self._replace(stack, blueprint, run, current, properties, shown, token)
        # a drift-aware change set's update starts from the resource as it actually is, not as it was last deployed
        previous = planned.drift.restored(current.properties or {}) if planned.drift is not None and planned.drift.read else current.properties
        work = replace(self._work(stack, blueprint, current, properties, token, run.cancellation), previous_properties=previous)
        before = copy.copy(current)

        def answered(made: Provisioned) -> Provisioned:
            if not before.physical_id or made.physical_id == before.physical_id:
                return made
            if not is_custom_resource(type_name):
                # An update in place keeps its physical resource, whatever id the handler's model now names (only a
                # custom resource's function may answer one with a new physical resource).
                return replace(made, physical_id=before.physical_id, ref=before.ref)
            # A custom resource answered with a new physical resource: the old one goes in the cleanup phase, and a
            # rollback deletes the new one, as for a replacement. It is written down before the stack's record names
            # the new one, so a serve killed in between leaves the old one in a record.
            run.updated.discard(logical_id)
            run.replaced[logical_id] = before
            self.in_flight.replacing(stack, before)
            return made

        return await self._provision(
            stack, current, "UPDATE", lambda: provisioner.update(work), properties, current.properties, shown, token,
            started=lambda: run.updated.add(logical_id), metadata=blueprint.resolved_metadata(logical_id, stack.resources),
            cancellation=run.cancellation, answered=answered, first_call=work if is_custom_resource(type_name) else None,
        )

    @staticmethod
    def _replaced_up_front(planned: ResourceChange, type_name: str, changed: List[str]) -> bool:
        """Is the resource replaced before any call? A custom resource's Conditional replacement is its function's to
        settle: it gets an Update, and answering it with a new PhysicalResourceId makes it a replacement (``answered``)."""
        if is_custom_resource(type_name):
            return planned.replacement == "True"
        return planned.replaces(changed)

    async def _read_new_attributes(
        self, stack: Stack, blueprint: Blueprint, resource: StackResource, provisioner: Provisioner, token: Optional[str]
    ) -> bool:
        """An unchanged resource whose Fn::GetAtt the new template reads and nothing read before: its attributes read again."""
        if not isinstance(provisioner, AttributeReader) or blueprint.attributes_wanted(resource.logical_id) <= resource.attributes.keys():
            return True
        work = self._work(stack, blueprint, resource, dict(resource.properties or {}), token)
        try:
            resource.attributes.update(await provisioner.read_attributes(work))
        except ProvisioningFailed as error:
            stack.set_resource_status(resource, "UPDATE_FAILED", stack.masked(error.reason), token=token)
            return False
        return True

    def _sync_with_actual(
        self, stack: Stack, blueprint: Blueprint, resource: StackResource, properties: Dict[str, Any], token: Optional[str]
    ) -> None:
        """A drift-aware change set's SyncWithActual: the resource is as the template now says; its handler is not called,
        its record takes the template's values (the events, as for a Metadata change alone, are inferred)."""
        stack.set_resource_status(resource, "UPDATE_IN_PROGRESS", None, token=token)
        resource.properties = properties
        resource.metadata = blueprint.resolved_metadata(resource.logical_id, stack.resources)
        stack.set_resource_status(resource, "UPDATE_COMPLETE", None, token=token)

    def _update_metadata(self, stack: Stack, blueprint: Blueprint, resource: StackResource, token: Optional[str]) -> None:
        """A change to the resource's Metadata alone: the service keeps Metadata itself, so the resource has its update events
        and its new Metadata, and its handler is not called."""
        stack.set_resource_status(resource, "UPDATE_IN_PROGRESS", None, token=token)
        resource.metadata = blueprint.resolved_metadata(resource.logical_id, stack.resources)
        stack.set_resource_status(resource, "UPDATE_COMPLETE", None, token=token)

    async def _replace(
        self, stack: Stack, blueprint: Blueprint, run: UpdateRun, old: StackResource, properties: Dict[str, Any], shown: str, token: Optional[str]
    ) -> bool:
        run.replaced[old.logical_id] = old
        self.in_flight.replacing(stack, old)
        new = StackResource(old.logical_id, blueprint.type_of(old.logical_id), "NOT_STARTED")
        stack.resources[old.logical_id] = new
        provisioner = self.provisioners.for_type(new.type_name)
        work = self._work(stack, blueprint, new, properties, token, run.cancellation)
        create = self._creating(stack, blueprint, new, provisioner, work, properties, token)
        metadata = blueprint.resolved_metadata(old.logical_id, stack.resources)
        return await self._provision(
            stack, new, "UPDATE", create, properties, old.properties, shown, token, reason=REPLACING, metadata=metadata, replacing=old,
            first_call=work, cancellation=run.cancellation,
        )

    async def _clean_up(
        self, stack: Stack, blueprint: Blueprint, removed: List[str], replaced: Mapping[str, StackResource], token: Optional[str]
    ) -> bool:
        """The update's cleanup phase: the old resources of replacements and the plan's Removes, together in reverse
        dependency order of the template they were made by (an old subnet goes before its old VPC). No hook is asked: the
        Hooks user guide says operations in UpdateCleanup invoke none (a removed resource's, a replaced one's preDelete)."""
        gone = {lid: stack.resources[lid] for lid in removed if lid in stack.resources}
        old = {**gone, **replaced}

        def policy(logical_id: str) -> str:
            return blueprint.update_replace_policy(logical_id) if logical_id in replaced else blueprint.deletion_policy(logical_id)

        ok = await self._delete_in_reverse(stack, blueprint, old, policy, token)
        for logical_id in gone:
            stack.resources.pop(logical_id, None)
        return ok

    async def _delete_superseded(self, stack: Stack, token: Optional[str]) -> None:
        """The old resources earlier failed updates replaced (``InFlight.superseded``), by the stack's template now and its
        UpdateReplacePolicy (inferred: the service documents no such case); one whose delete fails waits for the next."""
        blueprint = self.blueprints[stack.stack_id]
        batches = self.in_flight.superseded.get(stack.stack_id) or []
        for batch in batches:
            await self._delete_in_reverse(stack, blueprint, batch, blueprint.update_replace_policy, token)
        self.in_flight.superseded_gone(stack, [left for left in ({k: r for k, r in b.items() if r.exists} for b in batches) if left])

    async def finish_cleanup(
        self, stack: Stack, replaced: Mapping[str, StackResource], removed: List[str], token: Optional[str], reason: str
    ) -> None:
        """An update's cleanup that serve stopped during (``interrupted_operations.py``): the old resources of its
        replacements, as kept aside, and the ``removed`` resources are deleted now, by the template from before the
        update when it was kept (their DeletionPolicy and order)."""
        stack.set_status("UPDATE_COMPLETE_CLEANUP_IN_PROGRESS", reason, token)
        kept = self.rolled_back_to.get(stack.stack_id)  # kept in the record until the cleanup ends: serve may be stopped again
        await self._clean_up(stack, kept.blueprint if kept is not None else self.blueprints[stack.stack_id], removed, replaced, token)
        self.rolled_back_to.pop(stack.stack_id, None)
        stack.set_status("UPDATE_COMPLETE", None, token)
        self.in_flight.replacements_done(stack)

    async def _roll_back_update(self, stack: Stack, run: UpdateRun, reason: str, token: Optional[str], detail: Optional[str] = None) -> None:
        stack.set_status("UPDATE_ROLLBACK_IN_PROGRESS", reason, token, detail)
        before = run.before
        self.blueprints[stack.stack_id] = before.blueprint
        stack.parameters, stack.tags, stack.no_echo = before.parameters, before.tags, before.blueprint.no_echo
        stack.template_body, stack.description = before.blueprint.template_body, before.blueprint.description
        failed = await self._put_back(stack, run, token)
        if failed:
            stack.set_status("UPDATE_ROLLBACK_FAILED", _failed_to_update(failed), token)
            return
        await self._finish_rollback(stack, run, token)

    async def _put_back(self, stack: Stack, run: UpdateRun, token: Optional[str]) -> List[str]:
        """Each resource updated in place goes back to its previous properties; replaced ones to the old resource. The
        resources whose update back failed (none: the stack is as it was)."""
        before = run.before
        failed: List[str] = []

        async def put_back(logical_id: str) -> bool:
            if logical_id in run.replaced:
                return True
            current, old = stack.resources[logical_id], before.resources[logical_id]
            if self._stopped_at(stack, current, token):
                return False
            provisioner = self.provisioners.for_type(current.type_name)
            shown = self._shown(stack, provisioner.shown(current.type_name, old.properties or {}))
            stack.set_resource_status(current, "UPDATE_IN_PROGRESS", None, shown, token)
            work = replace(
                self._work(stack, before.blueprint, current, old.properties or {}, token), previous_properties=current.properties
            )
            try:
                made = await provisioner.update(work)
            except OperationStopped:
                self._stopped_at(stack, current, token)
                return False
            except Exception as error:  # noqa: B902 - see _create
                stack.set_resource_status(current, "UPDATE_FAILED", stack.masked(_reason(error)), shown, token)
                failed.append(logical_id)
                return False
            self._keep(current, made, old.properties or {})
            current.metadata = old.metadata
            stack.set_resource_status(current, "UPDATE_COMPLETE", None, shown, token)
            run.updated.discard(logical_id)
            return True

        order = {lid: deps for lid, deps in before.blueprint.dependencies.items() if lid in run.updated}
        await self._in_order(order, put_back)
        return failed

    async def _finish_rollback(self, stack: Stack, run: UpdateRun, token: Optional[str]) -> None:
        stack.set_status("UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS", None, token)
        made_by_update = {lid: stack.resources[lid] for lid in run.added | run.imported | set(run.replaced) if lid in stack.resources}
        blueprint = self.blueprints[stack.stack_id]
        made_by = run.after or blueprint

        def policy(logical_id: str) -> str:
            if logical_id in run.imported:
                return "Retain"  # never the stack's to delete: it leaves the stack and stays
            if logical_id in run.replaced or run.retain_except_on_create:
                return "Delete"
            return made_by.deletion_policy(logical_id)  # an added resource that says Retain stays, as the service keeps it

        await self._delete_in_reverse(stack, made_by, made_by_update, policy, token, rolling_back_create=True)
        await self._delete_superseded(stack, token)
        for logical_id in made_by_update:
            stack.resources.pop(logical_id, None)
            if logical_id in run.before.resources and logical_id not in run.replaced:
                stack.resources[logical_id] = run.before.resources[logical_id]  # made again (deleted outside): its old record
        for logical_id, old in run.replaced.items():
            stack.resources[logical_id] = old
        for logical_id, resource in stack.resources.items():  # a Metadata changed alone goes back too
            if logical_id in run.before.resources:
                resource.metadata = run.before.resources[logical_id].metadata
        stack.outputs = run.before.outputs
        self.publish_outputs(stack, blueprint)
        self.updates.pop(stack.stack_id, None)
        stack.set_status("UPDATE_ROLLBACK_COMPLETE", None, token)
        self.in_flight.replacements_done(stack)  # once the old resources are back in the stack's record

    async def continue_update_rollback(self, stack: Stack, skip: FrozenSet[str], token: Optional[str] = None) -> None:
        run = self.updates.get(stack.stack_id) or self._recovered_run(stack, skip, token)
        if run is None:
            return
        run.updated -= set(skip)
        stack.set_status("UPDATE_ROLLBACK_IN_PROGRESS", None, token)
        for logical_id in sorted(skip):  # "sets the status of the skipped resources to UPDATE_COMPLETE" (botocore's model)
            skipped = stack.resources.get(logical_id)
            if skipped is not None and skipped.status == "UPDATE_FAILED":
                stack.set_resource_status(skipped, "UPDATE_COMPLETE", None, token=token)
        await self._ask_again(stack, token)
        failed = await self._put_back(stack, run, token)
        if failed:
            stack.set_status("UPDATE_ROLLBACK_FAILED", _failed_to_update(failed), token)
            return
        await self._finish_rollback(stack, run, token)

    async def roll_back(self, stack: Stack, token: Optional[str] = None, retain_except_on_create: bool = False, reason: str = "User Initiated") -> None:
        """RollbackStack: a create or an update that failed with rollback disabled is rolled back now (and, after a restart,
        a create or its rollback that serve stopped during: ``interrupted_operations.py``)."""
        blueprint = self.blueprints[stack.stack_id]
        if stack.status in ("CREATE_FAILED", "ROLLBACK_FAILED"):
            stack.set_status("ROLLBACK_IN_PROGRESS", reason, token)
            await self._ask_again(stack, token)
            ok = await self._delete_all(stack, blueprint, list(stack.resources), token, rolling_back_create=True)
            stack.set_status("ROLLBACK_COMPLETE" if ok else "ROLLBACK_FAILED", None if ok else "The following resource(s) failed to delete.", token)
            return
        run = self.updates.get(stack.stack_id) or self._recovered_run(stack, frozenset(), token)  # None: it says why
        if run is None:
            return
        run.retain_except_on_create = retain_except_on_create
        await self._roll_back_update(stack, run, "User Initiated", token)

    def _recovered_run(self, stack: Stack, skip: FrozenSet[str], token: Optional[str]) -> Optional[UpdateRun]:
        """The update serve lost track of (a restart), from the stack's record; None (the stack still
        UPDATE_ROLLBACK_FAILED, saying why) when a resource it touched cannot be put back."""
        blueprint = self.blueprints.get(stack.stack_id)
        found = interrupted_update(stack, self.in_flight.replaced_before.get(stack.stack_id))
        lost = sorted(set(found.lost) - skip)
        if blueprint is None or lost:
            reason = (
                f"cfnrun cannot roll back [{', '.join(lost)}]: what they were before the update was not kept when serve "
                "stopped (a replaced resource, or properties holding a writeOnly or NoEcho value). "
                "Skip them with ResourcesToSkip and put them right yourself."
            )
            stack.set_status("UPDATE_ROLLBACK_FAILED", reason, token)
            return None
        resources = {lid: copy.deepcopy(r) for lid, r in stack.resources.items() if lid not in found.added}  # what was there before it
        for logical_id, properties in found.previous.items():
            resources[logical_id].properties = properties
        kept = self.rolled_back_to.pop(stack.stack_id, None)  # None: the rollback had begun (the stack's template is its before)
        if kept is None:
            before = Revision(blueprint, resources, list(stack.outputs), dict(stack.parameters), dict(stack.tags))
        else:
            before = Revision(kept.blueprint, resources, kept.outputs, kept.parameters, kept.tags)
        return UpdateRun(before, blueprint, added=set(found.added), updated=set(found.previous), replaced=dict(found.replaced))

    async def _ask_again(self, stack: Stack, token: Optional[str]) -> None:
        """Before an operation carried on after a restart deletes anything: the resources whose first CREATE call a killed
        serve left are named by calling CREATE again (``unanswered_creates.py``)."""
        blueprint = self.blueprints.get(stack.stack_id)

        def work_for(resource: StackResource, properties: Dict[str, Any], handler_token: Optional[str]) -> ResourceWork:
            work = self._work(stack, blueprint, resource, properties, token)
            return replace(work, client_request_token=handler_token or work.client_request_token)

        await ask_again(stack, self.provisioners, self.in_flight, work_for)

    def cancel_update(self, stack: Stack) -> None:
        run = self.updates.get(stack.stack_id)
        if run is not None:
            run.cancelled = True
            run.cancellation.cancel("CancelUpdateStack")

    # -- delete ----------------------------------------------------------------------------

    async def delete(self, stack: Stack, retain: FrozenSet[str] = frozenset(), token: Optional[str] = None, reason: str = "User Initiated") -> None:
        blueprint = self.blueprints.get(stack.stack_id)
        stack.set_status("DELETE_IN_PROGRESS", reason, token)
        await self._ask_again(stack, token)
        refused = await self._stack_hooks(stack, "DELETE", None, blueprint.template_body if blueprint else None, token)
        if refused is not None:
            stack.set_status("DELETE_FAILED", refused, token)
            return
        for output in stack.outputs:
            if output.export_name:
                try:
                    self.exports.check_unused(output.export_name)
                except ExportConflict as error:
                    stack.set_status("DELETE_FAILED", str(error), token)
                    return
        ok = True
        if blueprint is not None:
            ok = await self._delete_all(stack, blueprint, list(stack.resources), token, retain, hooked=True)
            for old in [self.in_flight.replaced_before.get(stack.stack_id) or {}, *(self.in_flight.superseded.get(stack.stack_id) or [])]:
                # set aside by an update that failed or that serve lost track of: they go with the stack
                ok = await self._delete_in_reverse(stack, blueprint, old, blueprint.update_replace_policy, token, hooked=True) and ok
        if not ok:
            failed = sorted(r.logical_id for r in stack.resources.values() if r.status == "DELETE_FAILED")
            stack.set_status("DELETE_FAILED", f"The following resource(s) failed to delete: [{', '.join(failed)}]. ", token)
            return
        self.exports.publish(stack.stack_id, stack.name, {})
        self.exports.set_imports(stack.name, ())
        self.blueprints.pop(stack.stack_id, None)
        self.updates.pop(stack.stack_id, None)
        self.rolled_back_to.pop(stack.stack_id, None)
        stack.deleted_at = time.time()
        stack.set_status("DELETE_COMPLETE", None, token)
        self.in_flight.replacements_done(stack)
        self.in_flight.superseded_gone(stack, [])

    async def _delete_all(
        self,
        stack: Stack,
        blueprint: Blueprint,
        logical_ids: List[str],
        token: Optional[str],
        retain: FrozenSet[str] = frozenset(),
        rolling_back_create: bool = False,
        hooked: bool = False,
    ) -> bool:
        """Delete these resources, dependants first; those never created are just dropped (``hooked``: hooks run first,
        as on a stack's delete and an update's cleanup; a rollback runs none)."""
        def policy(logical_id: str) -> str:
            return "Retain" if logical_id in retain else blueprint.deletion_policy(logical_id)

        resources = {lid: stack.resources[lid] for lid in logical_ids}
        return await self._delete_in_reverse(stack, blueprint, resources, policy, token, rolling_back_create, hooked)

    async def _delete_in_reverse(
        self,
        stack: Stack,
        blueprint: Blueprint,
        resources: Mapping[str, StackResource],
        policy: Callable[[str], str],
        token: Optional[str],
        rolling_back_create: bool = False,
        hooked: bool = False,
    ) -> bool:
        """Delete ``resources`` (by logical id) once everything depending on them in ``blueprint`` is gone; False if any failed."""
        failed: List[str] = []

        async def delete_one(logical_id: str) -> bool:
            resource = resources[logical_id]
            if not resource.exists:
                return True
            ok = await self._delete_one(stack, resource, policy(logical_id), token, rolling_back_create=rolling_back_create, hooked=hooked)
            if not ok:
                failed.append(logical_id)
            return ok

        await self._in_order(reverse(blueprint.dependencies, resources), delete_one)
        return not failed

    async def _delete_one(
        self,
        stack: Stack,
        resource: StackResource,
        policy: str,
        token: Optional[str],
        rolling_back_create: bool = False,
        hooked: bool = False,
    ) -> bool:
        if keeps_resource(policy, rolling_back_create=rolling_back_create):
            stack.set_resource_status(resource, "DELETE_SKIPPED", None, token=token)
            return True
        if self._stopped_at(stack, resource, token):
            return False
        stack.set_resource_status(resource, "DELETE_IN_PROGRESS", None, token=token)
        try:
            if hooked:
                refused = await self._hooks(stack, resource, "DELETE", resource.properties or {}, None, token)
                if refused is not None:
                    stack.set_resource_status(resource, "DELETE_FAILED", refused, token=token)
                    return False
            if self._stopped_at(stack, resource, token):
                return False
            provisioner = self.provisioners.for_type(resource.type_name)
            await provisioner.delete(self._work(stack, self.blueprints.get(stack.stack_id), resource, resource.properties or {}, token))
        except OperationStopped:
            self._stopped_at(stack, resource, token)
            return False
        except Exception as error:  # noqa: B902 - see _create
            stack.set_resource_status(resource, "DELETE_FAILED", stack.masked(_reason(error)), token=token)
            return False
        stack.set_resource_status(resource, "DELETE_COMPLETE", None, token=token)
        if self.on_deleted is not None:
            await self.on_deleted(stack, resource)
        return True

    # -- helpers ---------------------------------------------------------------------------

    async def _in_order(self, prerequisites: Mapping[str, FrozenSet[str]], step: Step, stop: Callable[[], bool] = lambda: False) -> None:
        """``run_in_order``, starting nothing once serve stops; then the stack operation ends where it is (OperationStopped)."""
        await run_in_order(prerequisites, step, stop=lambda: self.stopped is not None or stop())
        if self.stopped is not None:
            raise OperationStopped(self.stopped)

    def _stopped_at(self, stack: Stack, resource: StackResource, token: Optional[str]) -> bool:
        """Is serve stopping? Then ``resource`` is left as it is (an event says so, when it was started) and nothing more starts."""
        if self.stopped is None:
            return False
        if resource.status.endswith("_IN_PROGRESS"):
            stack.set_resource_status(resource, resource.status, STOPPED, token=token)
        return True

    async def _hooks(
        self,
        stack: Stack,
        resource: StackResource,
        action: str,
        properties: Dict[str, Any],
        previous: Optional[Dict[str, Any]],
        token: Optional[str],
        judged: Callable[[HookReport], None] = lambda report: None,
    ) -> Optional[str]:
        """The hooks targeting this resource operation, each report a stack event (and given to ``judged``); why they refuse it, or None."""
        if self.hooks is None:  # none configured: nothing to ask, no target to describe
            return None
        target = HookedOperation(
            self.context(stack), action, resource.logical_id, resource.type_name, properties, previous,
            change_set_id=self.executing_change_sets.get(stack.stack_id),
        )
        subject = (resource.logical_id, resource.physical_id or "", resource.type_name, resource.status)
        return await self._ask_hooks(stack, target, subject, token, judged)

    async def _stack_hooks(
        self,
        stack: Stack,
        action: str,
        template: Optional[str],
        previous: Optional[str],
        token: Optional[str],
        skip_hooks: FrozenSet[str] = frozenset(),
    ) -> Optional[str]:
        """The hooks targeting the stack operation itself (STACK), before any resource; why they refuse it, or None."""
        if self.hooks is None:  # none configured: the template is not written out for them
            return None
        model = stack_model(template, previous)
        target = HookedOperation(
            self.context(stack), action, stack.name, STACK_TARGET, {}, operation=STACK_TARGET, model=model, skipped=skip_hooks,
            change_set_id=self.executing_change_sets.get(stack.stack_id),
        )
        return await self._ask_hooks(stack, target, (stack.name, stack.stack_id, "AWS::CloudFormation::Stack", stack.status), token)

    async def _ask_hooks(
        self, stack: Stack, target: HookedOperation, subject: Tuple[str, str, str, str], token: Optional[str],
        judged: Callable[[HookReport], None] = lambda report: None,
    ) -> Optional[str]:
        """Ask the gate; each hook's progress is an event of ``subject`` (logical id, physical id, type, status), and goes to ``judged``."""
        if self.hooks is None:
            return None

        def report(hooked: HookReport) -> None:
            judged(hooked)
            stack.record(
                *subject,
                None,
                token=token,
                hook_type=hooked.hook_type,
                hook_status=hooked.status,
                hook_status_reason=stack.masked(verdict_reason(hooked.status, hooked.reason))[:HOOK_REASON_LIMIT] if hooked.reason else None,
                hook_invocation_point=INVOCATION_POINT,
                hook_failure_mode=hooked.failure_mode,
                hook_invocation_id=hooked.invocation_id,
            )

        refused = await self.hooks.before(target, report)
        return stack.masked(refused) if refused is not None else None

    def context(self, stack: Stack, next_blueprint: Optional[Blueprint] = None) -> StackContext:
        """The stack as a resource operation sees it; during an update, with the tags it had before (previousStackTags).

        Its secrets: the stack's (``Stack.secrets``), those it had before an update in progress, and ``next_blueprint``'s
        NoEcho parameter values (a change set's, judged by hooks before the stack takes them)."""
        run = self.updates.get(stack.stack_id)
        updating = run is not None and stack.status.startswith("UPDATE")
        previous = dict(run.before.tags) if run is not None and updating else None
        secrets = stack.secrets()
        if run is not None and updating:
            secrets += [run.before.parameters.get(name) for name in run.before.blueprint.no_echo]
        if next_blueprint is not None:
            secrets += [next_blueprint.parameters.get(name) for name in next_blueprint.no_echo]
        hidden = tuple(dict.fromkeys(secret for secret in secrets if secret))
        return StackContext(stack.stack_id, stack.name, self.region, self.account_id, dict(stack.tags), previous, hidden)

    def _work(
        self, stack: Stack, blueprint: Optional[Blueprint], resource: StackResource, properties: Dict[str, Any], token: Optional[str],
        cancellation: Optional[Cancellation] = None,
    ) -> ResourceWork:
        def note(reason: str) -> None:
            stack.set_resource_status(resource, resource.status, stack.masked(reason), token=token)

        wanted = blueprint.attributes_wanted(resource.logical_id) if blueprint is not None else frozenset()
        handler_token = token or random_uuid()  # known before the call, so a first CREATE can be written down with it
        return ResourceWork(
            stack=self.context(stack),
            logical_id=resource.logical_id,
            type_name=resource.type_name,
            properties=properties,
            physical_id=resource.physical_id,
            model=resource.model,
            attributes_wanted=wanted,
            client_request_token=handler_token,
            note=note,
            progress=lambda made, context: self.in_flight.progressed(stack, resource, made, context, handler_token),
            cancellation=cancellation,
        )

    @staticmethod
    def _keep(resource: StackResource, made: Provisioned, properties: Dict[str, Any]) -> None:
        resource.physical_id, resource.ref, resource.attributes, resource.model = made.physical_id, made.ref, dict(made.attributes), made.model
        resource.properties, resource.no_echo = properties, made.no_echo

    def publish_outputs(self, stack: Stack, blueprint: Blueprint) -> Optional[str]:
        """Evaluate the outputs and publish the exports; the reason the stack fails, or None."""
        try:
            outputs = blueprint.outputs(stack.resources)
            exports = {o.export_name: str(o.value) for o in outputs if o.export_name}
            self.exports.check_publish(stack.stack_id, exports)
        except (TemplateProblem, ExportConflict) as error:
            return str(error)
        self.exports.publish(stack.stack_id, stack.name, exports)
        self.exports.set_imports(stack.name, blueprint.imports())
        stack.outputs = outputs
        return None

    def _shown(self, stack: Stack, properties: Dict[str, Any]) -> str:
        return stack.masked(json.dumps(properties, sort_keys=True, default=str))

    def holds_secrets(self, stack: Stack, resource: StackResource, secrets: Optional[Sequence[Optional[str]]] = None) -> bool:
        """Do the resource's properties hold a writeOnly or NoEcho value (so they are never written to disk)? ``secrets``:
        ``stack.secrets()``, when the caller asks of every resource at once."""
        if resource.properties is None:
            return False
        try:
            shown = self.provisioners.for_type(resource.type_name).shown(resource.type_name, resource.properties)
        except NoProvisioner:
            return True
        shown_text = mask_values(json.dumps(shown, sort_keys=True, default=str), stack.secrets() if secrets is None else secrets)
        return shown_text != json.dumps(resource.properties, sort_keys=True, default=str)


def _failed_to_update(logical_ids: Iterable[str]) -> str:
    """The stack's reason when resources failed to update (the update's, or its rollback's): each named, sorted."""
    return f"The following resource(s) failed to update: [{', '.join(sorted(logical_ids))}]. "


def _failed_in_update(logical_ids: Iterable[str], added: AbstractSet[str]) -> str:
    """The stack's reason when an update's resources failed: those it was adding "failed to create", then the others
    "failed to update" (the service's two sentences, in that order, when both happen: serverless/serverless#1745)."""
    failed = set(logical_ids)
    created = failed & added
    reason = f"The following resource(s) failed to create: [{', '.join(sorted(created))}]. " if created else ""
    return reason + (_failed_to_update(failed - created) if failed - created else "")


def _reason(error: Exception) -> str:
    """A provisioner's failure as its resource's ResourceStatusReason; anything unforeseen is named as cfnrun's own failure."""
    if isinstance(error, ProvisioningFailed):
        return error.reason
    if isinstance(error, NoProvisioner):
        return str(error)
    return f"cfnrun failed provisioning the resource: {type(error).__name__}: {error}"

