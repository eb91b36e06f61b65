"""``cfnrun history`` (the recorded operations, newest first) and ``cfnrun history show ID`` (one as a timeline)."""
from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from cfnrun.app.commands.common import EXIT_SUCCESS, echo, project_dir, usage_error
from cfnrun.app.early_start import EarlyStart
from cfnrun.app.settings.history import HistoryOptions, HistoryShowOptions
from cfnrun.history.store import HistoryStore, RecordedOperation
from cfnrun.model.errors import CfnrunError

if TYPE_CHECKING:
    from cfnrun.model.schema import ResourceSchema


COLUMNS = (("VIA", "source"), ("ACTION", "action"), ("STATUS", "status"))  # the sized ones: title, summary key


def run(options: HistoryOptions, early: EarlyStart) -> int:
    """The table of recorded operations (``--json``: one object per operation)."""
    try:
        operations = HistoryStore(project_dir(None, options.project)).operations(options.limit)
    except CfnrunError as error:
        return usage_error(str(error), json_output=options.json_output)
    if options.json_output:
        for operation in operations:
            echo(json.dumps(operation.summary()))
        return EXIT_SUCCESS
    rows = [operation.summary() for operation in operations]
    # Each text column as wide as its widest value (CREATE_PRE_PROVISION, UPDATE_FAILED...): a row never shifts the next.
    via, action, status = (max([len(title), *(len(str(row[key])) for row in rows)]) for title, key in COLUMNS)
    echo(f"{'ID':>5}  {'WHEN (UTC)':<20} {'VIA':<{via}} {'ACTION':<{action}} {'STATUS':<{status}} {'CALLS':>5} {'SECONDS':>8}  ERROR")
    for row in rows:
        echo(
            f"{row['id']:>5}  {row['startedAt']:<20} {row['source']:<{via}} {row['action']:<{action}} {row['status']:<{status}} "
            f"{row['invocations']:>5} {row['durationSeconds']:>8.2f}  {row['errorCode'] or ''}"
        )
    return EXIT_SUCCESS


def show(options: HistoryShowOptions, early: EarlyStart) -> int:
    """A recorded operation as the timeline ``cfnrun invoke`` shows, then when and how it was recorded."""
    from cfnrun.app.history import show_operation
    from cfnrun.model.project import load_project
    from cfnrun.ui.timeline import TimelineRenderer

    try:
        root = project_dir(None, options.project)
        store = HistoryStore(root)
        recorded = store.get(options.operation_id)  # a clear error before anything is printed
        schema = load_project(root, usable_schema=False).schema
    except CfnrunError as error:
        return usage_error(str(error))
    if recorded.source == "fuzz":
        return _show_fuzz_case(recorded, schema)
    operation = show_operation(store, options.operation_id, [TimelineRenderer(sys.stdout, schema)])
    from cfnrun.app.history import SERVED_VIA

    via = SERVED_VIA.get(operation.source, f"cfnrun {operation.source}")
    echo(f"\nrecorded {operation.summary()['startedAt']} via {via}, cfnrun {operation.cfnrun_version}")
    return EXIT_SUCCESS


def _show_fuzz_case(operation: RecordedOperation, schema: "ResourceSchema") -> int:
    """A case ``cfnrun fuzz`` found: its steps, the problems under the step that showed them."""
    from cfnrun.fuzz.steps import Finding

    echo("\n".join(Finding.recorded(operation.request).lines(schema)))
    echo(f"\nfound {operation.summary()['startedAt']} by cfnrun fuzz, cfnrun {operation.cfnrun_version}; cfnrun replay {operation.id} runs it again")
    return EXIT_SUCCESS
