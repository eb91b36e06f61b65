"""Clusters kept in one JSON file: a stand-in for a slow cloud API.

Workers of ``cfnrun serve`` run at the same time, each its own process, so each change holds
an exclusive lock on the store while it reads, changes and writes it (``change``); the new
state is renamed into place from a scratch file of the writer's own, so readers never see a
partial file.
"""
import contextlib
import fcntl
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator, Optional

Clusters = Dict[str, Dict[str, Any]]


def _state_file() -> Path:
    folder = Path(os.environ.get("CLUSTER_STATE_DIR") or Path(tempfile.gettempdir(), "cfnrun-sample-cluster"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "clusters.json"


def _read(path: Path) -> Clusters:
    return json.loads(path.read_text())["clusters"] if path.exists() else {}


def load() -> Clusters:
    """Every cluster by ClusterId, as last written."""
    return _read(_state_file())


@contextlib.contextmanager
def change() -> Iterator[Clusters]:
    """The clusters to change in place, under the store's lock; saved when the block ends without an error."""
    path = _state_file()
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the lock file closes
        clusters = _read(path)
        yield clusters
        descriptor, scratch = tempfile.mkstemp(dir=path.parent, prefix=".clusters-", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "w") as out:
                json.dump({"clusters": clusters}, out, indent=2, sort_keys=True)
            os.replace(scratch, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(scratch)
            raise


def find(clusters: Clusters, cluster_id: Optional[str], name: Optional[str]) -> Optional[Dict[str, Any]]:
    """The cluster with this ClusterId or, failing that, this Name."""
    if cluster_id and cluster_id in clusters:
        return clusters[cluster_id]
    return next((record for record in clusters.values() if name and record.get("Name") == name), None)
