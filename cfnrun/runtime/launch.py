"""How a worker's interpreter is launched, and the fds of its sandbox: what starting one needs, and nothing more.

The lightest of the runtime's modules (``os``, ``sys`` and ``_socket``; no ``typing``, no
``subprocess``): ``cfnrun invoke`` starts its worker's interpreter from here before the rest of
cfnrun loads (``waiting_worker.py``), and ``spec.py`` builds every other worker's command line
from the same pieces.
"""
from __future__ import annotations

import _socket
import os

TYPE_CHECKING = False  # typing's own would import typing (~12 M instructions); type checkers read this name alike
if TYPE_CHECKING:
    import socket

MARKER = "CFNRUN_SANDBOX"  # the variable every process of a sandbox carries (``sandbox.py`` sweeps by it)
WORKER_SCRIPT = os.path.realpath(os.path.join(os.path.dirname(__file__), "worker", "start_worker.py"))
# Runs the worker package from its cached bytecode (a script named on the command line is compiled afresh
# each time: ~10 ms of every worker's start), as a package of its own name, ``cfnrun_worker``, whose
# modules import each other relatively: the provider's interpreter may not have cfnrun installed, and
# none of the worker's module names can hide a provider's own. Drops the '' that -c put first on
# sys.path: the provider sees neither the current folder nor cfnrun's. The entry module's path, the
# argument after the code, is what names a worker (and a zygote) in ps and /proc/PID/cmdline.
_LAUNCH = (
    "import sys, os, importlib, importlib.util as u\n"
    "script = sys.argv[1]; folder = os.path.dirname(script)\n"
    "if sys.path and sys.path[0] == '': del sys.path[0]\n"  # not there under PYTHONSAFEPATH
    "init = os.path.join(folder, '__init__.py')\n"
    "spec = u.spec_from_file_location('cfnrun_worker', init, submodule_search_locations=[folder])\n"
    "sys.modules['cfnrun_worker'] = package = u.module_from_spec(spec); spec.loader.exec_module(package)\n"
    "worker = importlib.import_module('cfnrun_worker.' + os.path.basename(script)[:-3]); sys.exit(worker.main(sys.argv))"
)


def worker_launch(python: str) -> list[str]:
    """The start of a worker's (or a zygote's) command line: the interpreter running the worker package, unbuffered."""
    return [python, "-u", "-c", _LAUNCH, WORKER_SCRIPT]


def new_marker() -> str:
    """A sandbox's marker: this process's pid (whose sandboxes they are), then a random token."""
    return f"{os.getpid()}-{os.urandom(12).hex()}"


def started_environment(base: "dict[str, str]") -> "dict[str, str]":
    """The variables a worker's interpreter reads as it starts that cfnrun sets, over ``base``: the time zone
    Lambda's runtime has unless the developer's environment names one, and unbuffered output
    (``environment.py``'s ``lambda_environment`` sets them so; a template's Environment may still change them)."""
    return {**base, "TZ": base.get("TZ", ":UTC"), "PYTHONUNBUFFERED": "1"}


def read_at_start(name: str) -> bool:
    """Is ``name`` a variable read as a process starts, before any of its code runs (so that setting it later,
    in ``os.environ``, comes too late)? The interpreter's own (``PYTHON*``: its path, flags, hash seed, encodings),
    the locale's and the time zone's, the home folder (the user's site-packages), and the dynamic loader's and the
    C library's (``LD_*``, ``MALLOC_*``, ``GLIBC_TUNABLES``)."""
    return name.startswith(("PYTHON", "LC_", "LD_", "MALLOC_")) or name in ("LANG", "LANGUAGE", "TZ", "HOME", "GLIBC_TUNABLES")


class SandboxEnds:
    """The fds and marker of one new sandbox: the channel socket pair, the log pipe, the lifeline pipe.

    Nothing is inheritable: only the worker (given its ends explicitly) and this parent hold them. The pair is
    made with ``_socket``, and the parent's end becomes a ``socket.socket`` when first asked for: the early
    start spawns a worker before the ``socket`` module (its enums: ~15 M instructions) is imported.
    """

    def __init__(self) -> None:
        self._parent, self.worker_end = _socket.socketpair()
        self._parent_end: socket.socket | None = None
        self.log_read, self.log_write = os.pipe()
        self.lifeline_read, self.lifeline_write = os.pipe()
        self.marker = new_marker()

    @property
    def parent_end(self) -> socket.socket:
        """The parent's end of the channel socket pair."""
        if self._parent_end is None:
            import socket

            self._parent_end = socket.socket(fileno=self._parent.detach())
        return self._parent_end

    def close_worker_ends(self) -> None:
        self.worker_end.close()
        os.close(self.log_write)
        os.close(self.lifeline_read)

    def close_parent_ends(self) -> None:
        (self._parent_end or self._parent).close()
        os.close(self.log_read)
        os.close(self.lifeline_write)

