"""``cfnrun serve``: check what can be checked before listening, then serve until Ctrl-C or SIGTERM."""
from __future__ import annotations

from cfnrun.app.commands.common import EXIT_INTERRUPTED, EXIT_SUCCESS, echo, project_dir, usage_error
from cfnrun.app.early_start import EarlyStart
from cfnrun.app.preflight import interpreter_version, require_debugpy, runtime_mismatch
from cfnrun.app import serve
from cfnrun.app.settings.serve import ServeOptions
from cfnrun.invoker.region import local_region
from cfnrun.model.errors import CfnrunError
from cfnrun.model.project import load_project
from cfnrun.ui.console import Console


def serve_settings(options: ServeOptions, region: str) -> serve.ServeSettings:
    """What the server runs with, from serve's options, in ``region``."""
    return serve.ServeSettings(
        host=options.host,
        port=options.port,
        runtime=options.runtime(region),
        budgets=options.budgets,
        sts_standin=options.sts_standin,
        reload=options.reload,
        debugging=options.debug_port is not None,
        contract=options.contract,
        shutdown_timeout_s=options.shutdown_grace,
        connections=options.connections,
        virtual_clock=options.virtual_clock,
        moto=options.moto,
    )


def run(options: ServeOptions, early: EarlyStart) -> int:
    console = Console()
    try:
        # The schema is checked once serve listens (load_late_parts).
        loaded = load_project(project_dir(options.project_path, options.project), usable_schema=False)
        mismatch = runtime_mismatch(loaded, interpreter_version(options.python))
        if options.debug_port is not None:
            require_debugpy(options.python)
        region = options.region or local_region(options.profile)
    except CfnrunError as error:
        return usage_error(str(error))
    if mismatch:
        console.warn(mismatch)
    try:
        # Then kills an early worker serve did not adopt.
        early.run(serve.serve_forever(loaded, serve_settings(options, region), console, early=early))
    except CfnrunError as error:
        return usage_error(str(error))
    except KeyboardInterrupt:  # a second Ctrl-C while serve was still starting
        echo("cfnrun: interrupted while starting; workers stopped", err=True)
        return EXIT_INTERRUPTED
    return EXIT_SUCCESS
