"""What a ``--state`` folder holds, read as a test checks it: the stacks kept, and every byte (where no secret may be);
and the stabilizing cluster sample those tests stop and start serve on."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from cluster_store import kept_clusters
from conftest import LOCAL_STATE, SAMPLES, ServerProcess
from cfnrun.stacks.state_db import StateDatabase

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}


def kept_records(folder: Path, read: Callable[[StateDatabase], List[Dict[str, Any]]] = StateDatabase.records) -> List[Dict[str, Any]]:
    """The stacks kept in ``folder`` (or what ``read`` reads there: ``StateDatabase.change_sets``, say)."""
    database = StateDatabase(folder)
    database.open()
    try:
        return read(database)
    finally:
        database.close()


def kept_text(folder: Path) -> str:
    """Every file of the state folder, as text."""
    return "".join(path.read_bytes().decode("utf-8", "replace") for path in sorted(folder.iterdir()) if path.is_file())


def kept_stack(folder: Path, stack: str) -> Optional[Dict[str, Any]]:
    """The last record of the stack named ``stack``; None while the file or the stack is not there yet."""
    try:
        records = kept_records(folder)
    except Exception:  # noqa: B902 - the serve is mid-write or has not made the file yet: not there yet
        return None
    return next((record for record in reversed(records) if record["name"] == stack), None)


def kept_physical_id(folder: Path, stack: str, logical_id: str) -> Optional[str]:
    record = kept_stack(folder, stack) or {"resources": []}
    return next((r["physical_id"] for r in record["resources"] if r["logical_id"] == logical_id), None)


def serve_note_kept(folder: Path) -> ServerProcess:
    """``cfnrun serve --provider note --state kept`` run in ``folder`` (a copy of the note sample there)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "cfnrun", "serve", "--port", "0", "--no-reload", "--provider", "note", "--state", "kept"],
        cwd=str(folder), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "NO_COLOR": "1"},
    )
    return ServerProcess(folder, process=process)


def api_error(call: Any, **arguments: Any) -> Dict[str, str]:
    """The Error of a call that must be refused (Type, Code, Message)."""
    from botocore.exceptions import ClientError

    try:
        call(**arguments)
    except ClientError as refused:
        return dict(refused.response["Error"])
    raise AssertionError(f"{getattr(call, '__name__', call)} was not refused")


def cluster_project(folder: Path, delay_s: int) -> Path:
    """A private copy of the stabilizing cluster sample: each create answers IN_PROGRESS (with its ClusterId) ``delay_s`` apart."""
    project = folder / "cluster"
    shutil.copytree(SAMPLES / "cluster", project, ignore=LOCAL_STATE)
    template = project / "template.yml"
    template.write_text(template.read_text().replace('CALLBACK_DELAY_SECONDS: "2"', f'CALLBACK_DELAY_SECONDS: "{delay_s}"'))
    return project


def serve_cluster(folder: Path, *arguments: str) -> ServerProcess:
    """``cfnrun serve cluster`` run in ``folder`` (so ``--state kept`` is ``folder/kept``)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "cfnrun", "serve", "cluster", "--port", "0", "--no-reload", *arguments],
        cwd=str(folder), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "NO_COLOR": "1"},
    )
    return ServerProcess(folder, process=process)


def clusters(project: Path) -> Dict[str, Any]:
    """The clusters the sample's handlers keep (``CLUSTER_STATE_DIR: .state`` in the project), by ClusterId."""
    return kept_clusters(project / ".state")


def settled_status(cloudformation: Any, stack: str) -> str:
    """The stack's status once its operation has ended (no longer ``*_IN_PROGRESS``), within the suite's patience."""
    from conftest import PATIENCE_S, wait_until

    def status() -> str:
        return str(cloudformation.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"])

    wait_until(lambda: not status().endswith("_IN_PROGRESS"), timeout=PATIENCE_S, what=f"stack {stack} to settle")
    return status()


def stack_events(cloudformation: Any, stack: str) -> List[Dict[str, Any]]:
    """The stack's events, oldest first."""
    return list(reversed(cloudformation.describe_stack_events(StackName=stack)["StackEvents"]))
