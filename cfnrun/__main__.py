"""``cfnrun`` and ``python -m cfnrun``: ``--version`` answers before the command line library loads,
``invoke`` and ``serve`` start their first worker before it (the early start, ``app/early_start.py``:
its result goes through the command line to the command), and the process ends without tearing
down the modules the command loaded (``_leave``)."""
import sys
from typing import NoReturn

from cfnrun import __version__


def main() -> None:
    try:
        _command()
    except SystemExit as exited:
        _leave(exited.code)
    _leave(0)


def _leave(code: object) -> NoReturn:
    """End the process once the command is done, as ``sys.exit(code)`` would, minus the interpreter's teardown.

    Exit handlers still run, threads are joined and output is flushed; what is skipped is
    freeing every module the command loaded (pydantic, botocore, aiohttp...), ~50 ms of a
    one-shot ``invoke`` for nothing. An exception the command did not handle never gets here.
    """
    import atexit
    import os
    import threading

    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
    status = code if isinstance(code, int) else (0 if code is None else 1)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (``| head``) or a closed stream
            status = status or 120  # what Python itself exits with when its final flush fails
    os._exit(status)


def _command() -> None:
    if sys.argv[1:] == ["--version"]:
        print(f"cfnrun {__version__}")
        return
    from cfnrun.app.early_start import begin

    # The early start: invoke's and serve's first worker imports the provider while the command line loads.
    early = begin(sys.argv[2:], sys.argv[1] if len(sys.argv) > 1 else "")
    try:
        if early.settings is not None:  # read exactly: no need of the command line library
            from cfnrun.app.direct_start import run_read

            raise SystemExit(run_read(early))
        from cfnrun.cli import main as run_command_line

        run_command_line(early)
    finally:
        early.discard()  # usage errors included: no worker is left behind


if __name__ == "__main__":
    main()
