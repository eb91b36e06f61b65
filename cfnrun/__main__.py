"""``cfnrun`` and ``python -m cfnrun``: ``--version`` answers before the command line library loads,
``invoke`` and ``serve`` start their first worker before it (the early start, ``app/early_start.py``:
its result goes through the command line to the command), and the process ends without tearing
down the modules the command loaded (``app/process_end.py``)."""
import sys

from cfnrun import __version__
from cfnrun.app.process_end import leave as _leave


def main() -> None:
    try:
        _command()
    except SystemExit as exited:
        _leave(exited.code)
    _leave(0)


def _command() -> None:
    if sys.argv[1:] == ["--version"]:
        print(f"cfnrun {__version__}")
        return
    from cfnrun.app.early_start import begin

    # The early start: invoke's and serve's first worker imports the provider while the command line loads.
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    early = begin(sys.argv[2:], command)
    try:
        if early.settings is not None:  # read exactly: no need of the command line library
            from cfnrun.app.direct_start import run_read

            raise SystemExit(run_read(early, command))
        from cfnrun.cli import main as run_command_line

        run_command_line(early)
    finally:
        early.discard()  # usage errors included: no worker is left behind


if __name__ == "__main__":
    main()
