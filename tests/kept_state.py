"""What a ``--state`` folder holds, read as a test checks it: the stacks kept, and every byte (where no secret may be)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

from cfnrun.stacks.state_db import StateDatabase


def kept_records(folder: Path) -> List[Dict[str, Any]]:
    database = StateDatabase(folder)
    database.open()
    try:
        return database.records()
    finally:
        database.close()


def kept_text(folder: Path) -> str:
    """Every file of the state folder, as text."""
    return "".join(path.read_bytes().decode("utf-8", "replace") for path in sorted(folder.iterdir()) if path.is_file())
