"""The options' one declaration (``app/settings/``) and what is derived from it: the early start's reading of a
command line, typer's, history's record of an invoke run and replay's reverse of it."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Dict, List, Type

import pytest

from cfnrun.app.options import declared, from_record, overrides, read_command_line, read_exactly, to_record
from cfnrun.app.settings.history import ReplayOptions
from cfnrun.app.settings.fuzz import FuzzSettings
from cfnrun.app.settings.invoke import InvokeSettings
from cfnrun.app.settings.serve import ServeOptions
from cfnrun.contract.mode import ContractMode
from cfnrun.invoker.choices import Entrypoint
from cfnrun.model.action import Action
from cfnrun.model.faults import parse_faults


def typer_settings(command: str, declaration: Type[Any], argv: List[str]) -> Any:
    """What the real command line builds from ``cfnrun COMMAND ARGV``: the settings it hands to the command."""
    import cfnrun.cli as cli

    built: List[Any] = []
    module = f"cfnrun.app.commands.{command}"
    runs = __import__(module, fromlist=["run"])
    original = runs.run
    try:
        runs.run = lambda settings, early: built.append(settings) or 0
        cli.app([command, *argv], standalone_mode=False)
    finally:
        runs.run = original
    assert len(built) == 1 and isinstance(built[0], declaration)
    return built[0]


INVOKE_LINES = [
    ["LIST"],
    ["CREATE", "in.json", "--json", "-p", "dir"],
    ["create", "-pdir", "--region=eu-west-1", "--entrypoint", "TEST", "--contract", "Strict"],
    ["preCreate", "-", "--inject", "ssm:PutParameter=ThrottlingException", "--inject", "s3:*=+2s@2"],
    ["READ", "--no-credentials", "--no-retry", "--memory-limit", "off", "--log-level", "debug", "--account-id", "111122223333"],
    ["UPDATE", "--time-scale", "0.5", "--invocation-timeout", "3", "--operation-timeout", "9.5", "--max-reinvoke", "4"],
    ["DELETE", "--keep-polling", "--virtual-clock", "--string-primitives", "--typeconfig", "t.json", "--profile", "dev"],
    ["LIST", "--function", "TestEntrypoint", "--python", "/usr/bin/python3", "--aws-endpoint", "http://127.0.0.1:5000"],
]
SERVE_LINES = [
    [],
    ["dir", "--port", "0", "--no-reload", "--sts-standin", "--contract", "off"],
    ["-pdir", "--workers", "2", "--host", "0.0.0.0", "--region", "eu-west-1", "--profile", "dev", "--debug-wait"],
    ["--shutdown-grace", "0", "--header-timeout", "1.5", "--body-timeout", "2", "--max-connections", "3", "--virtual-clock"],
    ["--inject", "ssm:*=ThrottlingException%50", "--time-scale", "2", "--invocation-timeout", "1", "--memory-limit", "off"],
]


@pytest.mark.parametrize("argv", INVOKE_LINES)
def test_the_early_reading_of_invoke_is_what_the_command_line_builds(argv: List[str]) -> None:
    assert read_command_line(InvokeSettings, argv) == typer_settings("invoke", InvokeSettings, argv)


@pytest.mark.parametrize("argv", INVOKE_LINES)
def test_invoke_read_exactly_is_what_the_command_line_builds(argv: List[str]) -> None:
    # what `cfnrun invoke` runs with when it does not load the command line library (app/direct_start.py)
    assert read_exactly(InvokeSettings, argv) == typer_settings("invoke", InvokeSettings, argv)


def test_invoke_lines_read_exactly_only_by_the_command_line_library() -> None:
    assert typer_settings("invoke", InvokeSettings, ["LIST", "-p=dir"]).project_dir == Path("=dir")  # the library's reading
    assert read_command_line(InvokeSettings, ["LIST", "-p=dir"]) is not None  # the early start's guess differs; good enough for a guess
    assert read_exactly(InvokeSettings, ["LIST", "-p=dir"]) is None
    for out_of_range in (["--max-reinvoke", "-1"], ["--invocation-timeout", "0"], ["--time-scale=0"]):
        assert read_command_line(InvokeSettings, ["LIST", *out_of_range]) is not None
        assert read_exactly(InvokeSettings, ["LIST", *out_of_range]) is None  # the library refuses it, in its words


@pytest.mark.parametrize("argv", SERVE_LINES)
def test_the_early_reading_of_serve_is_what_the_command_line_builds(argv: List[str]) -> None:
    assert read_command_line(ServeOptions, argv) == typer_settings("serve", ServeOptions, argv)


@pytest.mark.parametrize("argv", SERVE_LINES)
def test_serve_read_exactly_is_what_the_command_line_builds(argv: List[str]) -> None:
    # what `cfnrun serve` runs with when it does not load the command line library (app/direct_start.py)
    assert read_exactly(ServeOptions, argv) == typer_settings("serve", ServeOptions, argv)


FUZZ_LINES = [
    [],
    ["dir", "--max-examples", "300", "--seed", "1", "--json"],
    ["-pdir", "--actions", "create,read", "--set", "Name=fixed", "--set", 'Size={"a": 1}', "--max-steps", "4"],
    ["--contract", "warn", "--real-clock", "--shrink-time", "2.5", "--shrink-examples", "0", "--inject", "ssm:*=ThrottlingException%50"],
]


@pytest.mark.parametrize("argv", FUZZ_LINES)
def test_fuzz_read_exactly_is_what_the_command_line_builds(argv: List[str]) -> None:
    # what `cfnrun fuzz` runs with when it does not load the command line library (app/direct_start.py)
    assert read_exactly(FuzzSettings, argv) == typer_settings("fuzz", FuzzSettings, argv)


def test_fuzz_lines_read_exactly_only_by_the_command_line_library() -> None:
    for refused in (["--max-examples", "0"], ["--actions", "READ"], ["--set", "novalue"], ["-p=dir"], ["--help"]):
        assert read_exactly(FuzzSettings, refused) is None  # the library refuses it, or answers it, in its words


def test_serve_lines_read_exactly_only_by_the_command_line_library() -> None:
    for out_of_range in (["--workers", "0"], ["--port", "65536"], ["--shutdown-grace=-1"], ["--header-timeout", "0"]):
        assert read_command_line(ServeOptions, out_of_range) is not None
        assert read_exactly(ServeOptions, out_of_range) is None  # the library refuses it, in its words
    assert read_exactly(ServeOptions, ["-p=dir"]) is None
    assert read_exactly(ServeOptions, ["--debug-port", "5999"]) is None  # early=False: the library runs it


@pytest.mark.parametrize(
    "argv",
    [
        ["LIST", "--no-such-option"],
        ["LIST", "--region"],  # a value missing: the command line library says so
        ["LIST", "--", "--json"],
        ["LIST", "--json=yes"],
        ["LIST", "--help"],
        ["NOT-AN-ACTION"],
        [],
        ["LIST", "a.json", "b.json"],
        ["LIST", "--memory-limit", "maybe"],
        ["LIST", "--inject", "not a rule"],
        # Options declared early=False: the command runs no local worker, or not one worker once.
        ["LIST", "--in-process"],
        ["LIST", "--watch"],
        ["LIST", "--print-request"],
        ["LIST", "--moto"],
        ["LIST", "--lambda-endpoint", "http://127.0.0.1:3001"],
        ["LIST", "--handler", "m.f", "--schema", "s.json"],
    ],
)
def test_what_the_early_start_does_not_read(argv: List[str]) -> None:
    assert read_command_line(InvokeSettings, argv) is None
    assert read_exactly(InvokeSettings, argv) is None


def test_serve_lines_the_early_start_does_not_read() -> None:
    assert read_command_line(ServeOptions, ["--json"]) is None  # an invoke option
    assert read_command_line(ServeOptions, ["--debug-port", "5999"]) is None
    assert read_command_line(ServeOptions, ["a", "b"]) is None


def test_every_option_is_declared_with_distinct_flags() -> None:
    for declaration in (InvokeSettings, ServeOptions, ReplayOptions):
        spelled = [name for _, option, _ in declared(declaration) for names in option.names for name in names.split("/")]
        assert len(spelled) == len(set(spelled)), declaration


def recorded_options() -> Dict[str, Any]:
    """A value other than the default for every option history records."""
    return {
        "action": Action.UPDATE,
        "function": "TestEntrypoint",
        "entrypoint": Entrypoint.TEST,
        "region": "eu-west-1",
        "account_id": "111122223333",
        "credentials": False,
        "max_reinvoke": 3,
        "keep_polling": True,
        "virtual_clock": True,
        "time_scale": 0.5,
        "invocation_timeout": 2.0,
        "operation_timeout": 30.0,
        "log_level": "DEBUG",
        "memory_limit": False,
        "in_process": True,
        "contract": ContractMode.STRICT,
        "string_primitives": True,
        "aws_endpoint": "http://127.0.0.1:5000",
        "moto": True,
        "faults": parse_faults(["ssm:PutParameter=ThrottlingException@2", "s3:*=+1s"]),
        "lambda_endpoint": "http://127.0.0.1:3001",
        "retry": False,
    }


def test_every_recorded_option_round_trips_through_history_and_replay() -> None:
    values = recorded_options()
    recorded_names = {name for name, option, _ in declared(InvokeSettings) if option.record and option.replayed}
    assert recorded_names == set(values)  # a new recorded option gets a value here
    settings = InvokeSettings(**values, request_file="in.json")
    record = to_record(settings)
    assert record["inject"] == ["ssm:PutParameter=ThrottlingException@2", "s3:*=+1s"] and record["requestFile"] == "in.json"
    replayed = from_record(InvokeSettings, record, project_dir=Path("p"))
    assert replayed == dataclasses.replace(settings, request_file=None, project_dir=Path("p"))  # the request itself is replayed


def test_a_record_written_before_the_declaration_still_replays() -> None:
    """The keys and values today's records hold, as the hand-written record of earlier versions wrote them."""
    record = {
        "action": "CREATE", "requestFile": "requests/create.json", "function": "TypeFunction", "entrypoint": "type",
        "region": "us-east-1", "accountId": "123456789012", "credentials": True, "timeScale": 1.0, "invocationTimeout": None,
        "operationTimeout": None, "virtualClock": False, "maxReinvoke": None, "keepPolling": False, "logLevel": "INFO",
        "memoryLimit": True, "inProcess": False, "contract": "warn", "stringPrimitives": False, "retry": True, "moto": False,
        "awsEndpoint": None, "inject": [], "lambdaEndpoint": None, "lambdaFunction": None,
    }
    assert from_record(InvokeSettings, record) == InvokeSettings(
        Action.CREATE, function="TypeFunction", entrypoint=Entrypoint.TYPE, region="us-east-1"
    )
    # serve's records hold fewer keys, and a hook test event no account id.
    serve_record = {"action": "LIST", "function": "F", "accountId": None}
    assert from_record(InvokeSettings, serve_record) == InvokeSettings(Action.LIST, function="F")


def test_replay_overrides_only_what_it_is_given() -> None:
    assert overrides(typer_settings("replay", ReplayOptions, ["3"])) == {}
    argv = ["3", "--real-clock", "--contract", "OFF", "--time-scale", "2", "--log-level", "debug", "--request", "r.json"]
    given = typer_settings("replay", ReplayOptions, argv)
    assert overrides(given) == {"virtual_clock": False, "contract": ContractMode.OFF, "time_scale": 2.0, "log_level": "DEBUG"}
    overridable = {name for name, option, _ in declared(ReplayOptions) if option.overrides}
    assert overridable <= {field.name for field in dataclasses.fields(InvokeSettings)}
