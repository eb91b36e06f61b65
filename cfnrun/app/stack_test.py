"""``cfnrun stack test``: one stack's whole life — create, each update, delete — on the serve every stack runs on.

No second engine: the command starts serve's own parts in-process (``start_server``, listening
on 127.0.0.1, port 0, so a custom resource's ResponseURL answers), and drives its StackStore as
the CloudFormation API does — the template linted and its parameters read first, so what the
service would refuse (a ValidationError) is refused before anything is made. Each step waits for
the stack to settle, following its events as they are written (``StackFollower``). Then the
verdict: every step completed, no contract violation that fails (``--contract strict``'s MUST
ones), and nothing left — each resource the stack deleted is asked whether it is gone right after
its own DELETE_COMPLETE, before anything it depends on is deleted (``LeftoverCheck``: a user type's
READ must answer NotFound, an AWS::* resource's stack on the endpoint must be deleted).
"""
from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import re
import signal
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from cfnrun.app.moto_server import warm_cloudformation
from cfnrun.app.loaded_objects import keep_what_loaded
from cfnrun.app.serve import Sources, aws_calls_routed, start_server
from cfnrun.app.serve_settings import ServeSettings
from cfnrun.app.stacks.flag_hints import for_command
from cfnrun.app.state_lock import state_held
from cfnrun.app.stacks.leftovers import Finding, MadeResource
from cfnrun.app.stacks.local_stacks import LocalStacks
from cfnrun.app.type_operations import ContractReport
from cfnrun.events.stack import (
    Leftover,
    ResourceViolation,
    StackEvent,
    StackTestCompleted,
    StackTestObserver,
    StackTestStarted,
    StepCompleted,
    StepProgress,
    StepStarted,
)
from cfnrun.model.errors import CfnrunError
from cfnrun.stacks.lint_process import lints_waited_for
from cfnrun.stacks.iam_capabilities import CAPABILITY_IAM, CAPABILITY_NAMED_IAM
from cfnrun.stacks.blueprint import Blueprint
from cfnrun.stacks.records import Stack, StackResource, shown_parameters
from cfnrun.stacks.store import StackError
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.ui.console import Console

COMMAND = "cfnrun stack test"  # what the user ran: hints name its flags
STACK_TYPE = "AWS::CloudFormation::Stack"
PROGRESS_EVERY_S = 0.2  # how often a running step reports the resources still at work
STEP_ENDS = {"create": "CREATE_COMPLETE", "update": "UPDATE_COMPLETE", "delete": "DELETE_COMPLETE"}
AWS_RESOURCE = re.compile(r"""["']?Type["']?\s*:\s*["']?AWS::(?!CloudFormation::)""")  # a resource of an AWS type, roughly: for warming moto only
PLACEHOLDER_ID = "arn:aws:cloudformation:us-east-1:000000000000:stack/checking/0"


NO_UPDATES = "it changes no parameter's value: No updates are to be performed."


class StackTestRefused(CfnrunError):
    """What the service would refuse before the stack exists (its ValidationError text): a usage error."""


def refused_before_serve(plan: "StackTestPlan") -> None:
    """The steps' parameters the service would refuse, found before serve starts where the template alone tells (it has
    no Transform, which may add or change its Parameters): a key it does not declare, a parameter left without a value,
    an update that changes nothing; StackTestRefused in the words ``StackLifecycle._checked_steps`` uses once serve has
    read the template. Whatever this cannot tell (a template serve refuses, a value's constraints) is left to that."""
    from cfnrun.model.template_text import TemplateDecodeError, decode_template
    from cfnrun.stacks.template.declarations import parameter_declarations
    from cfnrun.stacks.template.parameters import refuse_missing_values, refuse_unknown_keys

    try:
        document = decode_template(plan.body)
    except TemplateDecodeError:
        return
    if not isinstance(document, dict) or "Transform" in document or "Fn::Transform" in json.dumps(document.get("Parameters"), default=str):
        return
    try:
        declarations = parameter_declarations(document)
    except TemplateError:
        return
    try:
        refuse_unknown_keys(declarations, plan.parameters)
        refuse_missing_values(declarations, plan.parameters)
    except TemplateError as error:
        raise StackTestRefused(f"{plan.template}: {_one_line(str(error))}") from None
    no_echo = tuple(name for name, declared in declarations.items() if declared.no_echo)
    values = {name: declared.default for name, declared in declarations.items() if declared.default is not None}
    values.update(plan.parameters)
    for number, changes in enumerate(plan.updates, start=2):
        where = _step_place(plan, number, Step("update", dict(changes)), no_echo)
        try:
            refuse_unknown_keys(declarations, changes)
        except TemplateError as error:
            raise StackTestRefused(f"{where}: {_one_line(str(error))}") from None
        following = {**values, **changes}
        if following == values:
            raise StackTestRefused(f"{where}: {NO_UPDATES}")
        values = following


def _step_place(plan: "StackTestPlan", number: int, step: "Step", no_echo: Tuple[str, ...]) -> str:
    """Where a refusal is: the template and the update step, as the user gave it (NoEcho values masked)."""
    return f"{plan.template}, step {number} ({step.describe(no_echo)})"


@dataclass(frozen=True)
class StackTestPlan:
    template: str  # as the user named it
    body: str
    stack_name: str
    parameters: Dict[str, str]
    updates: Tuple[Dict[str, str], ...]
    keep: bool
    strict: bool  # --contract strict: a MUST violation fails the run


@dataclass(frozen=True)
class Step:
    kind: str  # create | update | delete
    parameters: Dict[str, str]  # what it sets (NoEcho values in clear: masked when shown)

    def describe(self, no_echo: Tuple[str, ...]) -> str:
        return " ".join([self.kind, *(f"{key}={value}" for key, value in shown_parameters(self.parameters, no_echo).items())])


async def run_stack_test(
    plan: StackTestPlan, sources: Sources, settings: ServeSettings, observer: StackTestObserver, console: Console
) -> StackTestCompleted:
    """Start serve in-process, run the stack's life on it, stop serve (on Ctrl-C and SIGTERM too): no worker outlives this.

    SIGTERM (a CI runner's stop) cancels the run as Ctrl-C does: asyncio.CancelledError, once serve has stopped.
    """
    loop = asyncio.get_running_loop()
    running = asyncio.current_task()
    assert running is not None
    loop.add_signal_handler(signal.SIGTERM, running.cancel)
    lints_waited_for()  # the steps wait for the template's lint
    try:
        with state_held(settings.stack_state) as hold, aws_calls_routed(settings, console) as routed:
            if AWS_RESOURCE.search(plan.body):
                warm_cloudformation()
            server = await start_server(sources, routed, console)
            hold.tell(server.url)
            try:
                parts = await server.loaded  # an unusable schema stops here
                keep_what_loaded()
                return await StackLifecycle(plan, parts.stacks, observer, routed).run()
            finally:
                await server.stop(routed.shutdown_timeout_s)
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


class StackFollower:
    """Told of each of the stack's events: passes it on, and keeps each physical resource the stack made and what became of it."""

    def __init__(self, stacks: LocalStacks, observer: StackTestObserver) -> None:
        self.stacks = stacks
        self.observer = observer
        self.made: Dict[Tuple[str, str], MadeResource] = {}  # by (LogicalResourceId, PhysicalResourceId)
        self.ended: Dict[Tuple[str, str], str] = {}  # the resource's last DELETE_COMPLETE / DELETE_SKIPPED / DELETE_FAILED
        self.failures: List[str] = []  # the current step's resource failures, "Note CREATE_FAILED: reason", in order

    def __call__(self, event: StackEvent) -> None:
        event = dataclasses.replace(  # serve's flag hints, as this command takes them
            event, reason=for_command(event.reason, COMMAND), hook_status_reason=for_command(event.hook_status_reason, COMMAND)
        )
        self.observer(event)
        if event.resource_type == STACK_TYPE:
            return
        if event.hook_type is not None:
            if event.hook_failure_mode == "FAIL" and (event.hook_status or "").endswith("FAILED"):  # what fails the resource next
                self.failures.append(f"{event.logical_id} {event.hook_status} {event.hook_type}: {_one_line(event.hook_status_reason or '')}")
            return
        if event.status.endswith("_FAILED"):
            self.failures.append(f"{event.logical_id} {event.status}: {_one_line(event.reason or '')}".rstrip(": "))
        if not event.physical_id:
            return
        key = (event.logical_id, event.physical_id)
        stack = self.stacks.store.stacks.get(event.stack_id)
        resource = stack.resources.get(event.logical_id) if stack is not None else None
        if event.status in ("CREATE_COMPLETE", "UPDATE_COMPLETE") and resource is not None and resource.physical_id == event.physical_id:
            self.made[key] = MadeResource(event.logical_id, event.resource_type, event.physical_id, copy.deepcopy(resource.model))
            self.ended.pop(key, None)
        elif event.status in ("DELETE_COMPLETE", "DELETE_SKIPPED", "DELETE_FAILED") and key in self.made:
            self.ended[key] = event.status


class StackLifecycle:
    def __init__(self, plan: StackTestPlan, stacks: LocalStacks, observer: StackTestObserver, settings: ServeSettings) -> None:
        self.plan = plan
        self.stacks = stacks
        self.observer = observer
        self.settings = settings
        self.follower = StackFollower(stacks, observer)
        self.violations: List[ResourceViolation] = []
        self.stack: Optional[Stack] = None
        self.confirmed: Dict[Tuple[str, str], Tuple[Finding, str]] = {}  # each deleted resource, asked right after its DELETE

    async def run(self) -> StackTestCompleted:
        started = time.monotonic()
        steps, no_echo = await self._checked_steps()
        self.observer(StackTestStarted(
            self.plan.stack_name, self.plan.template, [step.describe(no_echo) for step in steps], self.settings.virtual_clock,
            self.settings.runtime.aws_endpoint,
        ))
        self.stacks.operations.contract_listeners.append(self._on_violations)
        engine = self.stacks.store.engine
        engine.on_deleted = self._confirm_gone
        try:
            failed_steps, run = await self._run_steps(steps, no_echo)
            checked_gone, unchecked, leftovers, kept = await self._what_is_left()  # the READs it sends are checked too
        finally:
            engine.on_deleted = None
            self.stacks.operations.contract_listeners.remove(self._on_violations)
        failing = [v for v in self.violations if v.is_error] if self.plan.strict else []
        problems = list(failed_steps)
        problems += [f"contract ✗ {v.line()}" for v in failing]
        problems += [f"left behind: {leftover.line()}" for leftover in leftovers]
        completed = StackTestCompleted(
            self.plan.stack_name, run, len(steps), failed_steps, len(self.follower.made), checked_gone, unchecked,
            list(self.violations), len(failing), leftovers, kept, time.monotonic() - started, problems,
            str(self.stacks.store.state) if self.stacks.store.state is not None else None,
        )
        self.observer(completed)
        return completed

    async def _checked_steps(self) -> Tuple[List[Step], Tuple[str, ...]]:
        """The steps, once the template and every step's parameters are what the service accepts; StackTestRefused if not."""
        plan, store = self.plan, self.stacks.store
        kept = store.find(plan.stack_name)  # one --state keeps from an earlier run
        if kept is not None:
            raise StackTestRefused(
                f"a stack named {plan.stack_name} is already kept in {store.state} ({kept.status}): delete it (cfnrun serve "
                f"--state {store.state}, then aws cloudformation delete-stack) or name this one with --stack-name"
            )
        # cfn-lint's findings are warnings on the console, shown before the first step; a refusal does not wait for them.
        linted = asyncio.ensure_future(self.stacks.calls.lint(plan.body))
        try:
            checked = await self._steps_the_service_accepts()
        except BaseException:
            linted.cancel()
            await asyncio.gather(linted, return_exceptions=True)
            raise
        await linted
        return checked

    async def _steps_the_service_accepts(self) -> Tuple[List[Step], Tuple[str, ...]]:
        plan, store = self.plan, self.stacks.store
        steps = [Step("create", dict(plan.parameters))]
        try:
            await self.stacks.calls.run_macros(plan.body, dict(plan.parameters))  # the account's macros, for the engine to read
            blueprint = store.prepare(plan.body, dict(plan.parameters), {}, plan.stack_name, PLACEHOLDER_ID)
        except (TemplateError, StackError) as error:
            raise StackTestRefused(f"{plan.template}: {_one_line(str(error))}") from None
        for number, changes in enumerate(plan.updates, start=2):
            step = Step("update", dict(changes))
            where = _step_place(plan, number, step, blueprint.no_echo)
            try:
                given = self._update_parameters(blueprint.parameters, changes)
                await self.stacks.calls.run_macros(plan.body, {k: blueprint.parameters.get(k, "") if v is None else v for k, v in given.items()})
                following = self._prepare_update(blueprint, changes)
            except (TemplateError, StackError) as error:
                raise StackTestRefused(f"{where}: {_one_line(str(error))}") from None
            if following.parameters == blueprint.parameters:
                raise StackTestRefused(f"{where}: {NO_UPDATES}")
            blueprint = following
            steps.append(step)
        if not plan.keep:
            steps.append(Step("delete", {}))
        return steps, blueprint.no_echo

    def _prepare_update(self, current: Blueprint, changes: Dict[str, str]) -> Blueprint:
        return self.stacks.store.prepare(
            self.plan.body, self._update_parameters(current.parameters, changes), current.parameters, self.plan.stack_name, PLACEHOLDER_ID
        )

    @staticmethod
    def _update_parameters(current: Dict[str, str], changes: Dict[str, str]) -> Dict[str, Optional[str]]:
        """An update's parameters: the changed ones given, every other one UsePreviousValue (None)."""
        given: Dict[str, Optional[str]] = {key: None for key in current}
        given.update(changes)
        return given

    async def _run_steps(self, steps: List[Step], no_echo: Tuple[str, ...]) -> Tuple[List[str], int]:
        """Run the steps in turn; after a failed create or update only the delete runs. The failures, and the steps run."""
        failed: List[str] = []
        run = 0
        for number, step in enumerate(steps, start=1):
            if failed and step.kind == "update":
                continue
            run += 1
            ok, status, reason = await self._run_step(number, len(steps), step, no_echo)
            if not ok:
                failed.append(f"step {number} ({step.describe(no_echo)}) ended {status}" + (f": {_one_line(reason)}" if reason else ""))
        return failed, run

    async def _run_step(self, number: int, total: int, step: Step, no_echo: Tuple[str, ...]) -> Tuple[bool, str, Optional[str]]:
        self.observer(StepStarted(number, total, step.kind, shown_parameters(step.parameters, no_echo)))
        started = time.monotonic()
        store = self.stacks.store
        self.follower.failures.clear()
        try:
            if step.kind == "create":
                self.stack = store.create_stack(self.plan.stack_name, self.plan.body, dict(step.parameters), {}, on_event=self.follower)
                self.stack.capabilities = (CAPABILITY_IAM, CAPABILITY_NAMED_IAM)  # no call to acknowledge them in: its nested stacks get them
            else:
                assert self.stack is not None, "created by the first step"
                if step.kind == "update":
                    current = dict(self.stack.parameters)
                    store.update_stack(self.stack.stack_id, None, self._update_parameters(current, step.parameters), None)
                else:
                    store.delete_stack(self.stack.stack_id)
        except (TemplateError, StackError) as error:
            status = self.stack.status if self.stack is not None else "refused"
            self.observer(StepCompleted(number, step.kind, status, False, time.monotonic() - started, str(error)))
            return False, status, str(error)
        stack = self.stack
        settling = asyncio.ensure_future(store.settled(stack.stack_id))
        try:
            while not settling.done():
                await asyncio.wait([settling], timeout=PROGRESS_EVERY_S)
                working = [f"{r.logical_id} {r.status}" for r in stack.resources.values() if r.status.endswith("_IN_PROGRESS")]
                if working and not settling.done():
                    self.observer(StepProgress(number, working, time.monotonic() - started))
        finally:
            settling.cancel()  # interrupted: the store's operation itself runs on until serve stops it
        ok = stack.status == STEP_ENDS[step.kind]
        # why it failed: the first resource failure (what the rollback answers), else the stack's own reason
        reason = stack.reason if ok or not self.follower.failures else self.follower.failures[0]
        self.observer(StepCompleted(number, step.kind, stack.status, ok, time.monotonic() - started, reason))
        return ok, stack.status, reason

    def _on_violations(self, report: ContractReport) -> None:
        if self.stack is None or report.stack_id != self.stack.stack_id:
            return
        for violation in report.violations:
            self.violations.append(ResourceViolation(report.logical_id or "", report.type_name, report.action.value, violation))

    async def _confirm_gone(self, stack: Stack, resource: StackResource) -> None:
        """Right after its DELETE_COMPLETE, before what it depends on goes: is the resource gone? (An item cannot be read
        once its table is gone, whether it was deleted or not.)"""
        made = self.follower.made.get((resource.logical_id, resource.physical_id or ""))
        if self.stack is None or stack.stack_id != self.stack.stack_id or made is None:
            return
        try:
            found = await self.stacks.leftovers.check(made, stack.stack_id, stack.name)
        except Exception as error:  # noqa: B902 - the check never fails the stack's delete: its resource is left unchecked
            found = (Finding.UNCHECKED, f"cfnrun failed asking whether it is gone: {type(error).__name__}: {error}")
        self.confirmed[(made.logical_id, made.physical_id)] = found

    async def _what_is_left(self) -> Tuple[int, List[str], List[Leftover], List[str]]:
        """Each resource the stack deleted, asked whether it is gone; those it did not delete, kept or left."""
        follower, stack = self.follower, self.stack
        gone, unchecked, leftovers, kept = 0, [], [], []
        for key, made in follower.made.items():
            ended = follower.ended.get(key)
            named = f"{made.logical_id} ({made.type_name}) {made.physical_id}"
            if ended == "DELETE_SKIPPED":
                kept.append(f"{named}: retained (DeletionPolicy)")
            elif ended == "DELETE_COMPLETE":
                assert stack is not None
                confirmed = self.confirmed.get(key)
                finding, detail = confirmed if confirmed is not None else await self.stacks.leftovers.check(made, stack.stack_id, stack.name)
                if finding is Finding.GONE:
                    gone += 1
                elif finding is Finding.UNCHECKED:
                    unchecked.append(f"{named}: {detail}")
                else:
                    leftovers.append(Leftover(made.logical_id, made.type_name, made.physical_id, detail))
            elif self.plan.keep:
                kept.append(named)
            else:
                why = "the stack's delete failed on it" if ended == "DELETE_FAILED" else "the stack never deleted it"
                leftovers.append(Leftover(made.logical_id, made.type_name, made.physical_id, why))
        return gone, unchecked, leftovers, kept


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.splitlines() if part.strip())
