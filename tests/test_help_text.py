"""Help that says what is true, whole at 80 columns (#30 item 12)."""
from __future__ import annotations

import pytest

from conftest import cfnrun

NARROW = {"COLUMNS": "80", "TERM": "xterm"}


@pytest.mark.parametrize("group", [[], ["stack"], ["history"]], ids=["cfnrun", "stack", "history"])
def test_every_command_summary_fits_at_80_columns(group: list) -> None:
    run = cfnrun(*group, "--help", env=NARROW)
    assert run.returncode == 0, run.stderr
    commands = run.stdout.split("Commands:")[1]
    assert "..." not in commands and "…" not in commands, commands
    assert max(len(line) for line in run.stdout.splitlines()) <= 80


@pytest.mark.parametrize("command", [["stack", "test"], ["fuzz"], ["test"]], ids=" ".join)
def test_help_names_no_option_the_command_lacks(command: list) -> None:
    run = cfnrun(*command, "--help", env=NARROW)
    assert run.returncode == 0, run.stderr
    assert "--profile" not in run.stdout, run.stdout


def test_serve_help_tells_of_local_stacks_and_their_clock() -> None:
    run = cfnrun("serve", "--help", env=NARROW)
    text = " ".join(run.stdout.split())  # as read, whatever the wrapping
    assert "CloudFormation API" in text and "local stacks" in text
    clock = text[text.index("--virtual-clock"):]
    assert "local stacks skip CallbackDelaySeconds waits" in clock[:200], clock[:200]
