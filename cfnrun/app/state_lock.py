"""One serve per ``--state`` folder: a lock held for the serve's life, so two serves never overwrite each other's stacks.

The lock is ``fcntl.flock`` on ``serve.lock`` in the folder, taken before serve listens and held
until it has stopped. The kernel releases it when the process ends, however it ends (a crash, a
SIGKILL): a stale lock file never stops the next serve. The file says who holds it (the process
id, then serve's address once it listens), so the serve that is refused can name the holder.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Iterator, Optional

from cfnrun.model.errors import CfnrunError

LOCK_FILE = "serve.lock"


class StateHold:
    """The lock on one ``--state`` folder (or on none, without ``--state``)."""

    def __init__(self, folder: Optional[Path], descriptor: Optional[int]) -> None:
        self.folder = folder
        self.descriptor = descriptor

    def tell(self, url: str) -> None:
        """Say serve's address in the lock file, for a serve that is refused the folder."""
        if self.descriptor is not None:
            _write_holder(self.descriptor, url)


@contextlib.contextmanager
def state_held(folder: Optional[Path]) -> Iterator[StateHold]:
    """Hold ``folder``'s lock until the block ends; CfnrunError naming the holder when another serve holds it."""
    if folder is None:
        yield StateHold(None, None)
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as error:
        raise CfnrunError(f"--state {folder}: cannot use this folder: {error.strerror or error}") from None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CfnrunError(
                f"--state {folder}: another cfnrun holds it ({_holder(descriptor)}); stop that serve first, or give this one another folder"
            ) from None
        _write_holder(descriptor, None)
        yield StateHold(folder, descriptor)
    finally:
        os.close(descriptor)  # closing the last descriptor releases the lock


def _write_holder(descriptor: int, url: Optional[str]) -> None:
    text = json.dumps({"pid": os.getpid(), "url": url}).encode()
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, text, 0)


def _holder(descriptor: int) -> str:
    """Who holds the lock, as its file says: "pid 123 at http://127.0.0.1:3001"."""
    try:
        holder = json.loads(os.pread(descriptor, 4096, 0) or b"{}")
    except ValueError:
        holder = {}
    if not isinstance(holder, dict) or not isinstance(holder.get("pid"), int):
        return "a process that has not said which yet"
    where = f" at {holder['url']}" if isinstance(holder.get("url"), str) else " (not listening yet)"
    return f"pid {holder['pid']}{where}"
