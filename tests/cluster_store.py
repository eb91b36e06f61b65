"""The cluster sample's own store (``samples/cluster/.../store.py``), as the suite reads and changes what its handlers keep:
through the sample's module itself, so no test knows how the store lays its files out."""
from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any, Dict

STORE = Path(__file__).resolve().parents[1] / "samples" / "cluster" / "src" / "cfnrun_sample_cluster" / "store.py"


def sample_store() -> ModuleType:
    """A fresh copy of the sample's store module (it keeps no state of its own between calls)."""
    spec = importlib.util.spec_from_file_location("cluster_sample_store", STORE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.lru_cache(maxsize=None)
def _store() -> ModuleType:
    return sample_store()


def kept_clusters(state: Path) -> Dict[str, Dict[str, Any]]:
    """Every cluster the sample keeps in ``state`` (its ``CLUSTER_STATE_DIR``), by ClusterId."""
    return dict(_store().load(state))


def change_cluster(state: Path, cluster_id: str, **fields: Any) -> None:
    """Change fields of one kept cluster, as a handler would (under the store's lock)."""
    with _store().change(state) as clusters:
        clusters[cluster_id].update(fields)


def add_cluster(state: Path, cluster: Dict[str, Any]) -> None:
    """Keep one more cluster in ``state``, as a create that ended would have (under the store's lock)."""
    with _store().change(state) as clusters:
        clusters[cluster["ClusterId"]] = dict(cluster)
