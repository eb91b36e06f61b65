"""``cfnrun`` and ``python -m cfnrun``: ``--version`` answers before the command line library loads, and
``invoke`` starts its worker before it (``app/early_start.py``)."""
import sys

from cfnrun import __version__


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        print(f"cfnrun {__version__}")
        return
    if sys.argv[1:2] == ["invoke"]:
        # The function's worker imports the provider while the command line loads (app/early_start.py).
        from cfnrun.app import early_start

        early_start.start(sys.argv[2:])
        try:
            _run_command_line()
        finally:
            early_start.discard()  # usage errors included: no worker is left behind
        return
    _run_command_line()


def _run_command_line() -> None:
    from cfnrun.cli import main as run_command_line

    run_command_line()


if __name__ == "__main__":
    main()
