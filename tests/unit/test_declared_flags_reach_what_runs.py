"""Every flag a command declares reaches what the command runs (#30 item 11).

For each command that turns its options into run-time shapes (ServeSettings, RuntimeSettings,
ContractSettings, StackTestPlan), each declared option is set to a value other than its default and
the shapes are built as the command builds them: they must differ from the shapes of the defaults.
A new flag that nothing reads fails here, unless it is listed below with what reads it instead.
"""
import dataclasses
import enum
import typing
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest

from cfnrun.app.commands.contract_test import contract_settings
from cfnrun.app.commands.serve import serve_settings
from cfnrun.app.commands.stack_test import stack_test_settings
from cfnrun.app.options import Option, declared
from cfnrun.app.settings.serve import ContractTestOptions, ServeOptions
from cfnrun.app.settings.stack import StackTestSettings

REGION = "eu-west-3"
Build = Callable[[Any], Any]

# Options the command reads itself rather than through the shapes, and what reads them.
SOURCES = {"project_path", "project", "providers", "hooks", "functions"}  # served_sources / load_project: what is served
READ_BY_THE_COMMAND: Dict[type, set] = {
    ServeOptions: SOURCES | {"region", "profile"},  # the region, resolved in run() (local_region(profile)), is passed in
    ContractTestOptions: {"project_path", "project", "region"},  # the project is loaded; the region as serve's
    StackTestSettings: (SOURCES - {"project_path"}) | {"json_output"},  # json_output picks the renderer
}
COMMANDS: Dict[type, Tuple[Any, Build]] = {
    ServeOptions: (ServeOptions(), lambda options: serve_settings(options, REGION)),
    ContractTestOptions: (ContractTestOptions(), lambda options: contract_settings(options, REGION)),
    StackTestSettings: (StackTestSettings(template=Path("stack.yaml")), lambda options: stack_test_settings(options, "body")),
}
SAMPLE_WORDS = ("ssm:PutParameter=ThrottlingException", "Key=value")  # a fault rule; a NAME=VALUE pair


def _other_value(name: str, declared_option: Option, field_type: Any, default: Any) -> Any:
    """A value of ``field_type`` that is not ``default``, converted as the command line would."""
    if declared_option.to_setting is not None and typing.get_origin(declared_option.cli_type) in (list, List):
        for word in SAMPLE_WORDS:
            cli_value = [Path(word)] if typing.get_args(declared_option.cli_type)[0] is Path else [word]
            try:
                return declared_option.to_setting(cli_value)
            except Exception:  # noqa: BLE001 - not this option's shape of value: try the next
                continue
        raise AssertionError(f"no sample value converts for {name}: add one to SAMPLE_WORDS")
    base = [each for each in typing.get_args(field_type) if each is not type(None)] or [field_type]
    kind = base[0]
    if kind is bool:
        return not default
    if kind is int:
        return (default or 0) + 7
    if kind is float:
        return (default or 1.0) * 3 + 1
    if kind is Path:
        return Path("/elsewhere") / name
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return next(member for member in kind if member != default)
    if name == "log_level":
        return "DEBUG"
    return f"http://127.0.0.1:9/{name}"


def _cases() -> List[Any]:
    cases = []
    for cls in COMMANDS:
        for name, _, _ in declared(cls):
            if name not in READ_BY_THE_COMMAND[cls]:
                cases.append(pytest.param(cls, name, id=f"{cls.__name__}.{name}"))
    return cases


@pytest.mark.parametrize("cls, name", _cases())
def test_a_declared_flag_set_to_another_value_changes_what_runs(cls: type, name: str) -> None:
    defaults, build = COMMANDS[cls]
    field = next(each for each in dataclasses.fields(cls) if each.name == name)
    declared_option = next(option for each, option, _ in declared(cls) if each == name)
    value = _other_value(name, declared_option, field.type, getattr(defaults, name))
    assert value != getattr(defaults, name)
    changed = dataclasses.replace(defaults, **{name: value})
    assert build(changed) != build(defaults), f"{declared_option.names or name} parses but nothing that runs sees it"


@pytest.mark.parametrize("cls", list(COMMANDS), ids=lambda cls: cls.__name__)
def test_what_the_command_reads_itself_is_declared(cls: type) -> None:
    """The list above names only options the command has (a renamed one would hide a forgotten one)."""
    names = {name for name, _, _ in declared(cls)}
    assert READ_BY_THE_COMMAND[cls] <= names, READ_BY_THE_COMMAND[cls] - names


def test_cfnrun_test_virtual_clock_reaches_the_serve_that_creates_its_stacks() -> None:
    """``cfnrun test --virtual-clock --stack T``: T is created on the suite's serve, under the same clock."""
    settings = contract_settings(dataclasses.replace(ContractTestOptions(), virtual_clock=True), REGION)
    assert settings.virtual_clock and settings.serve.virtual_clock
