"""``cfnrun invoke`` end to end: project → request → warm worker → operation → result."""
from __future__ import annotations

import asyncio
import contextlib
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from cfnrun.app.loaded_objects import keep_what_loaded
from cfnrun.contract.mode import ContractMode
from cfnrun.model.endpoint_url import check_endpoint_url
from cfnrun.model.errors import CfnrunError
from cfnrun.invoker.clock import RealClock, VirtualClock
from cfnrun.invoker.credentials import caller_credentials
from cfnrun.invoker.region import local_region
from cfnrun.events.masking import LiveMask
from cfnrun.events.operation import Observer, OperationResult
from cfnrun.invoker.operation import DEFAULT_STALL_LIMIT, Operation
from cfnrun.invoker.payloads import Entrypoint, OperationRequest
from cfnrun.invoker.hook_request_files import HOOK_TEST_EVENT, hook_input
from cfnrun.invoker.retries import NO_RETRY, RetryPolicy
from cfnrun.invoker.request_files import SAM_TESTS, OperationInput, load_request_file
from cfnrun.model.action import action_mismatch
from cfnrun.model.patterns import skipped_pattern_note, unusable_patterns
from cfnrun.model.type_configuration import (
    DEFAULT_TYPE_CONFIGURATION,
    declares_type_configuration,
    load_type_configuration,
    type_configuration_problem,
)
from cfnrun.model.project import Project, find_project_root, find_request_file, handler_project, load_project
from cfnrun.model.protocol import Action
from cfnrun.app.moto_server import aws_endpoint_choice, moto_server
from cfnrun.app.settings.invoke import InvokeSettings
from cfnrun.app.history import operation_record, operation_recorder, request_masker
from cfnrun.history.masking import Masker
from cfnrun.history.recorder import OperationRecorder
from cfnrun.history.store import not_recorded
from cfnrun.history.store import HistoryStore
from cfnrun.history.writer import HistoryWriter
from cfnrun.app.preflight import interpreter_version, runtime_mismatch
from cfnrun.runtime.pool import FunctionPool
from cfnrun.runtime.process import WorkerInitError
from cfnrun.runtime.target import FunctionTarget
from cfnrun.runtime.spec import WorkerSpec, worker_spec
from cfnrun.model.template import FunctionSpec

if TYPE_CHECKING:
    from cfnrun.app.early_start import EarlyStart
    from cfnrun.app.watcher import ChangeFeed


class ProviderLoadError(CfnrunError):
    """The provider's code could not be imported into a worker."""

    def __init__(self, error: WorkerInitError) -> None:
        message = f"cannot load the provider: {error.error.error_type}: {error}"
        if "No module named" in str(error) and ".models'" in str(error):
            message += "\n  hint: models.py is generated from the schema: run 'cfn generate' in the project folder"
        super().__init__(message)
        self.logs = error.logs
        self.stack_trace: List[str] = list(error.error.stack_trace or ())


@dataclass
class PreparedInvoke:
    settings: InvokeSettings
    project: Project
    function: FunctionSpec
    request: OperationRequest
    notes: List[str]
    remote_function: Optional[str] = None  # --lambda-endpoint: the function's name there
    embedded_moto: bool = False  # settings.aws_endpoint is the --moto server this command started


def _load_project(settings: InvokeSettings) -> Project:
    if settings.handler or settings.schema:
        if not (settings.handler and settings.schema):
            raise CfnrunError("--handler and --schema go together: pass both to run without a project")
        return handler_project(settings.handler, settings.schema, settings.code_dir or Path("."))
    return load_project(settings.project_dir or find_project_root(Path.cwd()) or Path("."))


def _region(settings: InvokeSettings, operation: OperationInput) -> str:
    return settings.region or operation.region or local_region(settings.profile)


def _reads_type_configuration(project: Project) -> bool:
    """Does the entrypoint module build its Resource with a TypeConfigurationModel? True when it cannot tell."""
    if not project.entrypoint or "." not in project.entrypoint:
        return True
    module = project.code_dir.joinpath(*project.entrypoint.split(".")[:-1]).with_suffix(".py")
    try:
        return "TypeConfigurationModel" in module.read_text(encoding="utf-8", errors="replace").split("Resource(", 1)[-1].split(")", 1)[0]
    except OSError:
        return True


def _apply_type_configuration(settings: InvokeSettings, project: Project, operation: OperationInput, notes: List[str]) -> None:
    """--typeconfig (or cfn's default file, for a schema with typeConfiguration) into the request, checked first."""
    source = settings.typeconfig
    default = DEFAULT_TYPE_CONFIGURATION.expanduser()
    if source is None and operation.type_configuration is None and declares_type_configuration(project.schema) and default.is_file():
        source = default
        notes.append(f"type configuration from {DEFAULT_TYPE_CONFIGURATION}, as cfn reads it (--typeconfig FILE names another)")
    if source is not None:
        if operation.type_configuration is not None:
            notes.append(f"--typeconfig {source} replaces the request's typeConfiguration")
        operation.type_configuration = load_type_configuration(source, project.is_hook)
    elif operation.type_configuration is None or not declares_type_configuration(project.schema):
        return
    problem = type_configuration_problem(project.schema, operation.type_configuration)
    if problem:
        raise CfnrunError(
            f"{source or 'the request'}: the type configuration does not fit the schema's typeConfiguration: {problem} "
            "(CloudFormation would answer InvalidTypeConfiguration; the handler was not invoked)"
        )


def _undeclared_handler(project: Project, action: Action) -> Optional[str]:
    """A note when the schema's ``handlers`` leaves this action out: CloudFormation would not call it."""
    handlers = project.schema.document.get("handlers")
    if not isinstance(handlers, dict) or project.schema.handler(action) is not None:
        return None
    note = f"the schema declares no {action.schema_handler} handler, so CloudFormation would never call it"
    if action is Action.UPDATE:
        note += " (it would replace the resource: CREATE a new one, then DELETE the old)"
    return note + f"; add handlers.{action.schema_handler} to the schema if the provider supports it"


def _request_path(given: str, project: Project, notes: List[str]) -> str:
    """The request file where ``find_request_file`` finds it, saying so when that is in the project."""
    found = find_request_file(given, project.root)
    if found is None:
        raise CfnrunError(f"{given}: request file not found (looked in the current folder and in the project, {project.root})")
    if found != given:
        notes.append(f"request file {given}: not in the current folder; using {found}")
    return found


def prepare(settings: InvokeSettings) -> PreparedInvoke:
    """Everything that can fail on bad input, before any process starts."""
    aws_endpoint_choice(settings.aws_endpoint, settings.moto)
    _lambda_endpoint_choice(settings)
    project = _load_project(settings)
    notes: List[str] = []
    if not settings.in_process and not settings.lambda_endpoint:
        mismatch = runtime_mismatch(project, interpreter_version(settings.python))
        if mismatch:
            notes.append(mismatch)
    mismatch = action_mismatch(settings.action, project.is_hook)
    if mismatch:
        raise CfnrunError(mismatch)
    undeclared = _undeclared_handler(project, settings.action)
    notes += [undeclared] if undeclared else []
    if settings.contract is not ContractMode.OFF:
        notes += [skipped_pattern_note(pointer, pattern) for pointer, pattern in unusable_patterns(project.schema.document)]
    properties = list((project.schema.document.get("properties") or {}).keys())
    if settings.request_file and settings.request is None:
        settings = replace(settings, request_file=_request_path(settings.request_file, project, notes))
    if settings.request is not None:
        operation = settings.request
    elif project.is_hook:
        operation = hook_input(settings.request_file)
    else:
        operation = load_request_file(settings.request_file, properties) if settings.request_file else OperationInput(desired={})
    notes += operation.warnings
    _apply_type_configuration(settings, project, operation, notes)
    if operation.type_configuration is not None and not project.is_hook and not _reads_type_configuration(project):
        notes.append(
            f"the request carries typeConfiguration, but {project.entrypoint} is built without a TypeConfigurationModel "
            "(Resource(TYPE_NAME, ResourceModel)), so the handler gets request.typeConfiguration = None: "
            "pass TypeConfigurationModel from models.py as Resource's third argument"
        )
    if settings.action is Action.UPDATE and operation.previous is None:
        notes.append(
            "UPDATE without previousResourceState: the handler gets None where CloudFormation sends the current model; "
            "add previousResourceState to the request file"
        )
    if settings.action is Action.UPDATE_PRE_PROVISION and operation.previous is None:
        notes.append(
            "preUpdate without previousResourceProperties: the hook gets None where CloudFormation sends the target's "
            "current properties (the stock cfn init hook fails on it); add targetModel.previousResourceProperties to the request file"
        )
    if operation.action and operation.action is not settings.action:
        notes.append(
            f"the request file says {operation.action.value}; running {settings.action.value} as asked"
        )
    entrypoint = settings.entrypoint or (Entrypoint.TEST if operation.format in (SAM_TESTS, HOOK_TEST_EVENT) else Entrypoint.TYPE)
    remote_function = None
    if settings.lambda_endpoint:
        function, remote_function = _remote_function(settings, project, entrypoint)
        notes.append(
            f"the calls go to {remote_function} on {settings.lambda_endpoint} (budgets from {function.logical_id} in template.yml)"
        )
    elif settings.function:
        function = project.function(settings.function)
        if settings.entrypoint is None and entrypoint is Entrypoint.TYPE and function.handler == project.test_entrypoint != project.entrypoint:
            entrypoint = Entrypoint.TEST
            notes.append(
                f"{function.logical_id} is the test entrypoint: it gets a sam-tests event (--entrypoint type sends a HandlerRequest)"
            )
    elif entrypoint is Entrypoint.TEST:
        function = project.test_function()
    else:
        function = project.type_function()
    credentials = operation.credentials
    if credentials is None:
        rerouted = settings.aws_endpoint or ("moto" if settings.moto else None) or _stand_in(settings.lambda_endpoint)
        credentials, note = caller_credentials(settings.profile, settings.use_credentials, rerouted)
        notes += [note] if note else []
    request_class = OperationRequest
    if project.is_hook:
        from cfnrun.invoker.hook_payloads import HookOperationRequest

        request_class = HookOperationRequest
    request = request_class(
        action=settings.action,
        type_name=project.type_name,
        region=_region(settings, operation),
        account_id=settings.account_id,
        entrypoint=entrypoint,
        operation=operation,
        credentials=credentials,
        string_primitives=settings.string_primitives,
    )
    return PreparedInvoke(settings, project, function, request, notes, remote_function)


def _stand_in(lambda_endpoint: Optional[str]) -> Optional[str]:
    """A Lambda endpoint that is not AWS's own gets placeholder caller credentials, as --aws-endpoint does."""
    if not lambda_endpoint:
        return None
    host = lambda_endpoint.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0]
    return None if lambda_endpoint.startswith("https://") and host.endswith(".amazonaws.com") else lambda_endpoint


def _lambda_endpoint_choice(settings: InvokeSettings) -> None:
    """--lambda-endpoint runs nothing locally: the flags about local workers do not go with it."""
    url = settings.lambda_endpoint
    if not url:
        return
    check_endpoint_url("--lambda-endpoint", url, "http://127.0.0.1:3001")
    local_only = {
        "--in-process": settings.in_process,
        "--watch": settings.watch,
        "--inject": bool(settings.faults),
        "--moto": settings.moto,
        "--aws-endpoint": bool(settings.aws_endpoint),
        "--python": settings.python != sys.executable,
    }
    clashing = [flag for flag, given in local_only.items() if given]
    if clashing:
        raise CfnrunError(
            f"--lambda-endpoint sends the calls to {url}, where the function runs as deployed there; "
            f"{', '.join(clashing)} only change{'s' if len(clashing) == 1 else ''} how cfnrun runs it locally: drop one or the other"
        )


def _remote_function(settings: InvokeSettings, project: Project, entrypoint: Entrypoint) -> "tuple[FunctionSpec, str]":
    """The template function whose Timeout applies, and the name to invoke at the endpoint (--function, else the template's)."""
    local = project.find_function(settings.function) if settings.function else None
    if local is None:
        local = project.test_function() if entrypoint is Entrypoint.TEST else project.type_function()
    return local, settings.function or local.function_name or local.logical_id


def make_target(
    prepared: PreparedInvoke, standby: bool, env: Optional[Dict[str, str]] = None, early: Optional["EarlyStart"] = None
) -> FunctionTarget:
    """Where the operation runs; ``env`` adds variables to the worker's Lambda environment; ``early``: a worker started for it."""
    settings, request = prepared.settings, prepared.request
    if settings.lambda_endpoint and prepared.remote_function:
        from cfnrun.runtime.lambda_endpoint import LambdaEndpointFunction  # boto3: only for --lambda-endpoint

        return LambdaEndpointFunction(settings.lambda_endpoint, prepared.remote_function, request.region, settings.profile)
    if settings.in_process:
        from cfnrun.runtime.in_process import InProcessFunction  # the handler host: only for --in-process

        return InProcessFunction(
            prepared.project, prepared.function, request.region, settings.account_id, settings.log_level, settings.aws_endpoint,
            settings.faults,
        )
    spec = local_spec(prepared, env)
    # The worker the early start began for this command, if it was started for exactly this spec.
    return FunctionPool(spec, size=1, standby=standby, first=early.take(spec) if early is not None else None)


def local_spec(prepared: PreparedInvoke, env: Optional[Dict[str, str]] = None) -> WorkerSpec:
    """The worker spec of the function's local workers; ``env`` adds variables to their environment."""
    spec = worker_spec(prepared.project, prepared.function, prepared.settings.runtime(prepared.request.region))
    if env:
        spec = replace(spec, env={**spec.env, **env})
    return spec


async def run_operation(
    prepared: PreparedInvoke,
    target: FunctionTarget,
    observers: List[Observer],
    history: Optional[HistoryWriter] = None,
    mask: Optional[LiveMask] = None,
) -> OperationResult:
    """Run one operation on ``target``; ``history``: its record is written in that writer's batch, not in line;
    ``mask``: set to hide the request's secrets, as the record does, in what the observers print."""
    settings = prepared.settings
    masker = request_masker(prepared.project.schema, prepared.request)
    if mask is not None:
        mask.use(masker.masked_output if masker.has_secrets else None)
    recorder = recorder_for(prepared, history, masker)
    if recorder is not None:
        observers = observers + [recorder]
    checker = None
    if settings.contract is not ContractMode.OFF:
        from cfnrun.contract.checker import ContractChecker  # jsonschema and the wire models: only to check

        operation_input = prepared.request.operation
        hook = None
        if prepared.project.is_hook:
            from cfnrun.model.hook_targets import hook_target

            hook = hook_target(prepared.project.root, prepared.project.schema, settings.action, operation_input.target_name or "")
        checker = ContractChecker(
            prepared.project.schema, settings.action, operation_input.desired, operation_input.previous, target=hook
        )
    operation = Operation(
        target,
        prepared.request,
        prepared.project.schema,
        function_name=prepared.function.logical_id,
        budgets=settings.budgets,
        function_timeout_s=prepared.function.timeout_s,
        clock=VirtualClock() if settings.virtual_clock else RealClock(),
        observers=observers,
        max_reinvoke=settings.max_reinvoke,
        checker=checker,
        strict=settings.contract is ContractMode.STRICT,
        stall_limit=None if settings.keep_polling else DEFAULT_STALL_LIMIT,
        retry=RetryPolicy() if settings.retry else NO_RETRY,
        command="cfnrun invoke",
    )
    return await operation.run()


async def execute(
    prepared: PreparedInvoke,
    observers: List[Observer],
    on_change: Optional[Callable[[str], None]] = None,
    on_note: Optional[Callable[[str], None]] = None,
    early: Optional["EarlyStart"] = None,
    mask: Optional[LiveMask] = None,
) -> OperationResult:
    """Run the operation (``--moto``: with a moto server for as long as this runs), see ``run_watched``."""
    if not prepared.settings.moto:
        return await run_watched(prepared, observers, on_change, early, mask)
    with moto_server() as url:
        (on_note or (lambda message: None))(f"moto server (AWS stand-in) at {url}: the handler's AWS calls go there")
        prepared.settings = replace(prepared.settings, aws_endpoint=url, moto=False)  # --watch runs reuse this server
        prepared.embedded_moto = True
        return await run_watched(prepared, observers, on_change, early, mask)


async def run_watched(
    prepared: PreparedInvoke,
    observers: List[Observer],
    on_change: Optional[Callable[[str], None]] = None,
    early: Optional["EarlyStart"] = None,
    mask: Optional[LiveMask] = None,
) -> OperationResult:
    """Run the operation; with ``settings.watch``, run it again after every save, until cancelled."""
    settings = prepared.settings
    target = make_target(prepared, standby=settings.watch, early=early)
    history = history_writer(prepared)
    request_file = [Path(settings.request_file)] if settings.request_file and settings.request_file != "-" else []
    say = on_change or (lambda message: None)
    feed: Optional[ChangeFeed] = None
    if settings.watch:
        from cfnrun.app.watcher import ChangeFeed, describe_change  # the file watcher loads only for --watch

        feed = ChangeFeed(prepared.project, request_file)
    try:
        if feed is not None:
            await feed.start()
        warming = asyncio.ensure_future(target.warm())
        try:
            try:
                await asyncio.sleep(0)  # the worker's start begins (one the early start spawned imports the provider already)
                _ready_for_the_call(prepared)
                keep_what_loaded()
            except BaseException:  # noqa: B902 - interrupted meanwhile: the warm-up goes too, then the target closes
                warming.cancel()
                await asyncio.gather(warming, return_exceptions=True)
                raise
            await warming
        except WorkerInitError as error:
            if not settings.watch:
                raise ProviderLoadError(error) from None
        result = await run_operation(prepared, target, observers, history, mask)
        if feed is None:
            return result
        while True:
            watched = " and " + str(request_file[0]) if request_file else ""
            say(f"watching {prepared.project.root}{watched} for saves; Ctrl-C to stop")
            change = await feed.next()
            say(f"{describe_change(change, prepared.project.root)}: running {settings.action.value} again")
            try:
                fresh = prepare(settings)
            except CfnrunError as error:
                say(f"{error}; waiting for the next save")
                continue
            if fresh.function != prepared.function or fresh.project.code_dir != prepared.project.code_dir:
                await target.close()
                target = make_target(fresh, standby=True)
            else:
                await target.reload()
            fresh.embedded_moto = prepared.embedded_moto
            prepared = fresh
            result = await run_operation(prepared, target, observers, history, mask)
    finally:
        if feed is not None:
            feed.stop()
        await _closed(target, history)


async def _closed(target: FunctionTarget, history: Optional[HistoryWriter]) -> None:
    """The target closed (its worker killed and reaped, what it started swept) while the history writes what it
    was handed and closes its file: both mostly wait, on the kernel and on the disk (the record's commit and the
    write-ahead log folded back in), so a one-shot invoke's end waits for the longer of the two, not their sum."""
    if history is None:
        await target.close()
        return
    written = asyncio.get_running_loop().run_in_executor(None, history.close)
    try:
        await target.close()
    finally:  # interrupted meanwhile: asyncio.run still waits for the executor, so the record is written
        await asyncio.shield(written)


def _ready_for_the_call(prepared: PreparedInvoke) -> None:
    """What the first call needs, loaded while the worker imports the provider rather than after: the contract
    checker's modules and the validators of the wire models (built once, when first used) of the answer and, for a
    hook, of the request (a resource type's HandlerRequest is a plain dict).

    Nothing here is kept or sent: the request is built again, the same, for the call (which raises what building
    it raises, where it did)."""
    if prepared.settings.contract is not ContractMode.OFF:
        import cfnrun.contract.checker  # noqa: F401

        if prepared.project.is_hook:
            import cfnrun.model.hook_targets  # noqa: F401
    with contextlib.suppress(Exception):
        prepared.request.payload()
    with contextlib.suppress(Exception):  # an empty answer is refused, once the answer's validator is built
        prepared.request.read_response({})


def request_record(prepared: "PreparedInvoke", masker: Masker) -> Dict[str, Any]:
    """What ``cfnrun replay`` needs to run the operation again: the request (writeOnly values masked) and the flags.

    The flags are the recorded options of ``InvokeSettings`` (``app/settings/invoke.py``) with the values the run
    resolved: the function, entrypoint and region it used, and ``--moto`` rather than the moto server's
    address (replay starts a fresh one); with ``--lambda-endpoint``, the function's name there too.
    """
    settings = prepared.settings
    ran_with = replace(
        settings,
        function=prepared.function.logical_id,
        entrypoint=prepared.request.entrypoint,
        region=prepared.request.region,
        credentials=settings.use_credentials,
        moto=prepared.embedded_moto,
        aws_endpoint=None if prepared.embedded_moto else settings.aws_endpoint,
    )
    record = operation_record("invoke", prepared.project.type_name, prepared.request.operation, ran_with, masker)
    record["settings"]["lambdaFunction"] = prepared.remote_function
    return record


def history_store(prepared: "PreparedInvoke", say: Callable[[CfnrunError], None] = not_recorded) -> Optional[HistoryStore]:
    """The project's history store, unless recording is off; ``say``: how a bad CFNRUN_HISTORY_LIMIT is said."""
    if prepared.settings.handler or prepared.settings.schema:
        return None  # --handler/--schema: no project folder to keep a history in
    try:
        return HistoryStore.for_recording(prepared.project.root)
    except CfnrunError as error:  # said, and the operation runs anyway
        say(error)
        return None


def history_writer(prepared: "PreparedInvoke") -> Optional[HistoryWriter]:
    """A history writer for the command's records (``_closed`` closes it), unless recording is off."""
    store = history_store(prepared, say=lambda error: None)  # said by recorder_for, for each operation, as without a writer
    return HistoryWriter(store) if store is not None else None


def recorder_for(
    prepared: "PreparedInvoke", history: Optional[HistoryWriter] = None, masker: Optional[Masker] = None
) -> Optional[OperationRecorder]:
    """An observer recording the operation in the project's history, unless recording is off; through ``history``
    (its thread) when given, else in line; ``masker``: the request's (``request_masker``), when made already."""
    store = history.store if history is not None else history_store(prepared)
    if store is None:
        return None
    return operation_recorder(
        store, prepared.project.schema, prepared.request, lambda masker: request_record(prepared, masker), history, masker
    )
