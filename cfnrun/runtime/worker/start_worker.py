"""The worker's command line: ``--code-dir DIR`` and either ``--zygote`` or a worker's options.

A worker started with ``--await-sandbox`` (and its lifeline) takes the rest of its options, its working folder
and its environment from the first frame on fd 0 (``handed_sandbox.py``).

``runtime/spec.py`` runs ``main`` through its launcher, in the provider's interpreter, with
this package loaded as ``cfnrun_worker``. A worker (``--lifeline FD``, optionally
``--debug-port PORT [--debug-wait]``) dies with its parent, takes over its fds and lives as
``lifecycle.run`` says; a zygote (``--zygote``) forks such workers (``fork_server.py``).
"""
from __future__ import annotations

import os
import sys
from typing import List, Optional

from .channel import take_over_fds
from .handed_sandbox import take_sandbox
from .lifecycle import run
from .lifeline import die_with_parent


def _option(argv: List[str], name: str) -> Optional[str]:
    return argv[argv.index(name) + 1] if name in argv else None


def main(argv: List[str]) -> int:
    lifeline = _option(argv, "--lifeline")
    if lifeline is not None:
        die_with_parent(int(lifeline))
    if "--await-sandbox" in argv:  # started before its function was known: the rest of its options come on fd 0
        options = take_sandbox()
        if options is None:
            return 0
        argv = argv + options
    code_dir = os.path.abspath(argv[argv.index("--code-dir") + 1])
    sys.path.insert(0, code_dir)  # the launcher left neither the current folder nor cfnrun's on sys.path
    if "--zygote" in argv:
        from .fork_server import serve_forks  # a zygote's own part: no spawned worker loads it

        return serve_forks(code_dir)
    debug_port = _option(argv, "--debug-port")
    return run(code_dir, take_over_fds(), int(debug_port) if debug_port is not None else None, "--debug-wait" in argv)
