"""``cfnrun stack test TEMPLATE``: a stack's create, updates and delete in one command, for CI.

Exit status: 0 every step completed, no failing contract violation, nothing left behind; 1 a
step failed or rolled back, a violation failed the run, or something was left; 2 usage error
(a template that cannot be read or that the service would refuse, a bad KEY=VALUE, an unknown
parameter); 130 interrupted (the serve it started is stopped, with its workers).
"""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Tuple

from cfnrun.app.commands.common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_SUCCESS, echo, usage_error
from cfnrun.app.commands.serve import served_sources
from cfnrun.app.early_start import EarlyStart
from cfnrun.app.options import derived
from cfnrun.app.leftovers_named import MadeByStack
from cfnrun.app.settings.serve import DEFAULT_HOST
from cfnrun.app.settings.stack import StackTestSettings, default_stack_name
from cfnrun.contract.mode import ContractMode
from cfnrun.events.stack import StackTestObserver
from cfnrun.invoker.region import local_region
from cfnrun.model.errors import CfnrunError
from cfnrun.model.local_state import state_folder
from cfnrun.runtime.spec import RuntimeSettings
from cfnrun.ui.console import Console

if TYPE_CHECKING:
    from cfnrun.app.serve_settings import ServeSettings
    from cfnrun.app.stack_test import StackTestPlan

LOG_NAME = "stack-test.log"  # in the current folder's .cfnrun/: the handlers' output and serve's own lines


def run(settings: StackTestSettings, early: EarlyStart) -> int:
    from cfnrun.app.stack_test import refused_before_serve, run_stack_test
    from cfnrun.ui.ndjson import StackTestNdjsonRenderer
    from cfnrun.ui.stack_timeline import StackTimeline

    shown: StackTestObserver = StackTestNdjsonRenderer(sys.stdout) if settings.json_output else StackTimeline(sys.stdout)
    renderer = MadeByStack(shown)
    sources = None
    try:
        body = _template_body(settings.template)
        serve_settings, plan = stack_test_settings(settings, body)
        refused_before_serve(plan)  # a usage error told at once, not after serve and moto have started
        sources = served_sources(settings)
        log_path = state_folder(Path.cwd()) / LOG_NAME
        with open(log_path, "w", encoding="utf-8") as log:
            completed = early.run(run_stack_test(plan, sources, serve_settings, renderer, Console(log, color=False)))
    except CfnrunError as error:
        return usage_error(str(error), json_output=settings.json_output)
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, or SIGTERM (``run_stack_test``)
        echo("cfnrun: interrupted: the remaining steps did not run and nothing was deleted; serve and its workers stopped", err=True)
        for line in renderer.left_behind(sources.providers if sources else (), _aws_stand_in(settings)):
            echo(f"cfnrun: {line}", err=True)
        return EXIT_INTERRUPTED
    if completed.failed:
        echo(f"cfnrun: the handlers' output is in {log_path}", err=True)
    return EXIT_FAILED if completed.failed else EXIT_SUCCESS


def stack_test_settings(settings: StackTestSettings, body: str) -> Tuple[ServeSettings, StackTestPlan]:
    """What the stack's serve and the steps run with: each field from the option (or property) of its name."""
    from cfnrun.app.serve_settings import ServeSettings
    from cfnrun.app.stack_test import StackTestPlan

    runtime = derived(RuntimeSettings, settings, region=settings.region or local_region())
    serve_settings = derived(
        ServeSettings, settings, host=DEFAULT_HOST, port=0, runtime=runtime,
        guard_rules_dirs=(settings.template.parent, *settings.guard_rules_dirs),  # the template's folder holds its rules too
        warm_test_entrypoints=False,  # stacks call the type's function only
        parameter_lookups=not settings.moto,
    )
    plan = derived(
        StackTestPlan, settings, template=str(settings.template), body=body,
        stack_name=settings.stack_name or default_stack_name(settings.template), parameters=dict(settings.parameters),
        updates=tuple(dict(update) for update in settings.updates), strict=settings.contract is ContractMode.STRICT,
    )
    return serve_settings, plan


def _aws_stand_in(settings: StackTestSettings) -> str:
    if settings.moto:
        return "it was on the embedded moto server, gone with it"
    if settings.aws_endpoint:
        return f"delete it at {settings.aws_endpoint}"
    return "delete it where the stack's AWS calls went"


def _template_body(template: Path) -> str:
    try:
        return template.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CfnrunError(f"{template}: no such template file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise CfnrunError(f"{template}: cannot read the template: {error}") from None
