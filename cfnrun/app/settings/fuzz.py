"""``cfnrun fuzz``'s options: also what a recorded fuzz case is replayed with."""
import json
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

from cfnrun.app.options import option
from cfnrun.app.settings import common
from cfnrun.fuzz.pins import Pins, parse_pins
from cfnrun.contract.mode import ContractMode
from cfnrun.model.action import Action
from cfnrun.model.faults import FaultRule

FUZZED_ACTIONS = (Action.CREATE, Action.READ, Action.UPDATE, Action.LIST, Action.DELETE)


def _actions(value: str) -> str:
    """``CREATE,READ,...``: the actions fuzzing may use. CREATE is needed by every other action but LIST."""
    names = [word.strip().upper() for word in value.split(",") if word.strip()]
    known = {action.value for action in FUZZED_ACTIONS}
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        raise ValueError(f"{', '.join(unknown) or repr(value)}: not a resource action; use some of {', '.join(sorted(known))}")
    if "CREATE" not in names and names != ["LIST"]:
        raise ValueError(f"{', '.join(names)} need resources to work on: add CREATE")
    return ",".join(names)


def _pin_texts(pins: Pins) -> List[str]:
    return [f"{name}={json.dumps(value)}" for name, value in pins]


def _action_tuple(text: str) -> Tuple[Action, ...]:
    return tuple(Action(name) for name in _actions(text).split(","))


def _action_text(actions: Tuple[Action, ...]) -> str:
    return ",".join(action.value for action in actions)


@dataclass(frozen=True)
class FuzzSettings:
    """``record=`` keys are what history keeps with a failing case; ``cfnrun replay`` runs it with them."""

    project_path: Optional[Path] = common.project_argument()
    project: Optional[Path] = common.project()
    max_examples: int = option(
        "--max-examples", help="Sequences of operations to generate (shrinking a failure runs more).", default=100, minimum=1,
        record="maxExamples",
    )
    shrink_time_s: float = option(
        "--shrink-time", help="Seconds shrinking a failure may take; then the smallest failing case seen is shown, "
        "marked as not the smallest.", default=60.0, minimum=0.0, metavar="SECONDS",
    )
    shrink_examples: int = option(
        "--shrink-examples", help="Sequences shrinking a failure may run; then the smallest failing case seen is shown, "
        "marked as not the smallest.", default=500, minimum=0, metavar="N",
    )
    pins: Pins = option(
        "--set", help="Give a property this value in every generated model (repeatable): Name=value, the value as JSON "
        "or else a plain string (an existing table, bucket or ARN); it is never generated or shrunk.",
        default=(), cli_type=List[str], cli_default=[], metavar="PROP=VALUE", to_setting=parse_pins, to_record=_pin_texts,
        record="set",
    )
    max_steps: int = option("--max-steps", help="Operations in one sequence, at most.", default=10, minimum=1, record="maxSteps")
    seed: Optional[int] = option("--seed", help="Seed of the generation, to repeat an exploration (default: random).", record="seed")
    actions: Tuple[Action, ...] = option(
        "--actions", help="Comma-separated actions the sequences use.", default=FUZZED_ACTIONS, cli_type=str,
        cli_default=_action_text(FUZZED_ACTIONS), check=_actions, to_setting=_action_tuple, to_record=_action_text, record="actions",
    )
    contract: ContractMode = common.contract(
        "strict: a contract MUST violation is a failure; warn: only wrong outcomes are; off: no contract checks.",
        default=ContractMode.STRICT, record="contract",
    )
    virtual_clock: bool = option(
        "--virtual-clock/--real-clock", help="Skip CallbackDelaySeconds waits (counted against the timeout).", default=True,
        record="virtualClock",
    )
    faults: Tuple[FaultRule, ...] = common.inject(record="inject")
    aws_endpoint: Optional[str] = common.aws_endpoint(record="awsEndpoint")
    moto: bool = common.moto(record="moto")
    json_output: bool = common.json_output()
    python: str = common.python()
    log_level: str = common.log_level("Level of the handler's root logger.", default="WARNING", record="logLevel")
