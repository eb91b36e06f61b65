"""A template's functions as last read, for the early start's guess only (``app/early_start.py``).

Before the command line loads, ``cfnrun invoke`` and ``cfnrun serve`` guess the first worker's
spec and spawn it; reading ``template.yml`` is most of that time, and most of that is importing
PyYAML. While the template file is unchanged (same size, modification and change times, inode),
the guess takes its functions from here instead. Only the guess: the command reads the template
itself and adopts the early worker only if its own spec is equal, so a stale entry costs a
process, never a different run.

Entries live in the user's cache folder (``$XDG_CACHE_HOME/cfnrun/templates``, else
``~/.cache/...``), readable by the user alone, one small JSON file per template. A missing,
unreadable or foreign entry is a miss, and a folder that cannot be written is no error.
"""
from __future__ import annotations

import json
import os
import zlib
from dataclasses import asdict
from pathlib import Path
from typing import Any, Dict, List, Optional

from cfnrun.model.template import FunctionSpec, load_template

CACHE_ENV = "XDG_CACHE_HOME"
FORMAT = 1  # of an entry: another cfnrun's entries are misses


def cached_functions(path: Path) -> Dict[str, FunctionSpec]:
    """The functions ``load_template(path)`` returns, from the cache while the file is unchanged."""
    folder = cache_folder()
    try:
        stamp = _stamp(path)
    except OSError:
        folder = None  # load_template says what is wrong with the path
    if folder is None:
        return load_template(path)
    entry = _entry(folder, path)
    functions = _read(entry, path, stamp)
    if functions is None:
        functions = load_template(path)
        _write(entry, {"format": FORMAT, "path": os.fsdecode(path), "stamp": stamp, "functions": [asdict(f) for f in functions.values()]})
    return functions


def cache_folder(kind: str = "templates") -> Optional[Path]:
    """Where entries of ``kind`` live; None when there is no absolute place for them (no usable home folder)."""
    base = os.environ.get(CACHE_ENV, "")
    if not os.path.isabs(base):  # unset, empty or relative: the XDG rule is to ignore it
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cfnrun" / kind if os.path.isabs(base) else None


def _stamp(path: Path) -> List[int]:
    status = os.stat(path)
    return [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev]


def _entry(folder: Path, path: Path) -> Path:
    return folder / f"{zlib.crc32(os.fsencode(path)):08x}-{path.parent.name[:40]}.json"


def _read(entry: Path, path: Path, stamp: List[int]) -> Optional[Dict[str, FunctionSpec]]:
    try:
        data: Any = json.loads(entry.read_bytes())
        if data["format"] != FORMAT or data["path"] != os.fsdecode(path) or data["stamp"] != stamp:
            return None
        functions = [FunctionSpec(**fields) for fields in data["functions"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {function.logical_id: function for function in functions} or None


def _write(entry: Path, data: Dict[str, Any]) -> None:
    """Atomically, readable by the user alone; any failure leaves no entry."""
    partial = entry.with_name(f".{entry.name}.{os.getpid()}")
    try:
        entry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:  # json.dump writes ASCII
            json.dump(data, handle)
        os.replace(partial, entry)
    except OSError:
        try:
            os.unlink(partial)
        except OSError:
            pass
