"""Every command's options, each declared once (``app/options.py`` says what is derived from them).

``InvokeSettings`` is both ``cfnrun invoke``'s options and the settings the operation runs with;
the other commands' options build the settings their command runs with (``ServeOptions.runtime``...).
Adding an option to a command is one field here plus the code that uses it: the command line,
the early start, history and replay follow from the field.

Light on purpose, like ``app/options.py``: the early start builds these before the command line
library loads, so what the settings turn into (budgets, runtime settings) is imported where it is
built. No ``from __future__ import annotations``: the command line reads the
fields' types.
"""
import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from cfnrun.api.limits import ConnectionLimits
from cfnrun.app.options import REQUIRED, argument, option, switch
from cfnrun.contract.mode import ContractMode
from cfnrun.invoker.choices import DEFAULT_STALL_LIMIT, Entrypoint
from cfnrun.model.action import Action, action_from_argument
from cfnrun.model.faults import FaultRule, parse_faults
from cfnrun.runtime.environment import DEFAULT_ACCOUNT_ID

if TYPE_CHECKING:
    from cfnrun.invoker.request_files import OperationInput
    from cfnrun.model.budgets import Budgets
    from cfnrun.runtime.spec import RuntimeSettings

LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "WARN", "INFO", "DEBUG", "NOTSET")
PROJECT_HELP = "The provider project folder (holds .rpdk-config); default: the nearest one at or above the current folder."
REGION_HELP = "AWS_REGION the workers see (default: AWS_REGION, AWS_DEFAULT_REGION, the profile's, or us-east-1)."


def _action(value: str) -> str:
    """The action's own value (``preCreate`` → ``CREATE_PRE_PROVISION``). ``--help`` shows this name as ACTION's type."""
    return action_from_argument(value).value


def _checked_log_level(value: str) -> str:
    if value.upper() not in LOG_LEVELS:
        raise ValueError(f"{value!r} is not a logging level: use one of {', '.join(LOG_LEVELS)}")
    return value.upper()


def _fault_texts(faults: Tuple[FaultRule, ...]) -> List[str]:
    return [rule.text for rule in faults]


# Options several commands share: one declaration each, the help where a command says it its own way.


def _project() -> Any:
    return option("--project", "-p", help=PROJECT_HELP)


def _project_argument() -> Any:
    return argument(PROJECT_HELP + " Same as --project.", show_default=False)


def _region(help: str, **details: Any) -> Any:
    return option("--region", help=help, **details)


def _log_level(help: str, **details: Any) -> Any:
    return option("--log-level", help=help, default="INFO", check=_checked_log_level, **details)


def _python() -> Any:
    return option("--python", help="Python interpreter that runs the provider.", default=sys.executable)


def _memory_limit() -> Any:
    return switch(
        "--memory-limit", help="Kill a worker whose real memory exceeds its function's MemorySize (on|off).", record="memoryLimit"
    )


def _contract(help: str, **details: Any) -> Any:
    return option("--contract", help=help, default=ContractMode.WARN, case_sensitive=False, **details)


def _time_scale(help: str, **details: Any) -> Any:
    return option("--time-scale", help=help, default=1.0, minimum=0.0001, **details)


def _virtual_clock(help: str, **details: Any) -> Any:
    return option("--virtual-clock", help=help, default=False, **details)


def _account_id(help: str, **details: Any) -> Any:
    return option("--account-id", help=help, default=DEFAULT_ACCOUNT_ID, **details)


def _aws_endpoint(**details: Any) -> Any:
    return option(
        "--aws-endpoint",
        help="Send the handlers' AWS calls to this URL (a moto server, LocalStack...); placeholder credentials unless --profile.",
        **details,
    )


def _moto(**details: Any) -> Any:
    return option(
        "--moto",
        help="Start a moto server for the handlers' AWS calls, for as long as the command runs (pip install 'cfnrun[moto]').",
        default=False,
        **details,
    )


def _inject(**details: Any) -> Any:
    return option(
        "--inject",
        help="Fault in the handlers' AWS calls (repeatable): ssm:PutParameter=ThrottlingException, ...=+2s (a delay), "
        "suffix @N for the N-th matching call only or %P for P percent of them.",
        default=(), cli_type=List[str], cli_default=[], metavar="SERVICE:Operation=EFFECT", to_setting=parse_faults,
        to_record=_fault_texts, **details,
    )


@dataclass(frozen=True)
class InvokeSettings:
    """``cfnrun invoke``'s options, and the settings one operation runs with (replay and the pytest plugin build them too).

    ``record=`` keys are what history keeps of a run (``app/history.py`` records the values the run
    resolved: the function, entrypoint and region it used); replay restores them (``app/replay.py``).
    """

    action: Action = argument(
        "CREATE, READ, UPDATE, DELETE or LIST; in a hook project CREATE_PRE_PROVISION (preCreate), UPDATE_… or DELETE_….",
        default=REQUIRED, cli_type=str, check=_action, to_setting=Action, metavar="ACTION", record="action",
    )
    request_file: Optional[str] = argument(
        "A 'cfn invoke' request file or a sam-tests event ('-' reads standard input). Without one, the desired state is empty.",
        record="requestFile", replayed=False,  # replay sends the recorded request itself
    )
    project_dir: Optional[Path] = _project()  # None: found like git (``app/invoke.py``)
    handler: Optional[str] = option("--handler", help="Run without a project: the handler as MODULE.ATTRIBUTE.", early=False)
    schema: Optional[Path] = option("--schema", help="Run without a project: the resource schema file.", early=False)
    code_dir: Optional[Path] = option(
        "--code-dir", help="Run without a project: the folder to import the handler from.", early=False
    )
    function: Optional[str] = option(
        "--function",
        help="The template function to invoke (default: TypeFunction, or TestEntrypoint for a sam-tests event); "
        "with --lambda-endpoint, its name there.",
        record="function",
    )
    entrypoint: Optional[Entrypoint] = option(
        "--entrypoint",
        help="Request shape: 'type' (HandlerRequest) or 'test' (sam-tests event). Default: from the request file.",
        case_sensitive=False, record="entrypoint",
    )
    region: Optional[str] = _region("Region of the request (default: AWS_REGION, the profile's, or us-east-1).", record="region")
    account_id: str = _account_id("awsAccountId of the request.", record="accountId")
    profile: Optional[str] = option("--profile", help="AWS profile for the caller credentials.")
    credentials: bool = option(
        "--credentials/--no-credentials",
        help="Pass local AWS credentials to the handler (--no-credentials: placeholder keys).",
        default=True, record="credentials",
    )
    max_reinvoke: Optional[int] = option(
        "--max-reinvoke", help="Stop after N re-invocations (IN_PROGRESS callbacks or LIST pages).",
        minimum=0, record="maxReinvoke",
    )
    keep_polling: bool = option(  # do not stop a handler that repeats the same IN_PROGRESS with no delay
        "--keep-polling",
        help="Keep calling a handler that answers the same IN_PROGRESS with no delay (default: stop after "
        f"{DEFAULT_STALL_LIMIT} identical answers); the operation still ends at timeoutInMinutes.",
        default=False, record="keepPolling",
    )
    virtual_clock: bool = _virtual_clock(
        "Skip CallbackDelaySeconds waits but count them against the operation timeout.", record="virtualClock"
    )
    time_scale: float = _time_scale(
        "Multiply every time limit (60 s / 30 s budgets, timeoutInMinutes) by this factor.", record="timeScale"
    )
    invocation_timeout: Optional[float] = option(
        "--invocation-timeout", help="Override the per-invocation budget, in seconds.", minimum=0.001, record="invocationTimeout"
    )
    operation_timeout: Optional[float] = option(
        "--operation-timeout", help="Override the whole operation's timeout, in seconds.",
        minimum=0.001, record="operationTimeout",
    )
    json_output: bool = option("--json", help="Print one JSON object per event (NDJSON).", default=False)
    log_level: str = _log_level("Level of the handler's root logger.", record="logLevel")
    python: str = _python()
    memory_limit: bool = _memory_limit()  # enforce the function's MemorySize on the worker
    print_request: bool = option(
        "--print-request",
        help="Print the first request (HandlerRequest or sam-tests event) as JSON and exit, "
        "e.g. for aws lambda invoke against cfnrun serve. Credentials are left out.",
        default=False, early=False,
    )
    watch: bool = option(
        "--watch", help="After the operation, run it again every time a project file is saved.", default=False, early=False
    )
    in_process: bool = option(
        "--in-process", help="Run the handler inside cfnrun, so breakpoint(), pdb and IDE debuggers work.",
        default=False, early=False, record="inProcess",
    )
    contract: ContractMode = _contract(
        "Check requests and events against the handler contract: warn, strict (a MUST violation fails), off.", record="contract"
    )
    string_primitives: bool = option(
        "--string-primitives", help="Send numbers and booleans as strings, as CloudFormation does for template values.",
        default=False, record="stringPrimitives",
    )
    typeconfig: Optional[Path] = option(  # cfn's --typeconfig file
        "--typeconfig",
        help="Type configuration file in cfn's format "
        "(default ~/.cfn-cli/typeConfiguration.json when the schema has typeConfiguration).",
    )
    aws_endpoint: Optional[str] = _aws_endpoint(record="awsEndpoint")  # where the handler's AWS calls go
    moto: bool = _moto(early=False, record="moto")  # an embedded moto server for the life of the command
    faults: Tuple[FaultRule, ...] = _inject(record="inject")
    lambda_endpoint: Optional[str] = option(  # send the calls to this Lambda Invoke API instead of local workers
        "--lambda-endpoint",
        help="Invoke the function on this Lambda Invoke API (sam local start-lambda, LocalStack, "
        "cfnrun serve, https://lambda.REGION.amazonaws.com) instead of local workers; --function names it there.",
        metavar="URL", early=False, record="lambdaEndpoint",
    )
    retry: bool = option(  # re-invoke FAILED answers with a retriable error code, as the service does
        "--retry/--no-retry",
        help="Re-invoke FAILED Throttling, NetworkFailure, ServiceInternalError or ResourceConflict "
        "answers with backoff (1 s, 2 s, 4 s), as the service does.",
        default=True, record="retry",
    )
    request: Optional["OperationInput"] = None  # the request as data (replay, the pytest plugin), instead of a file

    @property
    def use_credentials(self) -> bool:
        """Pass local credentials: never with --print-request, which prints the request."""
        return self.credentials and not self.print_request

    @property
    def budgets(self) -> "Budgets":
        from cfnrun.model.budgets import Budgets

        return Budgets(self.time_scale, self.invocation_timeout, self.operation_timeout)

    def runtime(self, region: str) -> "RuntimeSettings":
        """What the operation's local worker is started with, in ``region`` (the request's)."""
        from cfnrun.runtime.spec import RuntimeSettings

        return RuntimeSettings(
            region, self.account_id, 1, self.log_level, self.python,
            memory_limit=self.memory_limit, aws_endpoint=self.aws_endpoint, faults=self.faults,
        )


@dataclass(frozen=True)
class ServeOptions:
    """``cfnrun serve``'s options; the server runs with the ServeSettings built from them (``app/commands/serve.py``)."""

    project_path: Optional[Path] = _project_argument()
    project: Optional[Path] = _project()
    host: str = option("--host", help="Address to bind. Anything but loopback exposes your handlers.", default="127.0.0.1")
    port: int = option("--port", help="Port to listen on (0 picks a free one).", default=3001, minimum=0, maximum=65535)
    workers: int = option("--workers", help="Warm workers per function: calls beyond this queue.", default=4, minimum=1)
    region: Optional[str] = _region(REGION_HELP)
    profile: Optional[str] = option(
        "--profile", help="AWS profile whose region applies when --region and AWS_REGION are not set."
    )
    account_id: str = _account_id("Account id in the function ARN.")
    time_scale: float = _time_scale("Multiply every time limit (function Timeout, contract budgets).")
    invocation_timeout: Optional[float] = option(
        "--invocation-timeout", help="Override every call's time limit, in seconds.", minimum=0.001
    )
    log_level: str = _log_level("Level of the handlers' root logger.")
    python: str = _python()
    memory_limit: bool = _memory_limit()
    sts_standin: bool = option(
        "--sts-standin", help="Also answer STS GetCallerIdentity/GetSessionToken at / (for cloudformation-cli without AWS).",
        default=False,
    )
    reload: bool = option("--reload/--no-reload", help="Load new code into fresh workers when a file is saved.", default=True)
    # A debugger port belongs to one worker, set up by the pool: nothing starts early.
    debug_port: Optional[int] = option(
        "--debug-port", help="Workers listen for a debugger (debugpy) from this port on, one port per function.",
        minimum=1, maximum=65535, early=False,
    )
    debug_wait: bool = option("--debug-wait", help="With --debug-port: a worker waits for the debugger to attach.", default=False)
    contract: ContractMode = _contract(
        "Check each HandlerRequest call against the handler contract: warn (log), strict (answer FAILED), off."
    )
    shutdown_grace: float = option(
        "--shutdown-grace",
        help="On Ctrl-C/SIGTERM, seconds calls in flight get to finish before they are answered with an error.",
        default=10.0, minimum=0.0,
    )
    header_timeout: float = option(
        "--header-timeout", help="Seconds a connection gets to send a request's headers.",
        default=ConnectionLimits.header_timeout_s, minimum=0.001,
    )
    body_timeout: float = option(
        "--body-timeout", help="Seconds a request gets to send its body after its headers.",
        default=ConnectionLimits.body_timeout_s, minimum=0.001,
    )
    max_connections: int = option(
        "--max-connections", help="Open connections at most; more are closed at once.",
        default=ConnectionLimits.max_connections, minimum=1,
    )
    virtual_clock: bool = _virtual_clock(
        "Cloud Control requests skip CallbackDelaySeconds waits but count them against the timeout."
    )
    aws_endpoint: Optional[str] = _aws_endpoint()
    moto: bool = _moto(early=False)  # moto's endpoint is known once moto runs: nothing starts early
    faults: Tuple[FaultRule, ...] = _inject()

    def runtime(self, region: str) -> "RuntimeSettings":
        """What serve's workers are started with, in ``region``."""
        from cfnrun.runtime.spec import RuntimeSettings

        return RuntimeSettings(
            region, self.account_id, self.workers, self.log_level, self.python,
            standby=self.reload or self.debug_port is None, debug_port=self.debug_port, debug_wait=self.debug_wait,
            memory_limit=self.memory_limit, aws_endpoint=self.aws_endpoint, faults=self.faults,
        )

    @property
    def budgets(self) -> "Budgets":
        from cfnrun.model.budgets import Budgets

        return Budgets(self.time_scale, self.invocation_timeout)

    @property
    def connections(self) -> ConnectionLimits:
        return ConnectionLimits(
            header_timeout_s=self.header_timeout, body_timeout_s=self.body_timeout, max_connections=self.max_connections
        )


@dataclass(frozen=True)
class ContractTestOptions:
    """``cfnrun test``'s options; what follows ``--`` goes to pytest (``pytest_args``)."""

    project_path: Optional[str] = _project_argument()  # a str: it may be pytest's "-k" instead
    project: Optional[Path] = _project()
    region: Optional[str] = _region(REGION_HELP)
    workers: int = option("--workers", help="Warm workers per function.", default=2, minimum=1)
    aws: bool = option("--aws", help="Use your real AWS credentials and STS instead of local stand-ins.", default=False)
    log_level: str = _log_level("Level of the handlers' root logger.")
    virtual_clock: bool = _virtual_clock("Skip the suite's CallbackDelaySeconds waits; the time is still counted.")
    aws_endpoint: Optional[str] = _aws_endpoint()
    moto: bool = _moto()
    faults: Tuple[FaultRule, ...] = _inject()
    contract: ContractMode = _contract("Check every answer against the handler contract: warn, strict (answer FAILED), off.")
    python: str = _python()
    cloudformation_endpoint: Optional[str] = option(
        "--cloudformation-endpoint-url", help="Where the suite resolves {{Export}} inputs (default: --aws-endpoint, else AWS)."
    )
    pytest_args: List[str] = dataclasses.field(default_factory=list)

    def runtime(self, region: str) -> "RuntimeSettings":
        """What the suite's workers are started with, in ``region``."""
        from cfnrun.runtime.spec import RuntimeSettings

        return RuntimeSettings(
            region=region, workers=self.workers, log_level=self.log_level, python=self.python, aws_endpoint=self.aws_endpoint,
            faults=self.faults,
        )


@dataclass(frozen=True)
class ValidateOptions:
    project_path: Optional[Path] = argument("A provider project folder, or a resource schema file.", show_default=False)
    project: Optional[Path] = _project()
    json_output: bool = option("--json", help="Print the problems as one JSON object.", default=False)


@dataclass(frozen=True)
class HistoryOptions:
    project: Optional[Path] = _project()
    limit: int = option("--limit", help="Show the N most recent operations.", default=20, minimum=1)
    json_output: bool = option("--json", help="One JSON object per operation (NDJSON), newest first.", default=False)


@dataclass(frozen=True)
class HistoryShowOptions:
    operation_id: int = argument("An operation id from cfnrun history.", default=REQUIRED, metavar="ID")
    project: Optional[Path] = _project()  # None: the one given to ``cfnrun history``, else found like git


@dataclass(frozen=True)
class ReplayOptions:
    """``cfnrun replay``'s options; those with ``overrides=True`` replace the recorded invoke setting of the same name."""

    operation_id: int = argument("An operation id from cfnrun history.", default=REQUIRED, metavar="ID")
    project: Optional[Path] = _project()
    request_file: Optional[str] = option(
        "--request", help="Send this request file instead of the recorded request (history keeps no writeOnly values)."
    )
    virtual_clock: Optional[bool] = option("--virtual-clock/--real-clock", help="Override the recorded clock.", overrides=True)
    contract: Optional[ContractMode] = option(
        "--contract", help="Override the recorded --contract mode.", case_sensitive=False, overrides=True
    )
    time_scale: Optional[float] = option(
        "--time-scale", help="Override the recorded --time-scale.", minimum=0.0001, overrides=True
    )
    log_level: Optional[str] = option(
        "--log-level", help="Override the recorded --log-level.", check=_checked_log_level, overrides=True
    )
