"""``cfnrun invoke``: run one operation, show its timeline (or NDJSON events), exit with its outcome.

Exit status: 0 SUCCESS, 1 FAILED (or stopped early), 2 usage or project error, 130 interrupted.
"""
from __future__ import annotations

import json
import sys
from typing import List

from cfnrun.app.commands.common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_SUCCESS, echo, usage_error
from cfnrun.app.early_start import EarlyStart
from cfnrun.app import invoke
from cfnrun.app.settings.invoke import InvokeSettings
from cfnrun.invoker.credentials import PLACEHOLDER
from cfnrun.events.masking import LiveMask
from cfnrun.events.operation import Observer, OperationCompleted, OperationResult
from cfnrun.model.errors import CfnrunError
from cfnrun.ui.timeline import TimelineRenderer


def run(settings: InvokeSettings, early: EarlyStart) -> int:
    try:
        prepared = invoke.prepare(settings)
    except CfnrunError as error:
        return usage_error(str(error), json_output=settings.json_output)
    if settings.print_request:
        # never the local credentials; placeholders when the calls go to a stand-in, so the handler gets a session there
        prepared.request.credentials = PLACEHOLDER if settings.moto or settings.aws_endpoint else None
        echo(json.dumps(prepared.request.payload(), indent=2))
        return EXIT_SUCCESS
    schema = prepared.project.schema
    mask = LiveMask()  # the operation's writeOnly values and credentials, never printed (set for each operation run)
    renderer: Observer = TimelineRenderer(sys.stdout, schema, mask=mask)
    if settings.json_output:
        from cfnrun.ui.ndjson import NdjsonRenderer  # with the fuzz and stack events it also writes: only for --json

        renderer = NdjsonRenderer(sys.stdout, schema, mask=mask)
    ended: List[OperationResult] = []  # an interrupted operation's result: what it may have left
    asked = prepared.request.operation.desired
    for note in prepared.notes:
        echo(f"cfnrun: note: {note}", err=True)
    try:
        result = early.run(invoke.execute(  # then kills an early worker the operation did not adopt
            prepared, [renderer, lambda event: ended.append(event.result) if isinstance(event, OperationCompleted) else None],
            on_change=lambda message: echo(f"\ncfnrun: {message}", err=True),
            on_note=lambda message: echo(f"cfnrun: {message}", err=True),
            early=early,
            mask=mask,
        ))
    except invoke.ProviderLoadError as error:
        details = [line.rstrip() for line in error.stack_trace]
        if error.logs.strip():
            details += ["output while importing:", error.logs.rstrip()]
        return usage_error(str(error), details, json_output=settings.json_output)
    except CfnrunError as error:
        return usage_error(str(error), json_output=settings.json_output)
    except KeyboardInterrupt:
        echo("cfnrun: interrupted; workers stopped", err=True)
        if ended:
            from cfnrun.app.leftovers_named import left_behind  # only here: it reads stacks' records, which invoke needs nowhere else

            shown = str(settings.project_dir) if settings.project_dir else str(prepared.project.root)
            for line in left_behind(prepared.project, ended[-1], asked, shown):
                echo(f"cfnrun: {line}", err=True)
        return EXIT_INTERRUPTED
    return EXIT_SUCCESS if result.succeeded else EXIT_FAILED
