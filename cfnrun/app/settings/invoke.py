"""``cfnrun invoke``'s options: also the settings one operation runs with (replay and the pytest plugin build them too)."""
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Tuple

from cfnrun.app.options import REQUIRED, argument, derived, option
from cfnrun.app.settings import common
from cfnrun.contract.mode import ContractMode
from cfnrun.invoker.choices import DEFAULT_STALL_LIMIT, Entrypoint
from cfnrun.model.action import Action, action_from_argument
from cfnrun.model.faults import FaultRule

if TYPE_CHECKING:
    from cfnrun.invoker.request_files import OperationInput
    from cfnrun.model.budgets import Budgets
    from cfnrun.runtime.spec import RuntimeSettings


def _action(value: str) -> str:
    """The action's own value (``preCreate`` → ``CREATE_PRE_PROVISION``). ``--help`` shows this name as ACTION's type."""
    return action_from_argument(value).value


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
    project_dir: Optional[Path] = common.project()  # None: found like git (``app/invoke.py``)
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
    region: Optional[str] = common.region("Region of the request (default: AWS_REGION, the profile's, or us-east-1).", record="region")
    account_id: str = common.account_id("awsAccountId of the request.", record="accountId")
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
    virtual_clock: bool = common.virtual_clock(
        "Skip CallbackDelaySeconds waits but count them against the operation timeout.", record="virtualClock"
    )
    time_scale: float = common.time_scale(
        "Multiply every time limit (60 s / 30 s budgets, timeoutInMinutes) by this factor.", record="timeScale"
    )
    invocation_timeout: Optional[float] = option(
        "--invocation-timeout", help="Override the per-invocation budget, in seconds.", minimum=0.001, record="invocationTimeout"
    )
    operation_timeout: Optional[float] = option(
        "--operation-timeout", help="Override the whole operation's timeout, in seconds.",
        minimum=0.001, record="operationTimeout",
    )
    json_output: bool = common.json_output()
    log_level: str = common.log_level("Level of the handler's root logger.", record="logLevel")
    python: str = common.python()
    memory_limit: bool = common.memory_limit()  # enforce the function's MemorySize on the worker
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
    contract: ContractMode = common.contract(
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
    aws_endpoint: Optional[str] = common.aws_endpoint("placeholder credentials unless --profile", record="awsEndpoint")  # where the handler's AWS calls go
    moto: bool = common.moto(early=False, record="moto")  # an embedded moto server for the life of the command
    faults: Tuple[FaultRule, ...] = common.inject(record="inject")
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

        return derived(RuntimeSettings, self, region=region)
