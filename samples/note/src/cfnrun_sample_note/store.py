"""Notes kept in one JSON file, so the sample needs no AWS account and no network."""
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional


def _state_file() -> Path:
    folder = Path(os.environ.get("NOTES_STATE_DIR") or Path(tempfile.gettempdir(), "cfnrun-sample-note"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "notes.json"


def load() -> Dict[str, Any]:
    path = _state_file()
    if not path.exists():
        return {"notes": {}, "tokens": {}}
    return json.loads(path.read_text())


def save(state: Dict[str, Any]) -> None:
    path = _state_file()
    scratch = path.with_suffix(".tmp")
    scratch.write_text(json.dumps(state, indent=2, sort_keys=True))
    scratch.replace(path)


def get(note_id: Optional[str]) -> Optional[Dict[str, Any]]:
    if not note_id:
        return None
    return load()["notes"].get(note_id)
