"""Clusters kept in a file each: a stand-in for a cloud API, whose calls cost no more as more clusters exist.

The store's folder (``CLUSTER_STATE_DIR``, else ``cfnrun-sample-cluster`` in the temporary folder) holds:

- ``clusters/<ClusterId>.json``: one cluster, as last written;
- ``names/<digest of a Name>``: the ClusterId of the cluster with that Name (a Name is unique and create-only);
- ``clusters.lock``: held exclusively while a change reads and writes (``change``).

Workers of ``cfnrun serve`` run at the same time, each its own process, so each change holds the
lock; a call reads and writes only the clusters it names (and a Name's entry), never the others,
so its cost does not grow with the store. Each file is renamed into place from a scratch file, so
readers never see a partial one, and a change writes its files in an order that leaves every
cluster findable, by ClusterId and by Name, at whatever step a crash stops it: a new Name's entry
before its cluster, a removed cluster before its Name's entry (an entry whose cluster is gone, or
holds another Name, finds nothing). A change that left its clusters as they were (a status check
that finds the cluster still CREATING) writes nothing.
"""
import contextlib
import fcntl
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator, MutableMapping, Optional

Cluster = Dict[str, Any]
# the ClusterIds that name a file: those the handlers make (cl- and ten hex digits), and the like; any other is no cluster's
_FILE_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")


def _folder(folder: Optional[Path]) -> str:
    return str(folder or os.environ.get("CLUSTER_STATE_DIR") or Path(tempfile.gettempdir(), "cfnrun-sample-cluster"))


def _cluster_file(folder: str, cluster_id: str) -> Optional[str]:
    return os.path.join(folder, "clusters", cluster_id + ".json") if _FILE_ID.fullmatch(cluster_id) else None


def _name_file(folder: str, name: str) -> str:
    return os.path.join(folder, "names", hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest())


def _contents(path: str) -> bytes:
    try:
        with open(path, "rb", buffering=0) as kept:
            return kept.readall()
    except FileNotFoundError:
        return b""


def _encoded(cluster: Optional[Cluster]) -> bytes:
    """One cluster on one line by the json module's C encoder, its fields in the order they were made (b"" for none)."""
    return (json.dumps(cluster) + "\n").encode() if cluster is not None else b""


def _write(path: str, contents: bytes) -> None:
    """``contents`` renamed into place whole; only under the lock (its scratch file is the one writer's)."""
    folder, name = os.path.split(path)
    scratch = os.path.join(folder, "." + name + ".tmp")
    try:
        try:
            out = open(scratch, "wb", buffering=0)
        except FileNotFoundError:  # the store's first cluster or Name
            os.makedirs(folder, exist_ok=True)
            out = open(scratch, "wb", buffering=0)
        with out:
            written = 0
            while written < len(contents):
                written += out.write(contents[written:])
        os.replace(scratch, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(scratch)
        raise


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


class Clusters(MutableMapping[str, Cluster]):
    """The clusters kept in a folder by ClusterId, each read when first asked for and changed in place;
    ``change`` saves what its block changed."""

    def __init__(self, folder: str) -> None:
        self._folder = folder
        self._read: Dict[str, bytes] = {}  # each cluster asked for, as read (b"" where there was none)
        self._now: Dict[str, Optional[Cluster]] = {}  # the same, as changed since (None: none, or removed)

    def _get(self, cluster_id: str) -> Optional[Cluster]:
        if cluster_id not in self._now:
            path = _cluster_file(self._folder, cluster_id)
            self._read[cluster_id] = text = _contents(path) if path else b""
            self._now[cluster_id] = json.loads(text) if text else None
        return self._now[cluster_id]

    def __getitem__(self, cluster_id: str) -> Cluster:
        cluster = self._get(cluster_id)
        if cluster is None:
            raise KeyError(cluster_id)
        return cluster

    def __setitem__(self, cluster_id: str, cluster: Cluster) -> None:
        if _cluster_file(self._folder, cluster_id) is None:
            raise ValueError(f"{cluster_id!r} cannot name a cluster's file: lower-case letters, digits and '-' only")
        self._get(cluster_id)
        self._now[cluster_id] = cluster

    def __delitem__(self, cluster_id: str) -> None:
        if self._get(cluster_id) is None:
            raise KeyError(cluster_id)
        self._now[cluster_id] = None

    def __iter__(self) -> Iterator[str]:
        kept = set(load(Path(self._folder))) | set(self._now)
        return iter(sorted(cluster_id for cluster_id in kept if self._get(cluster_id) is not None))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def named(self, name: str) -> Optional[Cluster]:
        """The cluster with this Name: read through the Name's entry, or made or renamed in this change."""
        for cluster in self._now.values():
            if cluster is not None and cluster.get("Name") == name:
                return cluster
        cluster_id = _contents(_name_file(self._folder, name)).decode("utf-8", "replace").strip()
        cluster = self._get(cluster_id) if cluster_id else None
        return cluster if cluster is not None and cluster.get("Name") == name else None

    def save(self) -> None:
        """Write what changed since each cluster was read, in the order that keeps every cluster findable."""
        changed = [(cluster_id, self._read[cluster_id], cluster) for cluster_id, cluster in self._now.items()
                   if _encoded(cluster) != self._read[cluster_id]]
        before = {cluster_id: (json.loads(text) if text else {}).get("Name") for cluster_id, text, _ in changed}
        for cluster_id, _, cluster in changed:
            if cluster is None:
                _remove(_cluster_file(self._folder, cluster_id) or "")
        for cluster_id, _, cluster in changed:
            if cluster is not None and cluster.get("Name") and cluster["Name"] != before[cluster_id]:
                _write(_name_file(self._folder, cluster["Name"]), (cluster_id + "\n").encode())
        for cluster_id, _, cluster in changed:
            if cluster is not None:
                _write(_cluster_file(self._folder, cluster_id) or "", _encoded(cluster))
        for cluster_id, _, cluster in changed:
            name = before[cluster_id]
            if name and (cluster is None or cluster.get("Name") != name):
                entry = _name_file(self._folder, name)
                if _contents(entry).decode("utf-8", "replace").strip() == cluster_id:
                    _remove(entry)


def load(folder: Optional[Path] = None) -> Dict[str, Cluster]:
    """Every cluster by ClusterId, as last written, in ClusterId order (what LIST answers)."""
    clusters_folder = os.path.join(_folder(folder), "clusters")
    try:
        files = sorted(os.listdir(clusters_folder))
    except FileNotFoundError:
        return {}
    kept: Dict[str, Cluster] = {}
    for file in files:
        if file.endswith(".json") and not file.startswith("."):
            text = _contents(os.path.join(clusters_folder, file))  # "" when a change removed it since the folder was listed
            if text:
                kept[file[: -len(".json")]] = json.loads(text)
    return kept


def current(folder: Optional[Path] = None) -> Clusters:
    """The clusters as kept now, each read when asked for (no lock: every file is renamed into place whole); not saved."""
    return Clusters(_folder(folder))


@contextlib.contextmanager
def change(folder: Optional[Path] = None) -> Iterator[Clusters]:
    """The clusters to change in place, under the store's lock; saved when the block ends without an error."""
    kept = _folder(folder)
    try:
        lock = open(os.path.join(kept, "clusters.lock"), "ab", buffering=0)
    except FileNotFoundError:  # the store's first change
        os.makedirs(kept, exist_ok=True)
        lock = open(os.path.join(kept, "clusters.lock"), "ab", buffering=0)
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the lock file closes
        clusters = Clusters(kept)
        yield clusters
        clusters.save()


def find(clusters: Clusters, cluster_id: Optional[str], name: Optional[str]) -> Optional[Cluster]:
    """The cluster with this ClusterId or, failing that, this Name."""
    if cluster_id and cluster_id in clusters:
        return clusters[cluster_id]
    return clusters.named(name) if name else None
