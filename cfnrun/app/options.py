"""A command's options, each declared once, and everything derived from that declaration.

A command's settings are a dataclass; each field that the command line sets is declared with
``option(...)`` (or ``argument(...)``, ``switch(...)``): its flags, help, default, and what else
needs to know about it. From that one declaration come:

- the command line: cli.py builds the typer command from ``declared(cls)``;
- the settings the command gets: ``from_command_line`` (what typer parsed, converted once);
- the early start's reading of ``cfnrun invoke``/``serve`` before the command line library loads:
  ``read_command_line`` (a guess: a wrong one costs a process, never a different run);
- what history records of a run and what ``cfnrun replay`` restores from it: ``to_record``,
  ``from_record`` (``record=`` names the key; records written before keep replaying);
- what ``cfnrun replay`` may override: ``overrides`` (``overrides=True``).

Light on purpose: the early start imports this before anything heavy (no typer, no pydantic).
"""
from __future__ import annotations

import dataclasses
import enum
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Type, TypeVar

from cfnrun.model.errors import CfnrunError

S = TypeVar("S")
_OPTION = "cfnrun.option"  # the key of a declared field's metadata
REQUIRED: Any = ...  # the default of an argument the command line must be given


class Switch(str, enum.Enum):
    """An on|off option (``--memory-limit on``), kept as a bool."""

    ON = "on"
    OFF = "off"


@dataclass(frozen=True)
class Option:
    """One option (or positional argument) of a command: as the user spells it, and as cfnrun keeps it."""

    names: Tuple[str, ...]  # "--region"; "--project", "-p"; "--retry/--no-retry" (a bool with its off form); () for an argument
    help: str
    cli_default: Any  # the default as the command line shows and parses it
    cli_type: Any = None  # what the command line parses, when not the field's own type
    to_setting: Optional[Callable[[Any], Any]] = None  # the parsed value into the field's; a CfnrunError is a usage error
    # Checks a value: ValueError says why it is invalid, the return value replaces it. The command line runs it as
    # typer's callback for an option and as typer's parser for an argument (its name is the argument's type in --help).
    check: Optional[Callable[[str], Any]] = None
    minimum: Optional[float] = None
    maximum: Optional[float] = None
    metavar: Optional[str] = None
    case_sensitive: bool = True
    show_default: bool = True
    record: Optional[str] = None  # its key in history's record of an invoke run; None: not recorded
    to_record: Optional[Callable[[Any], Any]] = None  # the setting as the command line spells it, for the record
    replayed: bool = True  # False: recorded for the reader only; replay does not restore it
    early: bool = True  # False: given on the command line, it keeps the early start from starting a worker
    overrides: bool = False  # replay's: replaces the recorded invoke setting of the same name when given

    @property
    def is_argument(self) -> bool:
        return not self.names


def option(*names: str, help: str, default: Any = None, **details: Any) -> Any:
    """A settings field the command line sets with ``names`` (see ``Option`` for ``details``)."""
    declared = Option(names, help, details.pop("cli_default", default), **details)
    if default is REQUIRED:
        return dataclasses.field(metadata={_OPTION: declared})
    return dataclasses.field(default=default, metadata={_OPTION: declared})


def argument(help: str, default: Any = None, **details: Any) -> Any:
    """A settings field the command line sets from a positional argument."""
    return option(help=help, default=default, **details)


def switch(name: str, help: str, default: bool = True, **details: Any) -> Any:
    """A bool the command line sets as ``NAME on|off``."""
    on_or_off = Switch.ON if default else Switch.OFF
    return option(name, help=help, default=default, cli_type=Switch, cli_default=on_or_off, to_setting=_is_on, **details)


def _is_on(value: Switch) -> bool:
    return value is Switch.ON


_DECLARED: Dict[type, Tuple[Tuple[str, Option, Any], ...]] = {}  # by class: read once (serve records settings per operation)


def declared(cls: type) -> List[Tuple[str, Option, Any]]:
    """``cls``'s options in declaration order: field name, option, and the type the command line parses."""
    found = _DECLARED.get(cls)
    if found is None:
        found = _DECLARED[cls] = tuple(
            (each.name, each.metadata[_OPTION], each.metadata[_OPTION].cli_type or each.type)
            for each in dataclasses.fields(cls)
            if each.metadata.get(_OPTION) is not None
        )
    return list(found)


def from_command_line(cls: Type[S], values: Mapping[str, Any], **given: Any) -> S:
    """The settings from what the command line parsed (``values`` by field name); ``given`` sets the other fields.

    Raises CfnrunError when a value does not convert (an ``--inject`` rule, say): a usage error.
    """
    settings = {name: (declared_option.to_setting(values[name]) if declared_option.to_setting else values[name])
                for name, declared_option, _ in declared(cls)}
    return cls(**settings, **given)


def read_command_line(cls: Type[S], argv: List[str]) -> Optional[S]:
    """``argv`` read into ``cls`` as the command line library would, without loading it.

    None when it is not a command line to read this way: an option ``cls`` does not declare
    (``--help`` too), ``--``, a missing or unconvertible value, an option declared ``early=False``.
    Ranges are not checked: a command line the library refuses ends before the guess matters.
    """
    options = declared(cls)
    spelled: Dict[str, Tuple[str, Option, Any, Optional[bool]]] = {}  # flag -> field, option, type, the bool it sets
    for name, declared_option, cli_type in options:
        for names in declared_option.names:
            on, _, off = names.partition("/")
            is_flag = _base(cli_type) is bool
            spelled[on] = (name, declared_option, cli_type, True if is_flag else None)
            if off:
                spelled[off] = (name, declared_option, cli_type, False)
    values: Dict[str, Any] = {name: declared_option.cli_default for name, declared_option, _ in options}
    positional: List[str] = []
    index = 0
    while index < len(argv):
        word = argv[index]
        index += 1
        if word == "--":
            return None
        if word == "-" or not word.startswith("-"):
            positional.append(word)
            continue
        flag, equals, value = word.partition("=")
        if flag not in spelled and not word.startswith("--") and word[:2] in spelled:
            flag, equals, value = word[:2], "=", word[2:]  # -pDIR
        if flag not in spelled:
            return None
        name, declared_option, cli_type, sets = spelled[flag]
        if not declared_option.early:
            return None
        if sets is not None:
            if equals:
                return None
            values[name] = sets
            continue
        if not equals:
            if index >= len(argv):
                return None
            value = argv[index]
            index += 1
        try:
            parsed = _parse(value, declared_option, cli_type)
        except ValueError:
            return None
        values[name] = [*values[name], parsed] if typing.get_origin(cli_type) in (list, List) else parsed
    arguments = [(name, declared_option, cli_type) for name, declared_option, cli_type in options if declared_option.is_argument]
    if len(positional) > len(arguments):
        return None
    for (name, declared_option, cli_type), word in zip(arguments, positional):
        try:
            values[name] = _parse(word, declared_option, cli_type)
        except ValueError:
            return None
    if any(value is REQUIRED for value in values.values()):
        return None
    try:
        return from_command_line(cls, values)
    except (CfnrunError, ValueError):
        return None


def read_exactly(cls: Type[S], argv: List[str]) -> Optional[S]:
    """``argv`` read into ``cls`` as the command line library reads it, or None: then only the library may read it.

    ``read_command_line``, minus its guesses: no short option followed by ``=`` (the library reads
    ``-p=DIR`` as the folder ``=DIR``), and each bounded number within its bounds (the library refuses
    the others, in its own words). With what this returns, a command runs exactly as the library would
    have run it (tests/unit/test_options.py compares the two).
    """
    if any(word.startswith("-") and not word.startswith("--") and word[2:3] == "=" for word in argv):
        return None
    settings = read_command_line(cls, argv)
    if settings is None:
        return None
    for name, declared_option, _ in declared(cls):
        value = getattr(settings, name)
        if value is None or (declared_option.minimum is None and declared_option.maximum is None):
            continue
        if (declared_option.minimum is not None and value < declared_option.minimum) or (
            declared_option.maximum is not None and value > declared_option.maximum
        ):
            return None
    return settings


def _base(cli_type: Any) -> Any:
    """``X`` of ``Optional[X]`` and ``List[X]``; ``cli_type`` itself otherwise."""
    arguments = [each for each in typing.get_args(cli_type) if each is not type(None)]
    return arguments[0] if arguments and typing.get_origin(cli_type) in (typing.Union, list, List) else cli_type


def _parse(text: str, declared_option: Option, cli_type: Any) -> Any:
    """One value as the command line library converts it; ValueError when it would not."""
    if declared_option.check is not None:
        return declared_option.check(text)
    base = _base(cli_type)
    if isinstance(base, type) and issubclass(base, enum.Enum):
        for member in base:
            if member.value == text or (not declared_option.case_sensitive and str(member.value).casefold() == text.casefold()):
                return member
        raise ValueError(text)
    if base in (int, float, Path):
        return base(text)
    return text


def to_record(settings: Any) -> Dict[str, Any]:
    """History's record of ``settings``: each recorded option under its key, as JSON."""
    record = {}
    for name, declared_option, _ in declared(type(settings)):
        if declared_option.record is not None:
            value = getattr(settings, name)
            if declared_option.to_record is not None:
                value = declared_option.to_record(value)
            record[declared_option.record] = value.value if isinstance(value, enum.Enum) else value
    return record


def from_record(cls: Type[S], record: Mapping[str, Any], **given: Any) -> S:
    """The settings ``record`` was written from; a key it lacks (or holds null or "") takes the option's default.

    ``given`` sets the fields that are not recorded options (the request, the project folder).
    """
    values: Dict[str, Any] = {}
    for each in dataclasses.fields(cls):  # type: ignore[arg-type]  # a settings class is a dataclass
        declared_option = each.metadata.get(_OPTION)
        if declared_option is None or declared_option.record is None or not declared_option.replayed:
            continue
        value = record.get(declared_option.record)
        if value is None or value == "":
            continue
        base = _base(each.type)
        if isinstance(base, type) and issubclass(base, enum.Enum):
            value = base(value)
        elif declared_option.to_record is not None and declared_option.to_setting is not None:
            value = declared_option.to_setting(value)  # recorded as the command line spells it: read as the command line does
        values[each.name] = value
    return cls(**{**values, **given})


def overrides(settings: Any) -> Dict[str, Any]:
    """The settings ``settings`` overrides in another command's (replay's in invoke's): the ``overrides=True`` options given."""
    return {
        name: getattr(settings, name)
        for name, declared_option, _ in declared(type(settings))
        if declared_option.overrides and getattr(settings, name) is not None
    }


def derived(cls: Type[S], settings: Any, **given: Any) -> S:
    """A run-time shape (``RuntimeSettings``, ``ServeSettings``...) from a command's ``settings``, field by field.

    Each field of ``cls`` takes ``given``'s value, else the attribute of ``settings`` of the same name (a declared
    option, or a property the settings derive from them), else its default: an option named as the field it sets
    reaches what runs without being copied by hand (tests/unit/test_declared_flags_reach_what_runs.py holds every
    command to it).
    """
    values = {
        each.name: given[each.name] if each.name in given else getattr(settings, each.name)
        for each in dataclasses.fields(cls)  # type: ignore[arg-type]  # a run-time shape is a dataclass
        if each.name in given or hasattr(settings, each.name)
    }
    return cls(**values)
