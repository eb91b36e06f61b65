"""Notes kept in one JSON file, so the sample needs no AWS account and no network.

``cfnrun serve`` runs a function in several worker processes at once, as Lambda runs several
sandboxes, so the file is shared by concurrent writers. Every change is a read-modify-write
under an exclusive lock (``change``), and the new state goes to a scratch file of its own that
is renamed over the store: a reader (``load``) never sees half a file and no write is lost.
"""
import contextlib
import fcntl
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator

State = Dict[str, Any]


def _state_file() -> Path:
    folder = Path(os.environ.get("NOTES_STATE_DIR") or Path(tempfile.gettempdir(), "cfnrun-sample-note"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "notes.json"


def _read(path: Path) -> State:
    if not path.exists():
        return {"notes": {}, "tokens": {}}
    return json.loads(path.read_text())


def _write(path: Path, state: State) -> None:
    descriptor, scratch = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w") as out:
            json.dump(state, out, indent=2, sort_keys=True)
        os.replace(scratch, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(scratch)
        raise


def load() -> State:
    """The state as last written (a snapshot: change it with ``change``)."""
    return _read(_state_file())


@contextlib.contextmanager
def change() -> Iterator[State]:
    """The state to change in place; written back when the block ends without an error.

    Other workers wait at the lock until then, so two creates never overwrite each other.
    """
    path = _state_file()
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the lock file closes
        state = _read(path)
        yield state
        _write(path, state)

