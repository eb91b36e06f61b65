"""A worker's life once its channel and log fds are in place: preload, load the handler, serve calls.

Startup frames from the parent: an optional ``{"type": "preload", "modules": [...]}``
(answered ``preloaded``), then ``{"type": "load", "handler": "pkg.mod.attr", "identity":
{...}}`` (answered ``ready`` or ``init_error``); then one ``{"id", "request_id",
"deadline_ms", "event"}`` frame per call. A standby worker sits between the two until new
code needs a home. Spawned workers and workers forked by a zygote both live this way.
"""
from __future__ import annotations

import faulthandler
import gc
import importlib
import os
import sys
from typing import List, Optional

from .channel import Channel, ChannelDisabled
from .debugger import breakpoint_without_terminal, start_debugger
from .host import HandlerHost
from .loading import InitError
from .loop import Worker
from .protocol import encode_frame


def preload(modules: List[str]) -> None:
    """Import the provider's dependencies ahead of its code, so loading new code is quick."""
    for name in modules:
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: B902 - a dependency that fails here fails again, visibly, on load
            pass


def no_collections_while_loading() -> None:
    """Turn the cyclic collector off until the imports are done (``keep_loaded_objects_out_of_collections``).

    An import makes objects that live as long as the process, and the collector, run every few hundred new
    objects, walked them again and again: 80 collections, ~25 ms of the ~0.3 s the support library's import
    takes (measured 2026-11-29).
    """
    gc.disable()


def keep_loaded_objects_out_of_collections() -> None:
    """Move what the imports made (modules, classes, botocore's models) out of the cyclic collector's sight, then
    turn the collector on.

    They live as long as the process; without this each full collection during a call walks
    them all again (~50,000 objects with boto3 loaded). Reference counting frees what it freed
    before, and everything made later (each call's sessions, their cycles) is collected as usual;
    only a reference cycle among the objects frozen here, dropped later, is never reclaimed (a
    worker never unloads its handler): the imports' own garbage cycles too, a few hundred objects
    (589 for the support library and boto3). In a zygote, it also keeps the forked workers'
    collections from writing to (and so copying) the memory pages they share with it.
    """
    gc.freeze()
    gc.enable()


def run(code_dir: str, channel: Channel, debug_port: Optional[int] = None, debug_wait: bool = False) -> int:
    """Load the handler and serve calls; the worker's exit status."""
    no_collections_while_loading()
    faulthandler.enable(sys.stderr)
    if not os.environ.get("PYTHONBREAKPOINT"):  # the developer's own choice of debugger wins
        sys.breakpointhook = breakpoint_without_terminal
    before_call = start_debugger(debug_port, debug_wait) if debug_port is not None else None

    try:
        command = channel.read_frame()
        if command["type"] == "preload":
            preload(command["modules"])
            channel.write_frame(encode_frame({"type": "preloaded"}))
            command = channel.read_frame()
    except (EOFError, ConnectionError):
        return 0
    host = HandlerHost(code_dir, os.environ.get("CFNRUN_LOG_LEVEL", "INFO"), sys.stdout)
    try:
        host.load(command["handler"])
    except InitError as error:
        sys.stdout.flush()
        channel.write_frame(encode_frame({"type": "init_error", "error": error.details}))
        return 3
    keep_loaded_objects_out_of_collections()
    try:
        Worker(host, command["identity"], channel, before_call).serve()
    except ChannelDisabled:
        os._exit(0)  # a forked child left the handler: it ends quietly, without serving
    return 0
