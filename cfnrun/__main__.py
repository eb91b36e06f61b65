"""``cfnrun`` and ``python -m cfnrun``: ``--version`` answers before the command line library loads,
``invoke`` and ``serve`` start their first worker before it (the early start, ``app/early_start.py``:
its result goes through the command line to the command; ``invoke`` starts its worker's interpreter
first of all, ``runtime/waiting_worker.py``), and the process ends without tearing down the modules
the command loaded (``app/process_end.py``)."""
import sys

from cfnrun import __version__


def main() -> None:
    try:
        _command()
    except SystemExit as exited:
        from cfnrun.app.process_end import leave

        leave(exited.code)
    from cfnrun.app.process_end import leave

    leave(0)


def _command() -> None:
    if sys.argv[1:] == ["--version"]:
        print(f"cfnrun {__version__}")
        return
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    waiting = None
    if command == "invoke":  # its worker's interpreter starts before anything else loads, then waits for its spec
        from cfnrun.runtime.waiting_worker import WaitingWorker, worth_starting

        waiting = WaitingWorker.start() if worth_starting(sys.argv[2:]) else None
    try:
        from cfnrun.app.loaded_objects import off_while_loading

        off_while_loading(command)  # after the waiting interpreter's start, which nothing may come before
        from cfnrun.app.early_start import begin
    except BaseException:  # noqa: B902 - interrupted: nothing is left behind
        if waiting is not None:
            waiting.discard()
        raise
    # The early start: invoke's and serve's first worker imports the provider while the command line loads.
    early = begin(sys.argv[2:], command, waiting)
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
