"""Clusters kept in one JSON file: a stand-in for a slow cloud API."""
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional


def _state_file() -> Path:
    folder = Path(os.environ.get("CLUSTER_STATE_DIR") or Path(tempfile.gettempdir(), "cfnrun-sample-cluster"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "clusters.json"


def load() -> Dict[str, Any]:
    path = _state_file()
    if not path.exists():
        return {"clusters": {}, "tokens": {}}
    return json.loads(path.read_text())


def save(state: Dict[str, Any]) -> None:
    path = _state_file()
    scratch = path.with_suffix(".tmp")
    scratch.write_text(json.dumps(state, indent=2, sort_keys=True))
    scratch.replace(path)


def get(cluster_id: Optional[str]) -> Optional[Dict[str, Any]]:
    return load()["clusters"].get(cluster_id) if cluster_id else None


def put(record: Dict[str, Any]) -> None:
    state = load()
    state["clusters"][record["ClusterId"]] = record
    save(state)


def find_by_name(name: Optional[str]) -> Optional[Dict[str, Any]]:
    for record in load()["clusters"].values():
        if name and record.get("Name") == name:
            return record
    return None
