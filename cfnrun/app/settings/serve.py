"""``cfnrun serve``'s options, and ``cfnrun test``'s (the contract suite against an embedded serve)."""
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Tuple

from cfnrun.api.limits import ConnectionLimits
from cfnrun.app.options import derived, option
from cfnrun.app.settings import common
from cfnrun.contract.mode import ContractMode
from cfnrun.model.errors import CfnrunError
from cfnrun.model.faults import FaultRule

if TYPE_CHECKING:
    from cfnrun.model.budgets import Budgets
    from cfnrun.runtime.spec import RuntimeSettings

# serve's defaults, here once: the options below and ServeSettings (app/serve_settings.py) both take them.
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 3001
SHUTDOWN_GRACE_S = 10.0
REGION_HELP = "AWS_REGION the workers see (default: AWS_REGION, AWS_DEFAULT_REGION, the profile's, or us-east-1)."


@dataclass(frozen=True)
class ServeOptions:
    """``cfnrun serve``'s options; the server runs with the ServeSettings built from them (``app/commands/serve.py``)."""

    project_path: Optional[Path] = common.project_argument()
    project: Optional[Path] = common.project()
    providers: Tuple[Path, ...] = common.providers(
        "Also serve this provider project (repeatable), beside the current one if there is one: each type on "
        "the Lambda and Cloud Control APIs; with several, functions are also named TYPE-NAME-FUNCTION (Org-Svc-Res-TypeFunction)."
    )
    hooks: Tuple[Path, ...] = common.hooks()
    functions: Tuple[Path, ...] = common.functions()
    guard_rules_dirs: Tuple[Path, ...] = common.guard_rules_dirs()
    host: str = option("--host", help="Address to bind. Anything but loopback exposes your handlers.", default=DEFAULT_HOST)
    port: int = option("--port", help="Port to listen on (0 picks a free one).", default=DEFAULT_PORT, minimum=0, maximum=65535)
    workers: int = option("--workers", help="Warm workers per function: calls beyond this queue.", default=4, minimum=1)
    region: Optional[str] = common.region(REGION_HELP)
    profile: Optional[str] = option(
        "--profile", help="AWS profile whose region applies when --region and AWS_REGION are not set."
    )
    account_id: str = common.account_id("Account id in the function ARN.")
    time_scale: float = common.time_scale("Multiply every time limit (function Timeout, contract budgets).")
    invocation_timeout: Optional[float] = option(
        "--invocation-timeout", help="Override every call's time limit, in seconds.", minimum=0.001
    )
    operation_timeout: Optional[float] = option(
        "--operation-timeout",
        help="Override the whole operation's timeout (the type's timeoutInMinutes) of every resource operation, "
        "an AWS resource's on the AWS endpoint too, in seconds.",
        minimum=0.001,
    )
    log_level: str = common.log_level("Level of the handlers' root logger.")
    python: str = common.python()
    memory_limit: bool = common.memory_limit()
    sts_standin: bool = option(
        "--sts-standin", help="Also answer STS GetCallerIdentity/GetSessionToken at / (for cloudformation-cli without AWS); done anyway with no --moto or --aws-endpoint.",
        default=False,
    )
    reload: bool = option("--reload/--no-reload", help="Load new code into fresh workers when a file is saved.", default=True)
    # A debugger port belongs to one worker, set up by the pool: nothing starts early.
    debug_port: Optional[int] = option(
        "--debug-port", help="Workers listen for a debugger (debugpy) from this port on, one port per function.",
        minimum=1, maximum=65535, early=False,
    )
    debug_wait: bool = option("--debug-wait", help="With --debug-port: a worker waits for the debugger to attach.", default=False)
    contract: ContractMode = common.contract(
        "Check each HandlerRequest call against the handler contract: warn (log), strict (answer FAILED), off."
    )
    shutdown_timeout_s: float = option(
        "--shutdown-grace",
        help="On Ctrl-C/SIGTERM, seconds calls in flight get to finish before they are answered with an error.",
        default=SHUTDOWN_GRACE_S, minimum=0.0,
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
        "--max-connections", help="Connections served at once; more wait for a place (answered 429 after 10 s), never closed unanswered.",
        default=ConnectionLimits.max_connections, minimum=1,
    )
    virtual_clock: bool = common.virtual_clock(
        "Cloud Control requests and local stacks skip CallbackDelaySeconds waits but count them against the timeout."
    )
    aws_endpoint: Optional[str] = common.aws_endpoint()
    moto: bool = common.moto(early=False)  # moto's endpoint is known once moto runs: nothing starts early
    faults: Tuple[FaultRule, ...] = common.inject()
    stack_state: Optional[Path] = common.stack_state(
        "Keep the local stacks in this folder across restarts (NoEcho and writeOnly values are never written)."
    )

    def runtime(self, region: str) -> "RuntimeSettings":
        """What serve's workers are started with, in ``region``."""
        from cfnrun.runtime.spec import RuntimeSettings

        return derived(RuntimeSettings, self, region=region)

    @property
    def standby(self) -> bool:
        """Keep a spare worker ready: for reloads, or whenever no debugger owns the workers."""
        return self.reload or self.debug_port is None

    @property
    def debugging(self) -> bool:
        return self.debug_port is not None

    @property
    def budgets(self) -> "Budgets":
        from cfnrun.model.budgets import Budgets

        return Budgets(self.time_scale, self.invocation_timeout, self.operation_timeout)

    @property
    def connections(self) -> ConnectionLimits:
        return ConnectionLimits(
            header_timeout_s=self.header_timeout, body_timeout_s=self.body_timeout, max_connections=self.max_connections
        )


def parse_exports(texts: List[str]) -> Tuple[Tuple[str, str], ...]:
    """``--export NAME=VALUE`` values; CfnrunError for one without a name or an ``=``."""
    exports = []
    for text in texts:
        name, equals, value = text.partition("=")
        if not equals or not name.strip():
            raise CfnrunError(f"--export {text!r}: expected NAME=VALUE, e.g. --export CfnrunSampleValue=hello")
        exports.append((name.strip(), value))
    return tuple(exports)


@dataclass(frozen=True)
class ContractTestOptions:
    """``cfnrun test``'s options; what follows ``--`` goes to pytest (``pytest_args``)."""

    project_path: Optional[str] = common.project_argument()  # a str: it may be pytest's "-k" instead
    project: Optional[Path] = common.project()
    region: Optional[str] = common.region(REGION_HELP)
    workers: int = option("--workers", help="Warm workers per function.", default=2, minimum=1)
    aws: bool = option("--aws", help="Use your real AWS credentials and STS instead of local stand-ins.", default=False)
    operation_timeout: Optional[float] = option(
        "--operation-timeout",
        help="Override the whole operation's timeout (the type's timeoutInMinutes) of every resource operation, "
        "an AWS resource's on the AWS endpoint too, in seconds.",
        minimum=0.001,
    )
    log_level: str = common.log_level("Level of the handlers' root logger.")
    virtual_clock: bool = common.virtual_clock("Skip the suite's CallbackDelaySeconds waits; the time is still counted.")
    aws_endpoint: Optional[str] = common.aws_endpoint("placeholder credentials unless --aws")
    moto: bool = common.moto()
    faults: Tuple[FaultRule, ...] = common.inject()
    contract: ContractMode = common.contract("Check every answer against the handler contract: warn, strict (answer FAILED), off.")
    python: str = common.python()
    cloudformation_endpoint: Optional[str] = option(
        "--cloudformation-endpoint-url", help="Where the suite resolves {{Export}} inputs (default: --aws-endpoint, else AWS)."
    )
    exports: Tuple[Tuple[str, str], ...] = option(
        "--export", help="An {{Export}} value for the suite's inputs, as NAME=VALUE (repeatable): resolved here, "
        "with no ListExports call.", default=(), cli_type=List[str], cli_default=[], metavar="NAME=VALUE",
        to_setting=parse_exports,
    )
    stacks: Tuple[Path, ...] = option(
        "--stack", help="Create this template as a local stack before the suite (repeatable), so {{Export}} inputs resolve "
        "from its exports; deleted after the suite.", default=(), cli_type=List[Path], cli_default=[], metavar="TEMPLATE",
        to_setting=tuple,
    )
    pytest_args: List[str] = dataclasses.field(default_factory=list)

    def runtime(self, region: str) -> "RuntimeSettings":
        """What the suite's workers are started with, in ``region``."""
        from cfnrun.runtime.spec import RuntimeSettings

        return derived(RuntimeSettings, self, region=region)

    @property
    def use_aws(self) -> bool:
        return self.aws

    @property
    def budgets(self) -> "Budgets":
        """The suite's serve's: --operation-timeout bounds the operations of its --stack stacks (an AWS resource's wait too)."""
        from cfnrun.model.budgets import Budgets

        return Budgets(operation_timeout_s=self.operation_timeout)
