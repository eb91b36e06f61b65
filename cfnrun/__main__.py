"""``cfnrun`` and ``python -m cfnrun``: ``--version`` answers before the command line library loads."""
import sys

from cfnrun import __version__


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        print(f"cfnrun {__version__}")
        return
    from cfnrun.cli import main as run_command_line

    run_command_line()


if __name__ == "__main__":
    main()
