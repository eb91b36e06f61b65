"""``cfnrun test``: cloudformation-cli's contract suite against an embedded cfnrun endpoint; exits with pytest's status."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from cfnrun.app.commands.common import echo, project_dir, usage_error
from cfnrun.app.early_start import EarlyStart
from cfnrun.app.options import derived
from cfnrun.app.preflight import interpreter_version, runtime_mismatch
from cfnrun.app.serve_settings import ServeSettings
from cfnrun.app.settings.serve import ContractTestOptions
from cfnrun.app.suite_process import SuiteProcess, require_cloudformation_cli, suite_environment
from cfnrun.invoker.region import local_region
from cfnrun.model.errors import CfnrunError
from cfnrun.model.project import load_project

if TYPE_CHECKING:
    from cfnrun.app.contract_suite import ContractSettings


def run(options: ContractTestOptions, early: EarlyStart) -> int:
    if options.project_path is not None and options.project_path.startswith("-"):
        # `cfnrun test -- -k NAME`: what follows -- belongs to pytest, even in the project's place.
        options = replace(options, project_path=None, pytest_args=[options.project_path, *options.pytest_args])
    try:
        loaded = load_project(project_dir(Path(options.project_path) if options.project_path else None, options.project))
        mismatch = runtime_mismatch(loaded, interpreter_version(options.python))
        if mismatch:
            echo(f"cfnrun: note: {mismatch}", err=True)
        region = options.region or local_region()
        require_cloudformation_cli()
        suite = SuiteProcess.start(loaded.root, suite_environment(region, options.use_aws))  # cfn loads while serve does
    except CfnrunError as error:
        return usage_error(str(error))
    try:
        import asyncio  # imported once the suite has started: ~40 ms not on the path to it

        from cfnrun.app.contract_suite import run_contract_tests  # serve and the suite's driver

        return asyncio.run(run_contract_tests(loaded, contract_settings(options, region), suite))
    except CfnrunError as error:
        return usage_error(str(error))
    finally:
        suite.close()  # unless it ran: it exits without running anything
        suite.process.wait()


def contract_settings(options: ContractTestOptions, region: str) -> "ContractSettings":
    """What the suite and its serve run with, in ``region``: each field from the option (or property) of its name."""
    from cfnrun.app.contract_suite import ContractSettings

    serve = derived(ServeSettings, options, runtime=options.runtime(region))
    return derived(ContractSettings, options, serve=serve, stacks=tuple(path.resolve() for path in options.stacks))
