"""The ``cfnrun`` command line.

Start-up is part of the product: at module level only typer and the light modules the
options name are imported. Each command imports what it runs inside its own body, so
``--help``, ``--version``, ``validate`` and ``invoke`` never load the server (aiohttp),
the file watcher or cloudformation-cli (tests/test_fast_start.py holds this).
"""
from __future__ import annotations

import enum
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, List, Optional

import typer

from cfnrun import __version__
from cfnrun.contract.mode import ContractMode
from cfnrun.invoker.choices import DEFAULT_STALL_LIMIT, Entrypoint
from cfnrun.model.action import Action, action_from_argument
from cfnrun.model.errors import CfnrunError
from cfnrun.model.faults import parse_faults
from cfnrun.runtime.environment import DEFAULT_ACCOUNT_ID

if TYPE_CHECKING:
    from cfnrun.events.operation import Observer


class Switch(str, enum.Enum):
    ON = "on"
    OFF = "off"


REGION_HELP = "AWS_REGION the workers see (default: AWS_REGION, AWS_DEFAULT_REGION, the profile's, or us-east-1)."
EXIT_SUCCESS = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Run and check CloudFormation resource type handlers written in Python, locally, without Docker.",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cfnrun {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    pass


def _fail(message: str, details: Optional[List[str]] = None, json_output: bool = False) -> "typer.Exit":
    typer.echo(f"cfnrun: error: {message}", err=True)
    for line in details or []:
        typer.echo(line, err=True)
    if json_output:
        typer.echo(json.dumps({"event": "error", "message": message, "details": details or [], "exitCode": EXIT_USAGE}))
    return typer.Exit(EXIT_USAGE)


LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "WARN", "INFO", "DEBUG", "NOTSET")


def _action(value: str) -> str:
    """The action's own value (``preCreate`` → ``CREATE_PRE_PROVISION``); a string, which every typer passes on as is."""
    try:
        return action_from_argument(value).value
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None


def _log_level(value: str) -> str:
    if value.upper() not in LOG_LEVELS:
        raise typer.BadParameter(f"{value!r} is not a logging level: use one of {', '.join(LOG_LEVELS)}")
    return value.upper()


PROJECT_HELP = "The provider project folder (holds .rpdk-config); default: the nearest one at or above the current folder."


def _project_option() -> Any:
    return typer.Option(None, "--project", "-p", help=PROJECT_HELP)


def _aws_endpoint_option() -> Any:
    return typer.Option(
        None, "--aws-endpoint", help="Send the handlers' AWS calls to this URL (a moto server, LocalStack...); placeholder credentials unless --profile."
    )


def _inject_option() -> Any:
    return typer.Option(
        [], "--inject", metavar="SERVICE:Operation=EFFECT",
        help="Fault in the handlers' AWS calls (repeatable): ssm:PutParameter=ThrottlingException, ...=+2s (a delay), "
        "suffix @N for the N-th matching call only or %P for P percent of them.",
    )


def _moto_option() -> Any:
    return typer.Option(False, "--moto", help="Start a moto server for the handlers' AWS calls, for as long as the command runs (pip install 'cfnrun[moto]').")


def _project_argument() -> Any:
    return typer.Argument(None, help=PROJECT_HELP + " Same as --project.", show_default=False)


def _project_dir(positional: Optional[Path], option: Optional[Path]) -> Path:
    """One way to name the project on every command: a positional path or -p/--project, else found like git."""
    if positional is not None and option is not None and positional.resolve() != option.resolve():
        raise CfnrunError(f"two projects named: {positional} and --project {option}; name one")
    named = positional or option
    if named is not None:
        return named
    from cfnrun.model.project import find_project_root

    return find_project_root(Path.cwd()) or Path(".")


@app.command()
def invoke(
    action: str = typer.Argument(
        ..., parser=_action, metavar="ACTION",
        help="CREATE, READ, UPDATE, DELETE or LIST; in a hook project CREATE_PRE_PROVISION (preCreate), UPDATE_… or DELETE_….",
    ),
    request_file: Optional[str] = typer.Argument(
        None,
        help="A 'cfn invoke' request file or a sam-tests event ('-' reads standard input). "
        "Without one, the desired state is empty.",
    ),
    project: Optional[Path] = _project_option(),
    handler: Optional[str] = typer.Option(None, help="Run without a project: the handler as MODULE.ATTRIBUTE."),
    schema: Optional[Path] = typer.Option(None, help="Run without a project: the resource schema file."),
    code_dir: Optional[Path] = typer.Option(None, help="Run without a project: the folder to import the handler from."),
    function: Optional[str] = typer.Option(None, help="The template function to invoke (default: TypeFunction, or TestEntrypoint for a sam-tests event); with --lambda-endpoint, its name there."),
    entrypoint: Optional[Entrypoint] = typer.Option(
        None, case_sensitive=False, help="Request shape: 'type' (HandlerRequest) or 'test' (sam-tests event). Default: from the request file."
    ),
    region: Optional[str] = typer.Option(None, help="Region of the request (default: AWS_REGION, the profile's, or us-east-1)."),
    account_id: str = typer.Option("123456789012", help="awsAccountId of the request."),
    profile: Optional[str] = typer.Option(None, help="AWS profile for the caller credentials."),
    credentials: bool = typer.Option(
        True, "--credentials/--no-credentials", help="Pass local AWS credentials to the handler (--no-credentials: placeholder keys)."
    ),
    max_reinvoke: Optional[int] = typer.Option(None, min=0, help="Stop after N re-invocations (IN_PROGRESS callbacks or LIST pages)."),
    keep_polling: bool = typer.Option(
        False,
        "--keep-polling",
        help="Keep calling a handler that answers the same IN_PROGRESS with no delay (default: stop after "
        f"{DEFAULT_STALL_LIMIT} identical answers); the operation still ends at timeoutInMinutes.",
    ),
    virtual_clock: bool = typer.Option(False, "--virtual-clock", help="Skip CallbackDelaySeconds waits but count them against the operation timeout."),
    time_scale: float = typer.Option(1.0, min=0.0001, help="Multiply every time limit (60 s / 30 s budgets, timeoutInMinutes) by this factor."),
    invocation_timeout: Optional[float] = typer.Option(None, min=0.001, help="Override the per-invocation budget, in seconds."),
    operation_timeout: Optional[float] = typer.Option(None, min=0.001, help="Override the whole operation's timeout, in seconds."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object per event (NDJSON)."),
    log_level: str = typer.Option("INFO", callback=_log_level, help="Level of the handler's root logger."),
    python: str = typer.Option(sys.executable, help="Python interpreter that runs the provider."),
    memory_limit: Switch = typer.Option(
        Switch.ON, "--memory-limit", help="Kill a worker whose real memory exceeds its function's MemorySize (on|off)."
    ),
    print_request: bool = typer.Option(
        False, "--print-request", help="Print the first request (HandlerRequest or sam-tests event) as JSON and exit, "
        "e.g. for aws lambda invoke against cfnrun serve. Credentials are left out."
    ),
    watch: bool = typer.Option(False, "--watch", help="After the operation, run it again every time a project file is saved."),
    in_process: bool = typer.Option(
        False, "--in-process", help="Run the handler inside cfnrun, so breakpoint(), pdb and IDE debuggers work."
    ),
    contract: ContractMode = typer.Option(
        ContractMode.WARN, case_sensitive=False, help="Check requests and events against the handler contract: warn, strict (a MUST violation fails), off."
    ),
    string_primitives: bool = typer.Option(
        False, "--string-primitives", help="Send numbers and booleans as strings, as CloudFormation does for template values."
    ),
    typeconfig: Optional[Path] = typer.Option(
        None, "--typeconfig", help="Type configuration file in cfn's format (default ~/.cfn-cli/typeConfiguration.json when the schema has typeConfiguration)."
    ),
    aws_endpoint: Optional[str] = _aws_endpoint_option(),
    moto: bool = _moto_option(),
    inject: List[str] = _inject_option(),
    lambda_endpoint: Optional[str] = typer.Option(
        None, "--lambda-endpoint", metavar="URL", help="Invoke the function on this Lambda Invoke API (sam local start-lambda, LocalStack, "
        "cfnrun serve, https://lambda.REGION.amazonaws.com) instead of local workers; --function names it there."
    ),
    retry: bool = typer.Option(
        True, "--retry/--no-retry", help="Re-invoke FAILED Throttling, NetworkFailure, ServiceInternalError or ResourceConflict "
        "answers with backoff (1 s, 2 s, 4 s), as the service does."
    ),
) -> None:
    """Run one operation as CloudFormation would, replaying IN_PROGRESS until it ends.

    Exit status: 0 SUCCESS, 1 FAILED (or stopped early), 2 usage or project error.
    """
    from cfnrun.app import early_start
    from cfnrun.app.invoke import InvokeSettings, ProviderLoadError, execute, prepare
    from cfnrun.model.budgets import Budgets
    from cfnrun.ui.ndjson import NdjsonRenderer
    from cfnrun.ui.timeline import TimelineRenderer

    try:
        project_dir = project if (handler or schema) else _project_dir(None, project)
        faults = parse_faults(inject)
    except CfnrunError as error:
        raise _fail(str(error), json_output=json_output) from None
    settings = InvokeSettings(
        action=Action(action),
        request_file=request_file,
        project_dir=project_dir or Path("."),
        handler=handler,
        schema=schema,
        code_dir=code_dir,
        function=function,
        entrypoint=entrypoint,
        region=region,
        account_id=account_id,
        profile=profile,
        use_credentials=credentials and not print_request,
        budgets=Budgets(time_scale, invocation_timeout, operation_timeout),
        virtual_clock=virtual_clock,
        max_reinvoke=max_reinvoke,
        keep_polling=keep_polling,
        log_level=log_level,
        python=python,
        memory_limit=memory_limit is Switch.ON,
        watch=watch,
        in_process=in_process,
        contract=contract,
        string_primitives=string_primitives,
        typeconfig=typeconfig,
        aws_endpoint=aws_endpoint,
        moto=moto,
        retry=retry,
        faults=faults,
        lambda_endpoint=lambda_endpoint,
    )
    try:
        prepared = prepare(settings)
    except CfnrunError as error:
        raise _fail(str(error), json_output=json_output) from None
    if print_request:
        prepared.request.credentials = None  # never printed
        typer.echo(json.dumps(prepared.request.payload(), indent=2))
        raise typer.Exit(EXIT_SUCCESS)
    schema_obj = prepared.project.schema
    renderer: Observer = NdjsonRenderer(sys.stdout, schema_obj) if json_output else TimelineRenderer(sys.stdout, schema_obj)
    for note in prepared.notes:
        typer.echo(f"cfnrun: note: {note}", err=True)
    try:
        result = early_start.run(execute(  # then kills an early worker the operation did not adopt
            prepared, [renderer],
            on_change=lambda message: typer.echo(f"\ncfnrun: {message}", err=True),
            on_note=lambda message: typer.echo(f"cfnrun: {message}", err=True),
        ))
    except ProviderLoadError as error:
        details = [line.rstrip() for line in error.stack_trace]
        if error.logs.strip():
            details += ["output while importing:", error.logs.rstrip()]
        raise _fail(str(error), details, json_output=json_output) from None
    except CfnrunError as error:
        raise _fail(str(error), json_output=json_output) from None
    except KeyboardInterrupt:
        typer.echo("cfnrun: interrupted; workers stopped", err=True)
        raise typer.Exit(130) from None
    raise typer.Exit(EXIT_SUCCESS if result.succeeded else EXIT_FAILED)


@app.command()
def serve(
    project_path: Optional[Path] = _project_argument(),
    project: Optional[Path] = _project_option(),
    host: str = typer.Option("127.0.0.1", help="Address to bind. Anything but loopback exposes your handlers."),
    port: int = typer.Option(3001, min=0, max=65535, help="Port to listen on (0 picks a free one)."),
    workers: int = typer.Option(4, min=1, help="Warm workers per function: calls beyond this queue."),
    region: Optional[str] = typer.Option(None, help=REGION_HELP),
    profile: Optional[str] = typer.Option(None, help="AWS profile whose region applies when --region and AWS_REGION are not set."),
    account_id: str = typer.Option(DEFAULT_ACCOUNT_ID, help="Account id in the function ARN."),
    time_scale: float = typer.Option(1.0, min=0.0001, help="Multiply every time limit (function Timeout, contract budgets)."),
    invocation_timeout: Optional[float] = typer.Option(None, min=0.001, help="Override every call's time limit, in seconds."),
    log_level: str = typer.Option("INFO", callback=_log_level, help="Level of the handlers' root logger."),
    python: str = typer.Option(sys.executable, help="Python interpreter that runs the provider."),
    memory_limit: Switch = typer.Option(
        Switch.ON, "--memory-limit", help="Kill a worker whose real memory exceeds its function's MemorySize (on|off)."
    ),
    sts_standin: bool = typer.Option(
        False, "--sts-standin", help="Also answer STS GetCallerIdentity/GetSessionToken at / (for cloudformation-cli without AWS)."
    ),
    reload: bool = typer.Option(True, "--reload/--no-reload", help="Load new code into fresh workers when a file is saved."),
    debug_port: Optional[int] = typer.Option(
        None, min=1, max=65535, help="Workers listen for a debugger (debugpy) from this port on, one port per function."
    ),
    debug_wait: bool = typer.Option(False, "--debug-wait", help="With --debug-port: a worker waits for the debugger to attach."),
    contract: ContractMode = typer.Option(
        ContractMode.WARN,
        case_sensitive=False,
        help="Check each HandlerRequest call against the handler contract: warn (log), strict (answer FAILED), off.",
    ),
    shutdown_grace: float = typer.Option(10.0, min=0.0, help="On Ctrl-C/SIGTERM, seconds calls in flight get to finish before they are answered with an error."),
    header_timeout: float = typer.Option(30.0, min=0.001, help="Seconds a connection gets to send a request's headers."),
    body_timeout: float = typer.Option(60.0, min=0.001, help="Seconds a request gets to send its body after its headers."),
    max_connections: int = typer.Option(128, min=1, help="Open connections at most; more are closed at once."),
    virtual_clock: bool = typer.Option(
        False, "--virtual-clock", help="Cloud Control requests skip CallbackDelaySeconds waits but count them against the timeout."
    ),
    aws_endpoint: Optional[str] = _aws_endpoint_option(),
    moto: bool = _moto_option(),
    inject: List[str] = _inject_option(),
) -> None:
    """Serve the project's functions on the AWS Lambda Invoke API, from warm workers,
    and the project's type on the Cloud Control API at the same address.

    Point cfn test, cfn invoke, boto3 or the aws CLI at http://127.0.0.1:3001.
    """
    from cfnrun.api.limits import ConnectionLimits
    from cfnrun.app import early_start
    from cfnrun.app.preflight import interpreter_version, require_debugpy, runtime_mismatch
    from cfnrun.app.serve import ServeSettings, serve_forever
    from cfnrun.invoker.region import local_region
    from cfnrun.model.budgets import Budgets
    from cfnrun.model.project import load_project
    from cfnrun.runtime.spec import RuntimeSettings
    from cfnrun.ui.console import Console

    console = Console()
    try:
        loaded = load_project(_project_dir(project_path, project), usable_schema=False)  # serve checks it once it listens (load_late_parts)
        mismatch = runtime_mismatch(loaded, interpreter_version(python))
        if debug_port is not None:
            require_debugpy(python)
        region = region or local_region(profile)
        faults = parse_faults(inject)
    except CfnrunError as error:
        raise _fail(str(error)) from None
    if mismatch:
        console.warn(mismatch)
    settings = ServeSettings(
        host=host,
        port=port,
        runtime=RuntimeSettings(
            region, account_id, workers, log_level, python, standby=reload or debug_port is None, debug_port=debug_port, debug_wait=debug_wait,
            memory_limit=memory_limit is Switch.ON, aws_endpoint=aws_endpoint, faults=faults,
        ),
        budgets=Budgets(time_scale, invocation_timeout),
        sts_standin=sts_standin,
        reload=reload,
        debugging=debug_port is not None,
        contract=contract,
        shutdown_timeout_s=shutdown_grace,
        connections=ConnectionLimits(header_timeout_s=header_timeout, body_timeout_s=body_timeout, max_connections=max_connections),
        virtual_clock=virtual_clock,
        moto=moto,
    )
    try:
        early_start.run(serve_forever(loaded, settings, console))  # then kills an early worker serve did not adopt
    except CfnrunError as error:
        raise _fail(str(error)) from None
    except KeyboardInterrupt:  # a second Ctrl-C while serve was still starting
        typer.echo("cfnrun: interrupted while starting; workers stopped", err=True)
        raise typer.Exit(130) from None


@app.command(
    "test",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def contract_test(
    ctx: typer.Context,
    project_path: Optional[str] = typer.Argument(None, help=PROJECT_HELP + " Same as --project.", show_default=False),
    project: Optional[Path] = _project_option(),
    region: Optional[str] = typer.Option(None, help=REGION_HELP),
    workers: int = typer.Option(2, min=1, help="Warm workers per function."),
    aws: bool = typer.Option(False, "--aws", help="Use your real AWS credentials and STS instead of local stand-ins."),
    log_level: str = typer.Option("INFO", callback=_log_level, help="Level of the handlers' root logger."),
    virtual_clock: bool = typer.Option(
        False, "--virtual-clock", help="Skip the suite's CallbackDelaySeconds waits; the time is still counted."
    ),
    aws_endpoint: Optional[str] = _aws_endpoint_option(),
    moto: bool = _moto_option(),
    inject: List[str] = _inject_option(),
    contract: ContractMode = typer.Option(
        ContractMode.WARN, case_sensitive=False, help="Check every answer against the handler contract: warn, strict (answer FAILED), off."
    ),
    python: str = typer.Option(sys.executable, help="Python interpreter that runs the provider."),
    cloudformation_endpoint_url: Optional[str] = typer.Option(
        None, "--cloudformation-endpoint-url", help="Where the suite resolves {{Export}} inputs (default: --aws-endpoint, else AWS)."
    ),
) -> None:
    """Run the official contract suite (cfn test) against an embedded cfnrun endpoint.

    Arguments after -- go to pytest, as with cfn test: cfnrun test -- -k contract_create_read
    """
    import asyncio

    from cfnrun.app.contract_suite import ContractSettings, run_contract_tests
    from cfnrun.app.preflight import interpreter_version, runtime_mismatch
    from cfnrun.app.serve import ServeSettings
    from cfnrun.invoker.region import local_region
    from cfnrun.model.project import load_project
    from cfnrun.runtime.spec import RuntimeSettings

    pytest_args = list(ctx.args)
    if project_path is not None and project_path.startswith("-"):
        # `cfnrun test -- -k NAME`: what follows -- belongs to pytest, even in the project's place.
        pytest_args.insert(0, project_path)
        project_path = None
    try:
        loaded = load_project(_project_dir(Path(project_path) if project_path else None, project))
        mismatch = runtime_mismatch(loaded, interpreter_version(python))
        if mismatch:
            typer.echo(f"cfnrun: note: {mismatch}", err=True)
        runtime = RuntimeSettings(
            region=region or local_region(), workers=workers, log_level=log_level, python=python, aws_endpoint=aws_endpoint,
            faults=parse_faults(inject),
        )
        settings = ContractSettings(
            serve=ServeSettings(runtime=runtime, moto=moto, contract=contract),
            pytest_args=pytest_args,
            use_aws=aws,
            virtual_clock=virtual_clock,
            cloudformation_endpoint=cloudformation_endpoint_url,
        )
        code = asyncio.run(run_contract_tests(loaded, settings))
    except CfnrunError as error:
        raise _fail(str(error)) from None
    raise typer.Exit(code)


@app.command()
def validate(
    project_path: Optional[Path] = typer.Argument(None, help="A provider project folder, or a resource schema file.", show_default=False),
    project: Optional[Path] = _project_option(),
    json_output: bool = typer.Option(False, "--json", help="Print the problems as one JSON object."),
) -> None:
    """Check the resource schema: valid draft-07, and the resource schema rules.

    Exit status: 0 no errors (warnings may be printed), 1 errors found, 2 the schema cannot be read.
    """
    from cfnrun.model.project import load_project
    from cfnrun.model.schema import ResourceSchema
    from cfnrun.model.schema_check import check_schema, looks_like_hook

    try:
        target = _project_dir(project_path, project)
        if target.is_file():
            schema = ResourceSchema.load(target)
            hook = looks_like_hook(schema.document)
        else:
            loaded = load_project(target, usable_schema=False)
            schema, hook = loaded.schema, loaded.is_hook
    except CfnrunError as error:
        raise _fail(str(error), json_output=json_output) from None
    problems = check_schema(schema, hook)
    errors = sum(1 for p in problems if p.severity == "error")
    if json_output:
        typer.echo(json.dumps({
            "schema": str(schema.path),
            "errors": errors,
            "warnings": len(problems) - errors,
            "problems": [{"severity": p.severity, "pointer": p.pointer or "/", "message": p.message} for p in problems],
        }))
    else:
        for problem in problems:
            typer.echo(f"{schema.path}: {problem.line()}")
        typer.echo(f"{schema.path}: {errors} error(s), {len(problems) - errors} warning(s)")
    raise typer.Exit(EXIT_FAILED if errors else EXIT_SUCCESS)


history_app = typer.Typer(help="Operations cfnrun invoke and cfnrun serve recorded in the project's .cfnrun/history.sqlite3.")
app.add_typer(history_app, name="history")


@history_app.callback(invoke_without_command=True)
def history(
    ctx: typer.Context,
    project: Optional[Path] = _project_option(),
    limit: int = typer.Option(20, min=1, help="Show the N most recent operations."),
    json_output: bool = typer.Option(False, "--json", help="One JSON object per operation (NDJSON), newest first."),
) -> None:
    """List recorded operations, newest first. Recording is on unless CFNRUN_HISTORY=off;
    the oldest are pruned beyond 500 (CFNRUN_HISTORY_LIMIT)."""
    from cfnrun.history.store import HistoryStore

    if ctx.invoked_subcommand is not None:
        ctx.obj = project  # cfnrun history -p DIR show ID
        return
    try:
        operations = HistoryStore(_project_dir(None, project)).operations(limit)
    except CfnrunError as error:
        raise _fail(str(error), json_output=json_output) from None
    if json_output:
        for operation in operations:
            typer.echo(json.dumps(operation.summary()))
        return
    typer.echo(f"{'ID':>5}  {'WHEN (UTC)':<20} {'VIA':<7} {'ACTION':<7} {'STATUS':<12} {'CALLS':>5} {'SECONDS':>8}  ERROR")
    for operation in operations:
        row = operation.summary()
        typer.echo(
            f"{row['id']:>5}  {row['startedAt']:<20} {row['source']:<7} {row['action']:<7} {row['status']:<12} "
            f"{row['invocations']:>5} {row['durationSeconds']:>8.2f}  {row['errorCode'] or ''}"
        )


@history_app.command("show")
def history_show(
    ctx: typer.Context,
    operation_id: int = typer.Argument(..., metavar="ID", help="An operation id from cfnrun history."),
    project: Optional[Path] = _project_option(),
) -> None:
    """Print a recorded operation as the timeline cfnrun invoke shows."""
    from cfnrun.app.history import show_operation
    from cfnrun.history.store import HistoryStore
    from cfnrun.model.project import load_project
    from cfnrun.ui.timeline import TimelineRenderer

    try:
        root = _project_dir(None, project or ctx.obj)
        store = HistoryStore(root)
        store.get(operation_id)  # a clear error before anything is printed
        schema = load_project(root, usable_schema=False).schema
    except CfnrunError as error:
        raise _fail(str(error)) from None
    operation = show_operation(store, operation_id, [TimelineRenderer(sys.stdout, schema)])
    typer.echo(f"\nrecorded {operation.summary()['startedAt']} via cfnrun {operation.source}, cfnrun {operation.cfnrun_version}")


@app.command()
def replay(
    operation_id: int = typer.Argument(..., metavar="ID", help="An operation id from cfnrun history."),
    project: Optional[Path] = _project_option(),
    request_file: Optional[str] = typer.Option(
        None, "--request", help="Send this request file instead of the recorded request (history keeps no writeOnly values)."
    ),
    virtual_clock: Optional[bool] = typer.Option(None, "--virtual-clock/--real-clock", help="Override the recorded clock."),
    contract: Optional[ContractMode] = typer.Option(None, case_sensitive=False, help="Override the recorded --contract mode."),
    time_scale: Optional[float] = typer.Option(None, min=0.0001, help="Override the recorded --time-scale."),
) -> None:
    """Run a recorded operation again against the current code, with the same request and flags,
    and report what changed: status, error code, returned model(s), contract violations.

    Exit status: 0 same outcome as recorded, 1 it differs, 2 usage or project error.
    """
    import asyncio

    from cfnrun.app.invoke import ProviderLoadError
    from cfnrun.app.replay import ReplayOverrides, replay as replay_operation
    from cfnrun.history.store import HistoryStore
    from cfnrun.model.project import load_project
    from cfnrun.ui.timeline import TimelineRenderer

    overrides = ReplayOverrides(request_file, virtual_clock, contract, time_scale)
    try:
        root = _project_dir(None, project)
        store = HistoryStore(root)
        recorded = store.get(operation_id)
        typer.echo(f"replaying #{operation_id}: {recorded.action} recorded {recorded.summary()['startedAt']} ({recorded.status})")
        schema = load_project(root, usable_schema=False).schema
        report = asyncio.run(replay_operation(store, operation_id, root, overrides, [TimelineRenderer(sys.stdout, schema)]))
    except ProviderLoadError as error:
        raise _fail(str(error), [line.rstrip() for line in error.stack_trace]) from None
    except CfnrunError as error:
        raise _fail(str(error)) from None
    for note in report.notes:
        typer.echo(f"cfnrun: note: {note}", err=True)
    typer.echo("")
    if report.same:
        typer.echo(f"same outcome as #{operation_id}: {report.result.status.value}")
        raise typer.Exit(EXIT_SUCCESS)
    typer.echo(f"changed since #{operation_id}:")
    for change in report.changes:
        for line in change.lines:
            typer.echo(f"  {line}")
    raise typer.Exit(EXIT_FAILED)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
