"""The ``cfnrun`` command line: it parses the options and hands the settings to the command.

Each command's options are declared once, as its settings (``app/settings/``); the typer
commands here are built from those declarations (``_command``). A command hands its settings
(and the early start's result, ``app/early_start.py``) to the ``run`` of its module in
``app/commands/``, imported only when the command runs: at module level only typer and the light
declarations load, so ``--help``, ``--version``, ``validate`` and ``invoke`` never load the server
(aiohttp), the file watcher or cloudformation-cli (tests/test_fast_start.py holds this).
"""
from __future__ import annotations

import functools
import importlib
import inspect
from typing import Any, Callable, Dict, Optional

import typer

from cfnrun import __version__
from cfnrun.app.early_start import EarlyStart
from cfnrun.app.options import Option, declared, from_command_line
from cfnrun.app.settings.fuzz import FuzzSettings
from cfnrun.app.settings.history import HistoryOptions, HistoryShowOptions, ReplayOptions
from cfnrun.app.settings.invoke import InvokeSettings
from cfnrun.app.settings.registry import RegistryListOptions, RegistryRemoveOptions
from cfnrun.app.settings.serve import ContractTestOptions, ServeOptions
from cfnrun.app.settings.stack import StackTestSettings
from cfnrun.app.settings.validate import ValidateOptions
from cfnrun.model.errors import CfnrunError

# rich_markup_mode=None: click's own help layout, which wraps to the terminal's width (rich's tables cut words at 80 columns)
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Run and check CloudFormation resource type handlers written in Python, locally, without Docker.",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cfnrun {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    pass


def _command(
    declaration: type, module: str, help: str, function: str = "run", extra_args: Optional[str] = None
) -> Callable[..., None]:
    """A typer command taking ``declaration``'s options, which runs ``module``'s ``function`` with the settings.

    ``extra_args``: the settings field that takes what typer leaves unparsed (``cfnrun test -- ...``).
    An option the command leaves unset takes its group's value (``cfnrun history -p DIR show ID``).
    """

    def command(ctx: typer.Context, **values: Any) -> None:
        if ctx.invoked_subcommand is not None:
            return  # a group's options, for its command
        if ctx.parent is not None:
            values.update({name: value for name, value in ctx.parent.params.items() if name in values and values[name] is None})
        given: Dict[str, Any] = {extra_args: list(ctx.args)} if extra_args else {}
        try:
            settings: Any = from_command_line(declaration, values, **given)
        except CfnrunError as error:
            from cfnrun.app.commands.common import usage_error

            raise typer.Exit(usage_error(str(error), json_output=bool(values.get("json_output")))) from None
        run = getattr(importlib.import_module(module), function)
        raise typer.Exit(run(settings, ctx.find_object(EarlyStart) or EarlyStart.without_worker()))

    parameters = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)]
    parameters += [_parameter(name, declared_option, cli_type) for name, declared_option, cli_type in declared(declaration)]
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    command.__doc__ = help
    return command


def _parameter(name: str, declared_option: Option, cli_type: Any) -> inspect.Parameter:
    """One option as typer declares it: the default of a parameter of the command's signature."""
    check = _bad_parameter(declared_option.check) if declared_option.check is not None else None
    if declared_option.is_argument:
        info = typer.Argument(
            declared_option.cli_default, help=declared_option.help, metavar=declared_option.metavar, parser=check,
            show_default=declared_option.show_default,
        )
    else:
        info = typer.Option(
            declared_option.cli_default, *declared_option.names, help=declared_option.help, metavar=declared_option.metavar,
            case_sensitive=declared_option.case_sensitive, callback=check, show_default=declared_option.show_default,
            **_number_range(declared_option, cli_type),
        )
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=cli_type)


def _number_range(declared_option: Option, cli_type: Any) -> Dict[str, Any]:
    """A bounded number parsed here, so its errors read plainly ("'abc' is not a number", not "... a valid float range")."""
    low, high = declared_option.minimum, declared_option.maximum
    if low is None and high is None:
        return {}
    whole = cli_type is int or cli_type == Optional[int]

    def number(value: Any) -> Any:
        if value is None or not isinstance(value, str):
            return value  # the default
        try:
            parsed = int(value) if whole else float(value)
        except ValueError:
            raise typer.BadParameter(f"{value!r} is not a {'whole number' if whole else 'number'}") from None
        if (low is not None and parsed < low) or (high is not None and parsed > high):
            bounds = " and ".join(part for part in (f"at least {low:g}" if low is not None else "", f"at most {high:g}" if high is not None else "") if part)
            raise typer.BadParameter(f"{value} is out of range: it must be {bounds}")
        return parsed

    number.__name__ = "integer" if whole else "number"  # the type --help shows
    return {"parser": number}


def _bad_parameter(check: Callable[[str], Any]) -> Callable[[str], Any]:
    """``check`` as typer runs it: its ValueError is an invalid value; an option not given is not checked.
    Named as ``check`` is (an argument's type in --help)."""

    @functools.wraps(check)
    def checked(value: Optional[str]) -> Any:
        if value is None:
            return None
        try:
            return check(value)
        except ValueError as error:
            raise typer.BadParameter(str(error)) from None

    return checked


app.command("invoke", short_help="Run one operation as CloudFormation would.")(_command(InvokeSettings, "cfnrun.app.commands.invoke", (
    "Run one operation as CloudFormation would, replaying IN_PROGRESS until it ends.\n\n"
    "Exit status: 0 SUCCESS, 1 FAILED (or stopped early), 2 usage or project error."
)))
app.command("serve", short_help="Serve the Lambda, Cloud Control and CloudFormation APIs.")(_command(ServeOptions, "cfnrun.app.commands.serve", (
    "Serve the project's functions on the AWS Lambda Invoke API, from warm workers; its type\n"
    "on the Cloud Control API; and local stacks on the CloudFormation API (templates using\n"
    "your types, AWS::* resources with --moto, change sets, drift), all at one address.\n\n"
    "Point cfn test, cfn invoke, boto3 or the aws CLI at http://127.0.0.1:3001."
)))
app.command("test", short_help="Run cfn test's contract suite against a local endpoint.", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(_command(
    ContractTestOptions, "cfnrun.app.commands.contract_test", (
        "Run the official contract suite (cfn test) against an embedded cfnrun endpoint.\n\n"
        "Arguments after -- go to pytest, as with cfn test: cfnrun test -- -k contract_create_read"
    ), extra_args="pytest_args",
))
app.command("validate", short_help="Check the resource schema: draft-07 and the schema rules.")(_command(ValidateOptions, "cfnrun.app.commands.validate", (
    "Check the resource schema: valid draft-07, and the resource schema rules.\n\n"
    "Exit status: 0 no errors (warnings may be printed), 1 errors found, 2 the schema cannot be read."
)))
app.command("fuzz", short_help="Run generated operation sequences; shrink what fails.")(_command(FuzzSettings, "cfnrun.app.commands.fuzz", (
    "Run generated sequences of CREATE, READ, UPDATE, LIST and DELETE with models generated from\n"
    "the schema, checking the contract, read-after-write and LIST; a failure is shrunk to its\n"
    "smallest case, printed as requests and recorded for cfnrun replay.\n\n"
    "Exit status: 0 no failure, 1 a failure, 2 usage or project error."
)))

history_app = typer.Typer(rich_markup_mode=None, help="Operations cfnrun invoke and cfnrun serve recorded in the project's .cfnrun/history.sqlite3.")
app.add_typer(history_app, name="history", short_help="List the operations recorded in .cfnrun/history.sqlite3.")
history_app.callback(invoke_without_command=True)(_command(HistoryOptions, "cfnrun.app.commands.history", (
    "List recorded operations, newest first. Recording is on unless CFNRUN_HISTORY=off;\n"
    "the oldest are pruned beyond 500 (CFNRUN_HISTORY_LIMIT)."
)))
history_app.command("show")(_command(
    HistoryShowOptions, "cfnrun.app.commands.history", "Print a recorded operation as the timeline cfnrun invoke shows.", "show"
))

app.command("replay", short_help="Run a recorded operation again; report what changed.")(_command(ReplayOptions, "cfnrun.app.commands.replay", (
    "Run a recorded operation again against the current code, with the same request and flags,\n"
    "and report what changed: status, error code, returned model(s), contract violations.\n\n"
    "Exit status: 0 same outcome as recorded, 1 it differs, 2 usage or project error."
)))

registry_app = typer.Typer(rich_markup_mode=None, no_args_is_help=True, help="The extensions a cfnrun serve has registered (RegisterType).")
app.add_typer(registry_app, name="registry", short_help="List or remove what a serve has registered.")
registry_app.command("list", short_help="Registered types, their versions, default and tests.")(_command(
    RegistryListOptions, "cfnrun.app.commands.registry", "List each type registered on a serve, with its versions, the default and the test status."
))
registry_app.command("remove", short_help="Deregister a type's versions, then the type.")(_command(
    RegistryRemoveOptions, "cfnrun.app.commands.registry", "Deregister one version (--version-id), or every version of a type: the others, then the type with its default.", "remove"
))

stack_app = typer.Typer(rich_markup_mode=None, no_args_is_help=True, help="Local stacks: a template's whole life on the serve cfnrun starts.")
app.add_typer(stack_app, name="stack", short_help="Local stacks: a template's whole life, for CI.")
stack_app.command("test", short_help="Create, update and delete a stack; check that each step held.")(_command(StackTestSettings, "cfnrun.app.commands.stack_test", (
    "Create the stack, apply each --update in turn, delete it (unless --keep), and check that every step\n"
    "completed, the handlers kept the contract and nothing is left: READ answers NotFound for each deleted\n"
    "resource of your types, and each AWS::* resource is gone from the AWS endpoint.\n\n"
    "Exit status: 0 all held, 1 a step failed or rolled back, a violation failed the run (--contract strict)\n"
    "or something was left, 2 usage error (the template, a KEY=VALUE, an unknown parameter), 130 interrupted."
)))


def main(early: Optional[EarlyStart] = None) -> None:
    """Run the command line; ``early``: what the early start began (``cfnrun/__main__.py``)."""
    app(obj=early)


if __name__ == "__main__":
    main()
