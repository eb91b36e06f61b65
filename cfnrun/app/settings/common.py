"""Options several commands share: each declared once here, the help given where a command says it its own way."""
import sys
from pathlib import Path
from typing import Any, List, Optional, Tuple

from cfnrun.app.options import argument, option, switch
from cfnrun.contract.mode import ContractMode
from cfnrun.model.faults import FaultRule, parse_faults
from cfnrun.runtime.environment import DEFAULT_ACCOUNT_ID

LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "WARN", "INFO", "DEBUG", "NOTSET")
PROJECT_HELP = "The provider project folder (holds .rpdk-config); default: the nearest one at or above the current folder."


def _checked_log_level(value: str) -> str:
    if value.upper() not in LOG_LEVELS:
        raise ValueError(f"{value!r} is not a logging level: use one of {', '.join(LOG_LEVELS)}")
    return value.upper()


def _fault_texts(faults: Tuple[FaultRule, ...]) -> List[str]:
    return [rule.text for rule in faults]


def project() -> Any:
    return option("--project", "-p", help=PROJECT_HELP)


def project_argument() -> Any:
    return argument(PROJECT_HELP + " Same as --project.", show_default=False)


def region(help: str, **details: Any) -> Any:
    return option("--region", help=help, **details)


def log_level(help: str, default: Optional[str] = "INFO", **details: Any) -> Any:
    return option("--log-level", help=help, default=default, check=_checked_log_level, **details)


def python() -> Any:
    return option("--python", help="Python interpreter that runs the provider.", default=sys.executable)


def memory_limit() -> Any:
    return switch(
        "--memory-limit", help="Kill a worker whose real memory exceeds its function's MemorySize (on|off).", record="memoryLimit"
    )


def contract(help: str, default: ContractMode = ContractMode.WARN, **details: Any) -> Any:
    return option("--contract", help=help, default=default, case_sensitive=False, **details)


def time_scale(help: str, **details: Any) -> Any:
    return option("--time-scale", help=help, default=1.0, minimum=0.0001, **details)


def virtual_clock(help: str, **details: Any) -> Any:
    return option("--virtual-clock", help=help, default=False, **details)


def account_id(help: str, **details: Any) -> Any:
    return option("--account-id", help=help, default=DEFAULT_ACCOUNT_ID, **details)


def aws_endpoint(credentials: str = "", **details: Any) -> Any:
    """``credentials``: what the handlers' calls there are signed with, said where the command decides it."""
    return option(
        "--aws-endpoint",
        help="Send the handlers' AWS calls to this URL (a moto server, LocalStack...)" + (f"; {credentials}." if credentials else "."),
        **details,
    )


def moto(**details: Any) -> Any:
    return option(
        "--moto",
        help="Start a moto server for the handlers' AWS calls, for as long as the command runs (pip install 'cfnrun[moto]').",
        default=False,
        **details,
    )


def inject(**details: Any) -> Any:
    return option(
        "--inject",
        help="Fault in the handlers' AWS calls (repeatable): ssm:PutParameter=ThrottlingException, ...=+2s (a delay), "
        "suffix @N for the N-th matching call only or %P for P percent of them.",
        default=(), cli_type=List[str], cli_default=[], metavar="SERVICE:Operation=EFFECT", to_setting=parse_faults,
        to_record=_fault_texts, **details,
    )


def providers(help: str) -> Any:
    return option("--provider", help=help, default=(), cli_type=List[Path], cli_default=[], metavar="DIR", to_setting=tuple)


def hooks(**details: Any) -> Any:
    return option(
        "--hook", help="Serve this hook project (repeatable) and run it in local stacks before each resource it targets "
        "(ENABLED, FailureMode FAIL, until SetTypeConfiguration says otherwise).",
        default=(), cli_type=List[Path], cli_default=[], metavar="DIR", to_setting=tuple, **details,
    )


def functions(**details: Any) -> Any:
    return option(
        "--functions", help="Also serve the plain Python Lambda functions of this SAM/CloudFormation template (repeatable), "
        "by logical id, FunctionName and ARN.",
        default=(), cli_type=List[Path], cli_default=[], metavar="TEMPLATE", to_setting=tuple, **details,
    )


def guard_rules_dirs(**details: Any) -> Any:
    return option(
        "--guard-rules-dir", help="A Guard hook's local rules (RuleLocation, Options.InputParams) may be read below this folder too "
        "(repeatable); by default only below the served projects' and templates' folders.",
        default=(), cli_type=List[Path], cli_default=[], metavar="DIR", to_setting=tuple, **details,
    )


def json_output(help: str = "Print one JSON object per event (NDJSON).", **details: Any) -> Any:
    return option("--json", help=help, default=False, **details)


def stack_state(help: str, **details: Any) -> Any:
    return option("--state", help=help, metavar="DIR", **details)
