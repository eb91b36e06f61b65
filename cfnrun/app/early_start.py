"""The early start: ``cfnrun invoke`` and ``cfnrun serve`` start their first worker before the command line library loads.

A one-shot invoke, and serve's first answer, wait for two imports: cfnrun's own (typer, the
server, the contract checker, ...) and the worker's import of the provider. Done one after
the other they add up; here they overlap. ``cfnrun/__main__.py`` runs ``begin`` first: it reads
the command line into the command's settings from their one declaration (``app/settings/``,
read without typer by ``app/options.py``), which is enough to spawn the worker of the function the
command calls first and tell it to load, with only the light project model and
``runtime/spec.py`` imported (not even the event loop: the command adopts the process into its
loop later). For invoke that is the function the operation calls; for serve, the first function
the template declares (the one serve warms first) of the current project, or of the first
``--provider`` when serve runs outside any project.

A one-shot invoke's worker starts earlier still: ``__main__`` starts its interpreter before
anything else loads (``runtime/waiting_worker.py``), and ``begin`` hands that interpreter the
spec it computed if it fits (the same interpreter, and the variables read as a process starts
the same), or kills it and spawns one as above.

``begin`` returns an ``EarlyStart`` (when the command began, and the worker if one started),
which ``__main__`` hands through the command line to the command. The command adopts the early
worker (``EarlyStart.take``) only if the worker spec it computes is equal to the early one;
otherwise the early worker is killed. So the reading here may guess: a wrong guess costs a
process, never a different run.

Anything unusual starts nothing early: an option declared ``early=False`` (invoke's
``--in-process``, ``--lambda-endpoint``, ``--watch``, ``--print-request``; serve's
``--debug-port``; ``--moto``), ``--help``, an option the command does not declare, an invoke of
a hook project, the request on standard input without ``--region``. Every way out of the
command (usage errors included) goes through ``EarlyStart.run`` or ``EarlyStart.discard``, which
kill a worker that was not adopted and wait until it is gone.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Coroutine, List, Optional, Tuple, TypeVar, Union

if TYPE_CHECKING:
    import asyncio
    import subprocess

    from cfnrun.app.settings.fuzz import FuzzSettings
    from cfnrun.app.settings.invoke import InvokeSettings
    from cfnrun.app.settings.serve import ServeOptions
    from cfnrun.model.project import Project
    from cfnrun.model.template import FunctionSpec
    from cfnrun.runtime.process import WorkerProcess
    from cfnrun.runtime.spec import SandboxEnds, WorkerSpec
    from cfnrun.runtime.waiting_worker import SpawnedChild, WaitingWorker

T = TypeVar("T")


@dataclass
class EarlyWorker:
    """A worker process started before the event loop exists, already told to load its handler."""

    spec: "WorkerSpec"
    process: Union["subprocess.Popen[bytes]", "SpawnedChild"]
    ends: "SandboxEnds"
    log_stream_name: str  # the one in the load frame it was sent
    adopted: bool = False

    def adopt(self) -> "WorkerProcess":
        """The worker as the command drives it (call in the command's event loop, once)."""
        from cfnrun.runtime.process import SpawnedProcess, WorkerProcess

        self.adopted = True
        return WorkerProcess.adopt(self.spec, SpawnedProcess(self.process), self.ends, loading=self.log_stream_name)


@dataclass
class EarlyStart:
    """What began before the command line loaded: when the command began, and the worker started for it, if one was."""

    began_at: float  # time.time() when the command began: it reads the project's files from then on
    worker: Optional[EarlyWorker] = None
    # invoke's, serve's or fuzz's settings, when the command line was read exactly without the command line library
    # (``options.read_exactly``): the command runs without loading it (``app/direct_start.py``)
    settings: Optional[Union["InvokeSettings", "ServeOptions", "FuzzSettings"]] = None
    _discarding: List["asyncio.Future[None]"] = field(default_factory=list, init=False, repr=False)  # wrong guesses being killed

    @classmethod
    def without_worker(cls) -> "EarlyStart":
        """For a command run without ``begin`` (tests, the command line called as a library): it begins now."""
        return cls(time.time())

    def take(self, spec: "WorkerSpec") -> Optional["WorkerProcess"]:
        """The early worker if it was started for ``spec`` (call in the command's loop); one for anything else is killed."""
        import asyncio

        early = self.worker
        if early is None or early.adopted:
            return None
        worker = early.adopt()
        if worker.spec == spec:
            return worker
        self._discarding.append(asyncio.ensure_future(worker.kill()))
        return None

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        """``asyncio.run(main)``; then no early worker is left that the command did not adopt."""
        import asyncio

        async def then_settle() -> T:
            try:
                return await main
            finally:
                await self._settle()

        return asyncio.run(then_settle())

    async def _settle(self) -> None:
        """Kill an early worker that was not adopted, and wait for the ones being killed."""
        import asyncio

        early = self.worker
        if early is not None and not early.adopted:
            await early.adopt().kill()
        while self._discarding:
            await asyncio.shield(self._discarding.pop())

    def discard(self) -> None:
        """However the command ended (a usage error before it ran, too): no early worker is left behind."""
        early = self.worker
        if early is None or early.adopted:  # adopted in the command's loop, which settled it
            return
        import asyncio

        asyncio.run(self._settle())


def begin(argv: List[str], command: str, waiting: Optional["WaitingWorker"] = None) -> EarlyStart:
    """Spawn the worker ``cfnrun COMMAND ARGV`` will need first and tell it to load, if that can be told cheaply.

    ``waiting``: an interpreter ``__main__`` started before anything loaded (``runtime/waiting_worker.py``); it
    becomes that worker when it fits the spec, and is killed otherwise, whatever happens here.
    Neither the event loop nor the worker's own module is imported first: the spawn comes as
    early as reading the project allows. Never raises: whatever goes wrong here, the command
    itself finds and reports it.
    """
    try:
        began, spec = _read(argv, command)
        sandbox = waiting.sandbox_frame(spec) if waiting is not None and spec is not None and waiting.fits(spec) else None
    except BaseException:  # noqa: B902 - interrupted: nothing is left behind either
        if waiting is not None:
            waiting.discard()
        raise
    if waiting is not None and sandbox is None:
        waiting.discard()
    if spec is None:
        return began
    from cfnrun.runtime import spec as specs

    process: Union["subprocess.Popen[bytes]", "SpawnedChild"]
    if waiting is not None and sandbox is not None:
        ends, process = waiting.ends, waiting.process
    else:
        ends, sandbox = specs.SandboxEnds(), b""
        try:
            process = specs.start_worker_process(spec, ends)
        except Exception:  # noqa: BLE001 - an interpreter that cannot start: the command will say so
            ends.close_parent_ends()
            return began
        finally:
            ends.close_worker_ends()
    log_stream_name = specs.new_log_stream_name()
    try:
        ends.parent_end.sendall(sandbox + specs.load_frame(spec, log_stream_name))  # it imports while cfnrun loads
    except OSError:  # it is gone already (not a Python, say): the command starts its own and says why
        process.kill()
        process.wait()
        ends.close_parent_ends()
        return began
    began.worker = EarlyWorker(spec, process, ends, log_stream_name)
    return began


def _read(argv: List[str], command: str) -> Tuple[EarlyStart, Optional["WorkerSpec"]]:
    """When the command began, its settings when read exactly, and the spec of the worker it most likely starts first."""
    began = EarlyStart(time.time())
    try:
        if command == "invoke":
            from cfnrun.app.options import read_exactly
            from cfnrun.app.settings.invoke import InvokeSettings

            began.settings = read_exactly(InvokeSettings, argv)
        elif command == "serve":
            from cfnrun.app.options import read_exactly
            from cfnrun.app.settings.serve import ServeOptions

            began.settings = read_exactly(ServeOptions, argv)
        elif command == "fuzz":  # read exactly, it runs without the command line library too; its worker starts with the exploration
            from cfnrun.app.options import read_exactly
            from cfnrun.app.settings.fuzz import FuzzSettings

            began.settings = read_exactly(FuzzSettings, argv)
        return began, early_spec(argv, command)
    except Exception:  # noqa: BLE001 - the command reports it, with its own words
        return began, None


def early_spec(argv: List[str], command: str = "invoke") -> Optional["WorkerSpec"]:
    """The worker spec ``cfnrun COMMAND ARGV`` will most likely start first; None when it cannot tell cheaply."""
    from cfnrun.app.options import read_command_line

    if command == "invoke":
        from cfnrun.app.settings.invoke import InvokeSettings

        settings = read_command_line(InvokeSettings, argv)
        found = _invoke_function(settings) if settings is not None else None
        runtime = settings.runtime(found[2]) if settings is not None and found is not None else None
    elif command == "serve":
        from cfnrun.app.settings.serve import ServeOptions

        options = read_command_line(ServeOptions, argv)
        found = _serve_function(options) if options is not None else None
        runtime = options.runtime(found[2]) if options is not None and found is not None else None
    else:
        return None
    if found is None or runtime is None:
        return None
    from cfnrun.runtime.spec import worker_spec

    return worker_spec(found[0], found[1], runtime)


def _local_region(profile: Optional[str]) -> str:
    """The region the command will most likely use: the environment's, else the profile's in the AWS config file.

    botocore, which the command reads a profile's region with, would cost what starting early
    saves; a guess read with the standard library is enough here (a wrong one costs a process).
    """
    from cfnrun.invoker.region import guessed_region

    return guessed_region(profile)


def _project(named: Optional[Path]) -> "Project":
    from cfnrun.model.project import find_project_root, load_project
    from cfnrun.model.template_cache import cached_functions

    root = named or find_project_root(Path.cwd()) or Path(".")
    # The command checks the schema (jsonschema is not needed here) and reads the template itself.
    return load_project(root, usable_schema=False, read_template=cached_functions)


def _invoke_function(settings: "InvokeSettings") -> Optional[Tuple["Project", "FunctionSpec", str]]:
    """The project, the function ``cfnrun invoke`` calls and the region it calls it in."""
    from cfnrun.invoker.choices import Entrypoint

    project = _project(settings.project_dir)
    if project.is_hook:
        return None
    from cfnrun.model.project import find_request_file

    request_file = find_request_file(settings.request_file, project.root) if settings.request_file else None
    document: Any = None
    if request_file is not None and request_file != "-":
        document = json.loads(Path(request_file).read_text(encoding="utf-8"))
    sam_tests = isinstance(document, dict) and isinstance(document.get("request"), dict)
    region = settings.region or (document.get("region") if sam_tests else None)
    if not region:
        if request_file == "-":
            return None  # the request's region is on standard input, which only the command reads
        region = _local_region(settings.profile)
    if settings.function:
        function = project.function(settings.function)
    elif settings.entrypoint is Entrypoint.TEST or (sam_tests and settings.entrypoint is not Entrypoint.TYPE):
        function = project.test_function()
    else:
        function = project.type_function()
    return (project, function, str(region)) if region else None


def _serve_function(options: "ServeOptions") -> Optional[Tuple["Project", "FunctionSpec", str]]:
    """The project serve warms first (the current one, else the first ``--provider``), its first function, and the region."""
    from cfnrun.model.project import find_project_root

    named, positional = options.project, options.project_path
    if positional is not None and named is not None and positional.resolve() != named.resolve():
        return None
    folder = positional or named
    if folder is None and options.providers and find_project_root(Path.cwd()) is None:
        folder = options.providers[0]
    project = _project(folder)
    region = options.region or _local_region(options.profile)
    first = next(iter(project.functions.values()), None)
    return (project, first, region) if first is not None and region else None
