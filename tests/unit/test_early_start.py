"""How ``app/early_start.py`` reads an invoke or serve command line before the command line library loads."""
from __future__ import annotations

import pytest

from cfnrun.app.early_start import COMMANDS, SERVE, read_arguments


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_is_known_with_its_kind(name: str) -> None:
    import typer.main

    from cfnrun.cli import app

    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    values, flags = set(), set()
    for parameter in command.params:
        if parameter.param_type_name != "option":
            continue
        names = set(parameter.opts) | set(parameter.secondary_opts)
        (flags if parameter.is_flag else values).update(names)
    known = COMMANDS[name]
    assert values == known.values
    assert flags == known.flags - {"--help"}
    assert known.not_early <= known.values | known.flags


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


def test_reading_a_serve_command_line() -> None:
    assert read_arguments(["dir", "--port", "0", "--no-reload"], SERVE) == (["dir"], {"--port": ["0"], "--no-reload": [""]})
    assert read_arguments(["--sts-standin", "-pdir"], SERVE) == ([], {"--sts-standin": [""], "-p": ["dir"]})
    assert read_arguments(["--json"], SERVE) is None  # an invoke option
