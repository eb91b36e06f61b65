"""``cfnrun replay ID``: run a recorded operation again against the current code and say what changed.

Exit status: 0 same outcome as recorded, 1 it differs, 2 usage or project error.
"""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from cfnrun.app.commands.common import EXIT_FAILED, EXIT_SUCCESS, echo, project_dir, usage_error
from cfnrun.app.early_start import EarlyStart
from cfnrun.app.invoke import ProviderLoadError
from cfnrun.app.replay import replay
from cfnrun.app.settings.history import ReplayOptions
from cfnrun.history.store import HistoryStore, RecordedOperation
from cfnrun.model.errors import CfnrunError
from cfnrun.model.project import load_project
from cfnrun.ui.timeline import TimelineRenderer


def run(options: ReplayOptions, early: EarlyStart) -> int:
    operation_id = options.operation_id
    try:
        root = project_dir(None, options.project)
        store = HistoryStore(root)
        recorded = store.get(operation_id)
        if recorded.source == "fuzz":
            return _replay_fuzz_case(root, recorded)
        echo(f"replaying #{operation_id}: {recorded.action} recorded {recorded.summary()['startedAt']} ({recorded.status})")
        schema = load_project(root, usable_schema=False).schema
        report = asyncio.run(replay(store, root, options, [TimelineRenderer(sys.stdout, schema)]))
    except ProviderLoadError as error:
        return usage_error(str(error), [line.rstrip() for line in error.stack_trace])
    except CfnrunError as error:
        return usage_error(str(error))
    for note in report.notes:
        echo(f"cfnrun: note: {note}", err=True)
    echo("")
    if report.same:
        echo(f"same outcome as #{operation_id}: {report.result.status.value}")
        return EXIT_SUCCESS
    echo(f"changed since #{operation_id}:")
    for change in report.changes:
        for line in change.lines:
            echo(f"  {line}")
    return EXIT_FAILED


def _replay_fuzz_case(root: Path, recorded: RecordedOperation) -> int:
    """A case ``cfnrun fuzz`` found: 1 while it still breaks the handler, 0 once it passes."""
    from cfnrun.app.fuzz_run import recorded_case, replay_case
    from cfnrun.events.fuzz import case_lines

    _, problems = recorded_case(recorded)
    echo(f"replaying fuzz case #{recorded.id}, recorded {recorded.summary()['startedAt']}: {'; '.join(problems)}")
    try:
        replayed = replay_case(root, recorded)
    except ProviderLoadError as error:
        return usage_error(str(error), [line.rstrip() for line in error.stack_trace])
    for note in replayed.notes:
        echo(f"cfnrun: note: {note}", err=True)
    schema = load_project(root, usable_schema=False).schema
    if replayed.finding is None:
        echo("\n".join(case_lines([step.describe(schema) for step in replayed.steps], None, [])))
        echo(f"the case passes now: fixed since #{recorded.id}")
        return EXIT_SUCCESS
    echo("\n".join(replayed.finding.lines(schema)))
    echo(f"still failing, as when #{recorded.id} was recorded")
    return EXIT_FAILED
