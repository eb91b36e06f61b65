"""``cfnrun history`` and ``cfnrun history show``'s options, and ``cfnrun replay``'s."""
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from cfnrun.app.options import REQUIRED, argument, option
from cfnrun.app.settings import common
from cfnrun.contract.mode import ContractMode


@dataclass(frozen=True)
class HistoryOptions:
    project: Optional[Path] = common.project()
    limit: int = option("--limit", help="Show the N most recent operations.", default=20, minimum=1)
    json_output: bool = option("--json", help="One JSON object per operation (NDJSON), newest first.", default=False)


@dataclass(frozen=True)
class HistoryShowOptions:
    operation_id: int = argument("An operation id from cfnrun history.", default=REQUIRED, metavar="ID")
    project: Optional[Path] = common.project()  # None: the one given to ``cfnrun history``, else found like git


@dataclass(frozen=True)
class ReplayOptions:
    """``cfnrun replay``'s options; those with ``overrides=True`` replace the recorded invoke setting of the same name."""

    operation_id: int = argument("An operation id from cfnrun history.", default=REQUIRED, metavar="ID")
    project: Optional[Path] = common.project()
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
    log_level: Optional[str] = common.log_level("Override the recorded --log-level.", default=None, overrides=True)
