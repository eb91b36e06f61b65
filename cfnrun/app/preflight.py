"""Checks made before any worker starts, so a wrong flag is one clear error, not a traceback."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Optional, Tuple

from cfnrun.model.errors import CfnrunError
from cfnrun.model.project import Project

PROBE_TIMEOUT_S = 20.0
Version = Tuple[int, int]


def interpreter_version(python: str) -> Version:
    """The (major, minor) of ``--python``; a CfnrunError when it is missing or not a Python 3.9+."""
    if os.path.abspath(python) == os.path.abspath(sys.executable):
        return sys.version_info[:2]
    found = shutil.which(python)
    if found is None:
        raise CfnrunError(f"--python {python}: no such interpreter (not a file, and not on PATH)")
    try:
        probe = subprocess.run(
            [found, "-I", "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CfnrunError(f"--python {python}: cannot run it: {error}") from None
    try:
        major, minor = (int(part) for part in probe.stdout.strip().split("."))
    except ValueError:
        raise CfnrunError(f"--python {python}: does not look like a Python interpreter (it printed no version)") from None
    if (major, minor) < (3, 9):
        raise CfnrunError(f"--python {python}: Python {major}.{minor}; cfnrun's workers need Python 3.9 or newer")
    return major, minor


def runtime_mismatch(project: Project, version: Version) -> Optional[str]:
    """A note when template.yml's Runtime names another Python than the one that will run the provider."""
    declared = {spec.runtime for spec in project.functions.values() if spec.runtime}
    running = f"python{version[0]}.{version[1]}"
    if not declared or running in declared:
        return None
    return (
        f"{project.type_name}: template.yml declares Runtime {', '.join(sorted(declared))} but the provider runs under {running} here; "
        "pass --python with a matching interpreter to run what Lambda runs"
    )


def require_debugpy(python: str) -> None:
    """``serve --debug-port`` needs debugpy importable by the interpreter that runs the workers."""
    probe = subprocess.run(
        [shutil.which(python) or python, "-c", "import debugpy"],
        capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL,
    )
    if probe.returncode != 0:
        raise CfnrunError(
            f"--debug-port needs debugpy in the interpreter that runs the provider ({python}): "
            f"{python} -m pip install debugpy (or pip install 'cfnrun[debug]')"
        )
