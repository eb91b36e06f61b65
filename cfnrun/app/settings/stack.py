"""``cfnrun stack test``'s options: the template, its parameters and update steps, and what serves its types.

What serves the types is declared as for ``cfnrun serve`` (``--provider``, ``--functions``,
``--moto``, ``--aws-endpoint``...), from the same declarations: the command starts the same serve,
in-process. Parameters are ``KEY=VALUE``, several in one option separated by commas
(``--update NodeCount=2,Folder=archive``); a comma followed by anything but ``KEY=`` stays in
the value, so a CommaDelimitedList can be given as ``Subnets=a,b``.
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

from cfnrun.app.options import REQUIRED, argument, option
from cfnrun.app.settings import common
from cfnrun.stacks.names import STACK_NAME
from cfnrun.app.settings.serve import REGION_HELP
from cfnrun.contract.mode import ContractMode
from cfnrun.model.errors import CfnrunError

Assignments = Tuple[Tuple[str, str], ...]  # (ParameterKey, ParameterValue), in the order given

_NEXT_PAIR = re.compile(r",(?=[A-Za-z0-9]+=)")
_KEY = re.compile(r"^[A-Za-z0-9]+$")


def parse_assignments(flag: str, text: str) -> Assignments:
    """``KEY=VALUE[,KEY=VALUE...]`` as given to ``flag``; CfnrunError naming what is wrong."""
    if not text.strip():
        raise CfnrunError(f"{flag} '': names no parameter, so it would change nothing; give KEY=VALUE, e.g. {flag} NodeCount=2")
    pairs = []
    for part in _NEXT_PAIR.split(text):
        key, equals, value = part.partition("=")
        if not equals or not _KEY.match(key):
            raise CfnrunError(
                f"{flag} {text!r}: {part!r} is not KEY=VALUE (KEY: the template's parameter name, letters and digits), e.g. {flag} NodeCount=2"
            )
        pairs.append((key, value))
    keys = [key for key, _ in pairs]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise CfnrunError(f"{flag} {text!r}: {', '.join(repeated)} given twice")
    return tuple(pairs)


def _parameters(texts: List[str]) -> Assignments:
    pairs = [pair for text in texts for pair in parse_assignments("--parameters", text)]
    return tuple(dict(pairs).items())  # a later one wins, as with the aws CLI


def _updates(texts: List[str]) -> Tuple[Assignments, ...]:
    return tuple(parse_assignments("--update", text) for text in texts)


def _stack_name(value: str) -> str:
    if not STACK_NAME.match(value):
        raise ValueError(f"{value!r} is not a stack name: a letter, then letters, digits and hyphens (at most 128)")
    return value


def default_stack_name(template: Path) -> str:
    """The template's file name as a stack name: ``template.yaml`` → ``template``; lower case, since templates build bucket names from it."""
    stem = re.sub(r"[^a-z0-9-]+", "-", template.stem.lower()).strip("-")
    return (stem if stem[:1].isalpha() else f"stack-{stem}".rstrip("-"))[:128]


@dataclass(frozen=True)
class StackTestSettings:
    template: Path = argument("The stack's template (YAML or JSON).", default=REQUIRED)
    parameters: Assignments = option(
        "--parameters", help="A template parameter for the create step, KEY=VALUE (repeatable; or KEY=VALUE,KEY=VALUE).",
        default=(), cli_type=List[str], cli_default=[], metavar="KEY=VALUE", to_setting=_parameters,
    )
    updates: Tuple[Assignments, ...] = option(
        "--update", help="One update step after the create, changing these parameters (KEY=VALUE[,KEY=VALUE]); the others keep "
        "their values. Repeatable: the steps run in the order given.",
        default=(), cli_type=List[str], cli_default=[], metavar="KEY=VALUE", to_setting=_updates,
    )
    stack_name: Optional[str] = option(
        "--stack-name", help="The stack's name (default: the template's file name, e.g. template).", check=_stack_name,
    )
    keep: bool = option(
        "--keep", help="Skip the delete step and list what the stack still holds. Without --state the stack ends with the command "
        "and nothing deletes those resources afterwards (state a handler wrote, or an --aws-endpoint's); with --state DIR, "
        "'cfnrun serve --state DIR' serves the stack again, to inspect or delete it.",
        default=False,
    )
    stack_state: Optional[Path] = common.stack_state(
        "Keep the stack in this folder, as 'cfnrun serve --state DIR' does (NoEcho and writeOnly values are never written)."
    )
    project: Optional[Path] = common.project()
    providers: Tuple[Path, ...] = common.providers(
        "Serve this provider project's type for the stack (repeatable), beside the current project if there is one."
    )
    hooks: Tuple[Path, ...] = common.hooks()
    functions: Tuple[Path, ...] = common.functions()
    guard_rules_dirs: Tuple[Path, ...] = common.guard_rules_dirs()
    contract: ContractMode = common.contract(
        "Check every handler call: strict (a MUST violation fails the handler's answer, so its step), warn (reported, "
        "not failing), off.", default=ContractMode.STRICT,
    )
    virtual_clock: bool = common.virtual_clock("Skip CallbackDelaySeconds waits (still counted against timeouts).")
    aws_endpoint: Optional[str] = common.aws_endpoint()
    moto: bool = common.moto()
    json_output: bool = common.json_output(
        "Print one JSON object per stack event, step and result (NDJSON) instead of the timeline."
    )
    region: Optional[str] = common.region(REGION_HELP)
    workers: int = option("--workers", help="Warm workers per function.", default=2, minimum=1)
    log_level: str = common.log_level("Level of the handlers' root logger.")
    python: str = common.python()

    @property
    def project_path(self) -> Optional[Path]:
        return None  # the positional argument is the template: the project is named with --project or found
