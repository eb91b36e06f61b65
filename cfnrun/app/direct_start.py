"""``cfnrun invoke``, ``cfnrun serve`` and ``cfnrun fuzz`` run without the command line library, when the early start read their command line exactly.

The library (typer, and every command's options it declares) costs a one-shot invoke about as
much as the rest of its start-up together, and every serve start too (docs/performance.md), for
a command line ``options.read_exactly`` has already read into the same settings. Then the
command runs here, and this does what the library does around a command: its exit status is the
process's; end of input (EOFError) prints "Aborted!" (1); Ctrl-C before the command handles it
exits 130; a reader that went away (EPIPE) exits 1. Anything else about the command line
(``--help``, an unknown option, a value out of range, invoke's ``--watch``, serve's
``--debug-port``) goes through the library, which says it in its own words.
"""
from __future__ import annotations

import errno
import sys
from typing import Any

from cfnrun.app.early_start import EarlyStart


def run_read(early: EarlyStart, command: str) -> int:
    """Run ``cfnrun COMMAND`` (invoke, serve or fuzz) with the settings the early start read; the status the process exits with."""
    settings: Any = early.settings
    assert settings is not None, "read exactly by the early start"
    try:
        if command == "serve":
            from cfnrun.app.commands import serve

            return serve.run(settings, early)
        if command == "fuzz":
            from cfnrun.app.commands import fuzz

            return fuzz.run(settings, early)
        from cfnrun.app.commands import invoke

        return invoke.run(settings, early)
    except EOFError:
        sys.stderr.write("\nAborted!\n")
        return 1
    except KeyboardInterrupt:
        return 130
    except OSError as error:
        if error.errno != errno.EPIPE:
            raise
        return 1
