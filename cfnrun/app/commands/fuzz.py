"""``cfnrun fuzz``: generated sequences of operations against the project's handlers, until one breaks them.

Exit status: 0 no failure within the budget, 1 a failure (printed as its smallest case and
recorded for ``cfnrun replay``), 2 usage or project error, 130 interrupted.
"""
from __future__ import annotations

import sys

from cfnrun.app.commands.common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_SUCCESS, echo, project_dir, usage_error
from cfnrun.app.early_start import EarlyStart
from cfnrun.app.settings.fuzz import FuzzSettings
from cfnrun.events.fuzz import FuzzObserver
from cfnrun.model.errors import CfnrunError


def run(settings: FuzzSettings, early: EarlyStart) -> int:
    from cfnrun.app.fuzz_run import run_fuzz  # hypothesis loads only for this command
    from cfnrun.app.invoke import ProviderLoadError
    from cfnrun.ui.fuzz_progress import FuzzProgress
    from cfnrun.ui.ndjson import FuzzNdjsonRenderer

    renderer: FuzzObserver = FuzzNdjsonRenderer(sys.stdout) if settings.json_output else FuzzProgress(sys.stdout)
    try:
        root = project_dir(settings.project_path, settings.project)
        report = run_fuzz(root, settings, renderer)
    except ProviderLoadError as error:
        return usage_error(str(error), [line.rstrip() for line in error.stack_trace], json_output=settings.json_output)
    except CfnrunError as error:
        return usage_error(str(error), json_output=settings.json_output)
    except KeyboardInterrupt:
        echo("cfnrun: interrupted; workers stopped", err=True)
        return EXIT_INTERRUPTED
    for note in report.notes:
        echo(f"cfnrun: note: {note}", err=True)
    return EXIT_FAILED if report.failed else EXIT_SUCCESS
