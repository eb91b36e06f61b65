"""Clusters kept in one JSON file: a stand-in for a slow cloud API.

Workers of ``cfnrun serve`` run at the same time, each its own process, so each change holds
an exclusive lock on the store while it reads, changes and writes it (``change``); the new
state is renamed into place from a scratch file of the writer's own, so readers never see a
partial file. Every call of a create reads and writes the whole store, so a stack of hundreds of
clusters makes it hot: it is written on one line by the json module's C encoder (its indented
form is encoded in Python, several times slower), in the order the clusters and their fields were
made (sorting them cost a fifth more), and not written at all when a change left it as it was (a
status check that finds the cluster still CREATING).
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


def _text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def _parsed(text: str) -> Clusters:
    return json.loads(text)["clusters"] if text else {}


def _encoded(clusters: Clusters) -> str:
    return json.dumps({"clusters": clusters}) + "\n"


def load() -> Clusters:
    """Every cluster by ClusterId, as last written."""
    return _parsed(_text(_state_file()))


@contextlib.contextmanager
def change() -> Iterator[Clusters]:
    """The clusters to change in place, under the store's lock; saved when the block ends without an error."""
    path = _state_file()
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the lock file closes
        before = _text(path)
        clusters = _parsed(before)
        yield clusters
        after = _encoded(clusters)
        if after == before:
            return
        descriptor, scratch = tempfile.mkstemp(dir=path.parent, prefix=".clusters-", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "w") as out:
                out.write(after)
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
