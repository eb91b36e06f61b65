"""``cfnrun test``: cloudformation-cli's contract suite against an embedded cfnrun endpoint; exits with pytest's status."""
from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from cfnrun.app.commands.common import echo, project_dir, usage_error
from cfnrun.app.contract_suite import ContractSettings, run_contract_tests
from cfnrun.app.early_start import EarlyStart
from cfnrun.app.options import derived
from cfnrun.app.preflight import interpreter_version, runtime_mismatch
from cfnrun.app.serve_settings import ServeSettings
from cfnrun.app.settings.serve import ContractTestOptions
from cfnrun.invoker.region import local_region
from cfnrun.model.errors import CfnrunError
from cfnrun.model.project import load_project


def run(options: ContractTestOptions, early: EarlyStart) -> int:
    if options.project_path is not None and options.project_path.startswith("-"):
        # `cfnrun test -- -k NAME`: what follows -- belongs to pytest, even in the project's place.
        options = replace(options, project_path=None, pytest_args=[options.project_path, *options.pytest_args])
    try:
        loaded = load_project(project_dir(Path(options.project_path) if options.project_path else None, options.project))
        mismatch = runtime_mismatch(loaded, interpreter_version(options.python))
        if mismatch:
            echo(f"cfnrun: note: {mismatch}", err=True)
        settings = contract_settings(options, options.region or local_region())
        return asyncio.run(run_contract_tests(loaded, settings))
    except CfnrunError as error:
        return usage_error(str(error))


def contract_settings(options: ContractTestOptions, region: str) -> ContractSettings:
    """What the suite and its serve run with, in ``region``: each field from the option (or property) of its name."""
    serve = derived(ServeSettings, options, runtime=options.runtime(region))
    return derived(ContractSettings, options, serve=serve, stacks=tuple(path.resolve() for path in options.stacks))
