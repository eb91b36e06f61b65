"""How ``app/early_start.py`` reads an invoke command line before the command line library loads."""
from __future__ import annotations

import pytest

from cfnrun.app.early_start import FLAG_OPTIONS, NOT_EARLY, VALUE_OPTIONS, read_arguments


def test_every_invoke_option_is_known_with_its_kind() -> None:
    import typer.main

    from cfnrun.cli import app

    command = typer.main.get_command(app).commands["invoke"]  # type: ignore[attr-defined]
    values, flags = set(), set()
    for parameter in command.params:
        if parameter.param_type_name != "option":
            continue
        names = set(parameter.opts) | set(parameter.secondary_opts)
        (flags if parameter.is_flag else values).update(names)
    assert values == VALUE_OPTIONS
    assert flags == FLAG_OPTIONS - {"--help"}
    assert NOT_EARLY <= VALUE_OPTIONS | FLAG_OPTIONS


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["LIST"], (["LIST"], {})),
        (["CREATE", "in.json", "--json", "-p", "dir"], (["CREATE", "in.json"], {"--json": [""], "-p": ["dir"]})),
        (["CREATE", "-pdir", "--region=eu-west-1"], (["CREATE"], {"-p": ["dir"], "--region": ["eu-west-1"]})),
        (["CREATE", "-", "--inject", "a", "--inject", "b"], (["CREATE", "-"], {"--inject": ["a", "b"]})),
        (["LIST", "--no-such-option"], None),
        (["LIST", "--region"], None),  # a value missing: the command line library says so
        (["LIST", "--", "--json"], None),
        (["LIST", "--json=yes"], None),
    ],
)
def test_reading_the_arguments(argv: list, expected: object) -> None:
    assert read_arguments(argv) == expected
