"""``.cfnrun/`` in a project folder: cfnrun's own local state (history, ``cfnrun test``'s log), kept out of git."""
from __future__ import annotations

from pathlib import Path

FOLDER = ".cfnrun"
_IGNORE = "# cfnrun's local state (operation history, logs): not for version control\n*\n"


def state_folder(project_root: Path) -> Path:
    """The project's ``.cfnrun/``, made on first use with a ``.gitignore`` that keeps all of it out of git."""
    folder = project_root / FOLDER
    folder.mkdir(exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text(_IGNORE, encoding="utf-8")
    return folder
