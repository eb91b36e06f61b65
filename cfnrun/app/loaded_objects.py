"""The cyclic garbage collector and what a command loads as it starts: off until then, then kept out of its way.

``cfnrun serve``, ``invoke``, ``test`` and ``stack test`` import most of what they run as they start
(aiohttp, pydantic's models, the contract checker, the stacks engine): objects that live as long as the
process. The collector, run every few hundred new objects, walked them again and again while they were
made: ~150 collections, ~100 ms of serve's start (measured 2026-11-29 with ``gc.callbacks``). So
``cfnrun/__main__.py`` turns it off for those commands (``off_while_loading``), and each turns it on once it
has loaded what its calls need (``keep_what_loaded``): serve once what it loads after listening is in
(``app/serve.py``; ``test`` and ``stack test`` likewise for the serve they start), invoke once its first
call's modules are loaded, while its worker imports the provider (``app/invoke.py``). ``cfnrun test``'s
suite process does the same around cfn's import (``app/cfn_offline.py``). What they loaded is frozen then
(``gc.freeze``), so a full collection later walks what the command made since, not again the ~70,000
objects of its start (50-65 ms each, one or more in a wide stack's create). The start's own garbage
cycles (~1,900 objects for serve) are frozen with it and never freed.
"""
from __future__ import annotations

import contextlib
import gc
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Iterator

COMMANDS = ("serve", "invoke", "test", "stack")  # ``cfnrun stack`` has one command, ``stack test``
_lock = threading.Lock()
_imports = 0  # ``no_collections_meanwhile`` blocks running
_on_after = False  # the collector is to be on once the last of them ends


def off_while_loading(command: str) -> None:
    if command in COMMANDS:
        gc.disable()


def keep_what_loaded() -> None:
    global _on_after
    gc.freeze()
    with _lock:
        if _imports:
            _on_after = True  # once the import under way is done
        else:
            gc.enable()


@contextlib.contextmanager
def no_collections_meanwhile() -> "Iterator[None]":
    """No cyclic collections while the block runs, in any thread (the collector is the process's): for a large import
    on a thread of its own, such as moto's CloudFormation (``app/moto_server.py``), ~0.8 s of whose ~2.5 s of CPU were
    collections (measured 2026-11-29). The collector is on again once the last such block ends, if it was on as the
    first began or ``keep_what_loaded`` came meanwhile."""
    global _imports, _on_after
    with _lock:
        if not _imports:
            _on_after = gc.isenabled()
            gc.disable()
        _imports += 1
    try:
        yield
    finally:
        with _lock:
            _imports -= 1
            if not _imports and _on_after:
                gc.enable()
