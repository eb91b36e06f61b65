"""What every command says and returns the same way: its exit statuses, its usage errors, the project it runs on."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import List, Optional

from cfnrun.model.errors import CfnrunError

EXIT_SUCCESS = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

_ANSI_CODE = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")


def echo(message: str, err: bool = False) -> None:
    """A line on standard output (``err``: standard error), flushed; escape codes dropped unless it is a terminal."""
    stream = sys.stderr if err else sys.stdout
    if not stream.isatty():
        message = _ANSI_CODE.sub("", message)
    stream.write(message + "\n")
    stream.flush()


def usage_error(message: str, details: Optional[List[str]] = None, json_output: bool = False) -> int:
    """Say what stops the command (with ``--json``, as an error event too); the status it exits with."""
    echo(f"cfnrun: error: {message}", err=True)
    for line in details or []:
        echo(line, err=True)
    if json_output:
        echo(json.dumps({"event": "error", "message": message, "details": details or [], "exitCode": EXIT_USAGE}))
    return EXIT_USAGE


def project_dir(positional: Optional[Path], option: Optional[Path]) -> Path:
    """One way to name the project on every command: a positional path or -p/--project, else found like git."""
    if positional is not None and option is not None and positional.resolve() != option.resolve():
        raise CfnrunError(f"two projects named: {positional} and --project {option}; name one")
    named = positional or option
    if named is not None:
        return named
    from cfnrun.model.project import find_project_root

    return find_project_root(Path.cwd()) or Path(".")
