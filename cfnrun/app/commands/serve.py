"""``cfnrun serve``: check what can be checked before listening, then serve until Ctrl-C or SIGTERM."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Protocol, Tuple

from cfnrun.app.commands.common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_SUCCESS, echo, project_dir, usage_error
from cfnrun.app.early_start import EarlyStart
from cfnrun.app.options import derived
from cfnrun.app.preflight import interpreter_version, require_debugpy, runtime_mismatch
from cfnrun.app import serve
from cfnrun.app.served import check_unique
from cfnrun.app.stop_steps import StopIncomplete
from cfnrun.app.settings.serve import ServeOptions
from cfnrun.invoker.region import local_region
from cfnrun.model.errors import CfnrunError
from cfnrun.model.function_template import load_function_template
from cfnrun.model.module_fragment import ModuleFragment, is_module_project, read_module_fragment
from cfnrun.model.project import Project, find_project_root, load_project
from cfnrun.ui.console import Console


def serve_settings(options: ServeOptions, region: str) -> serve.ServeSettings:
    """What the server runs with, from serve's options, in ``region``: each field from the option (or property) of its name."""
    return derived(serve.ServeSettings, options, runtime=options.runtime(region))


class SourceOptions(Protocol):
    """What names the sources to serve: ``cfnrun serve``'s options, and ``cfnrun stack test``'s."""

    @property
    def project_path(self) -> Optional[Path]: ...
    @property
    def project(self) -> Optional[Path]: ...
    @property
    def providers(self) -> Tuple[Path, ...]: ...
    @property
    def hooks(self) -> Tuple[Path, ...]: ...
    @property
    def functions(self) -> Tuple[Path, ...]: ...


def served_sources(options: SourceOptions) -> serve.Sources:
    """The projects and templates to serve: the current project (named, or found at or above the current folder)
    when there is one, then each ``--provider``, then each ``--functions`` template. CfnrunError for one that does not load.

    Without ``--provider`` or ``--functions`` the current project is required, as it always was.
    """
    # Each schema is checked once serve listens (load_late_parts).
    current = _current_project(options)
    providers: List[Project] = [current] if current is not None else []
    hooks: List[str] = []
    modules: List[ModuleFragment] = []
    for flag, folder in [("--provider", f) for f in options.providers] + [("--hook", f) for f in options.hooks]:
        if not folder.is_dir():
            raise CfnrunError(f"{flag} {folder}: not a folder (a project made by 'cfn init' holds .rpdk-config)")
        if flag == "--provider" and is_module_project(folder):
            modules.append(read_module_fragment(folder))  # expanded in templates, not run: no worker
            continue
        project = load_project(folder, usable_schema=False)
        if flag == "--hook":
            if not project.is_hook:
                raise CfnrunError(f"--hook {folder}: {project.type_name} is a resource type, not a hook (serve it with --provider)")
            hooks.append(project.type_name)
        if all(project.root != other.root for other in providers):
            providers.append(project)
    templates = [load_function_template(path) for path in options.functions]
    check_unique(providers, templates)
    return serve.Sources(tuple(providers), tuple(templates), tuple(hooks), tuple(modules))


def _current_project(options: SourceOptions) -> Optional[Project]:
    named = options.project_path or options.project
    if named is None and (options.providers or options.hooks or options.functions) and find_project_root(Path.cwd()) is None:
        return None  # serve --provider DIR (or --hook DIR) ... outside any project
    return load_project(project_dir(options.project_path, options.project), usable_schema=False)


def run(options: ServeOptions, early: EarlyStart) -> int:
    console = Console()
    try:
        sources = served_sources(options)
        version = interpreter_version(options.python)
        mismatches = [note for note in (runtime_mismatch(project, version) for project in sources.providers) if note]
        if options.debug_port is not None:
            require_debugpy(options.python)
        region = options.region or local_region(options.profile)
    except CfnrunError as error:
        return usage_error(str(error))
    for mismatch in mismatches:
        console.warn(mismatch)
    try:
        # Then kills an early worker serve did not adopt.
        early.run(serve.serve_forever(sources, serve_settings(options, region), console, early=early))
    except CfnrunError as error:
        return usage_error(str(error))
    except StopIncomplete as error:
        echo(f"cfnrun: error: {error}", err=True)
        return EXIT_FAILED
    except KeyboardInterrupt:  # a second Ctrl-C while serve was still starting
        echo("cfnrun: interrupted while starting; workers stopped", err=True)
        return EXIT_INTERRUPTED
    return EXIT_SUCCESS
