"""``cfnrun invoke`` and ``cfnrun serve``: the first worker starts before the command line library loads.

A one-shot invoke, and serve's first answer, wait for two imports: cfnrun's own (typer, the
server, the contract checker, ...) and the worker's import of the provider. Done one after
the other they add up; here they overlap. ``cfnrun/__main__.py`` hands the command's
arguments to ``start`` first: a small reading of them (the project, the function, and what
else goes into the worker's environment) is enough to spawn that function's worker and tell
it to load, with only the light project model and ``runtime/spec.py`` imported (not even the
event loop: the command adopts the process into its loop later). For invoke that is the
function the operation calls; for serve, the first function the template declares (the one
serve warms first). Then the command line runs as always, and the command adopts the early
worker (``take``) only if the worker spec it computes is equal to the early one; otherwise
the early worker is killed. So the reading here may guess: a wrong guess costs a process,
never a different run.

Anything unusual (invoke's ``--in-process``, ``--lambda-endpoint``, ``--watch``,
``--print-request``; serve's ``--debug-port``; ``--moto``, ``--help``, an invoke of a hook project,
an option not listed below, the request on standard input without ``--region``) starts nothing
early. Every way out of the command (usage errors included) goes through ``discard``, which
kills a worker that was not adopted and waits until it is gone.
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Coroutine, Dict, FrozenSet, List, Optional, Tuple, TypeVar

if TYPE_CHECKING:
    import asyncio
    import subprocess

    from cfnrun.model.project import Project
    from cfnrun.model.template import FunctionSpec
    from cfnrun.runtime.process import WorkerProcess
    from cfnrun.runtime.spec import RuntimeSettings, SandboxEnds, WorkerSpec

T = TypeVar("T")
Positional = List[str]
Options = Dict[str, List[str]]


@dataclass(frozen=True)
class CommandOptions:
    """A command's options as the early reading knows them (tests/unit/test_early_start.py holds them against typer's)."""

    values: FrozenSet[str]  # options that take a value
    flags: FrozenSet[str]
    not_early: FrozenSet[str]  # with any of these the command runs no local worker, or not one worker once


INVOKE = CommandOptions(
    values=frozenset({
        "--project", "-p", "--handler", "--schema", "--code-dir", "--function", "--entrypoint", "--region", "--account-id",
        "--profile", "--max-reinvoke", "--time-scale", "--invocation-timeout", "--operation-timeout", "--log-level", "--python",
        "--memory-limit", "--contract", "--typeconfig", "--aws-endpoint", "--inject", "--lambda-endpoint",
    }),
    flags=frozenset({
        "--credentials", "--no-credentials", "--keep-polling", "--virtual-clock", "--json", "--print-request", "--watch",
        "--in-process", "--string-primitives", "--moto", "--retry", "--no-retry", "--help",
    }),
    not_early=frozenset({
        "--handler", "--schema", "--code-dir", "--lambda-endpoint", "--in-process", "--watch", "--moto", "--print-request", "--help",
    }),
)
SERVE = CommandOptions(
    values=frozenset({
        "--project", "-p", "--host", "--port", "--workers", "--region", "--profile", "--account-id", "--time-scale",
        "--invocation-timeout", "--log-level", "--python", "--memory-limit", "--debug-port", "--contract", "--shutdown-grace",
        "--header-timeout", "--body-timeout", "--max-connections", "--aws-endpoint", "--inject",
    }),
    flags=frozenset({"--sts-standin", "--reload", "--no-reload", "--debug-wait", "--virtual-clock", "--moto", "--help"}),
    # A debugger port belongs to one worker, set up by the pool; --moto's endpoint is known once moto runs.
    not_early=frozenset({"--debug-port", "--moto", "--help"}),
)
COMMANDS = {"invoke": INVOKE, "serve": SERVE}


@dataclass
class EarlyWorker:
    """A worker process started before the event loop exists, already told to load its handler."""

    spec: "WorkerSpec"
    process: "subprocess.Popen[bytes]"
    ends: "SandboxEnds"
    log_stream_name: str  # the one in the load frame it was sent
    adopted: bool = False

    def adopt(self) -> "WorkerProcess":
        """The worker as the command drives it (call in the command's event loop, once)."""
        from cfnrun.runtime.process import SpawnedProcess, WorkerProcess

        self.adopted = True
        return WorkerProcess.adopt(self.spec, SpawnedProcess(self.process), self.ends, loading=self.log_stream_name)


_early: Optional[EarlyWorker] = None
_began_at: Optional[float] = None  # time.time() when the command began: before it read the project
_discarding: List["asyncio.Future[None]"] = []


def read_arguments(argv: List[str], command: CommandOptions = INVOKE) -> Optional[Tuple[Positional, Options]]:
    """Positional arguments and options of ``command``'s command line; None when it is not one to read."""
    positional: Positional = []
    options: Options = {}
    index = 0
    while index < len(argv):
        argument = argv[index]
        index += 1
        if argument == "--" or argument == "-":
            if argument == "--":
                return None
            positional.append(argument)
            continue
        if not argument.startswith("-"):
            positional.append(argument)
            continue
        name, equals, value = argument.partition("=")
        if name.startswith("-p") and not name.startswith("--") and len(name) > 2:
            name, equals, value = "-p", "=", argument[2:]
        if name in command.flags and not equals:
            options.setdefault(name, []).append("")
            continue
        if name not in command.values:
            return None
        if not equals:
            if index >= len(argv):
                return None
            value = argv[index]
            index += 1
        options.setdefault(name, []).append(value)
    return positional, options


def _last(options: Options, name: str, default: Optional[str] = None) -> Optional[str]:
    values = options.get(name)
    return values[-1] if values else default


def _runtime(options: Options, region: str) -> Optional["RuntimeSettings"]:
    """The runtime settings the command will build from these options (those that shape a worker spec)."""
    from cfnrun.model.faults import parse_faults
    from cfnrun.runtime.environment import DEFAULT_ACCOUNT_ID
    from cfnrun.runtime.spec import RuntimeSettings

    memory_limit = _last(options, "--memory-limit", "on")
    if memory_limit not in ("on", "off"):
        return None
    return RuntimeSettings(
        region, _last(options, "--account-id", DEFAULT_ACCOUNT_ID) or DEFAULT_ACCOUNT_ID, 1,
        (_last(options, "--log-level", "INFO") or "INFO").upper(), _last(options, "--python", sys.executable) or sys.executable,
        memory_limit=memory_limit == "on", aws_endpoint=_last(options, "--aws-endpoint"),
        faults=parse_faults(options.get("--inject", [])), debug_wait="--debug-wait" in options,  # serve's only
    )


def _local_region(options: Options) -> Optional[str]:
    """The region the command reads from the environment; None when only botocore could tell (a profile's)."""
    from cfnrun.invoker.region import local_region, region_needs_botocore

    if region_needs_botocore(_last(options, "--profile")):
        return None  # reading the profile's region would cost what starting early saves
    return local_region()


def _project(named: Optional[str]) -> "Project":
    from cfnrun.model.project import find_project_root, load_project
    from cfnrun.model.template_cache import cached_functions

    root = Path(named) if named else (find_project_root(Path.cwd()) or Path("."))
    # The command checks the schema (jsonschema is not needed here) and reads the template itself.
    return load_project(root, usable_schema=False, read_template=cached_functions)


def _invoke_function(positional: Positional, options: Options) -> Optional[Tuple["Project", "FunctionSpec", str]]:
    """The project, the function ``cfnrun invoke`` calls and the region it calls it in."""
    from cfnrun.model.action import action_from_argument

    if not 1 <= len(positional) <= 2:
        return None
    action_from_argument(positional[0])
    project = _project(_last(options, "--project") or _last(options, "-p"))
    if project.is_hook:
        return None
    request_file = positional[1] if len(positional) > 1 else None
    document: Any = None
    if request_file is not None and request_file != "-":
        document = json.loads(Path(request_file).read_text(encoding="utf-8"))
    sam_tests = isinstance(document, dict) and isinstance(document.get("request"), dict)
    region = _last(options, "--region") or (document.get("region") if sam_tests else None)
    if not region:
        if request_file == "-":
            return None  # the request's region is on standard input, which only the command reads
        region = _local_region(options)
    entrypoint = (_last(options, "--entrypoint") or "").lower()
    if _last(options, "--function"):
        function = project.function(_last(options, "--function") or "")
    elif entrypoint == "test" or (sam_tests and entrypoint != "type"):
        function = project.test_function()
    else:
        function = project.type_function()
    return (project, function, str(region)) if region else None


def _serve_function(positional: Positional, options: Options) -> Optional[Tuple["Project", "FunctionSpec", str]]:
    """The project, the function ``cfnrun serve`` warms first (the first declared) and the region it serves in."""
    named = _last(options, "--project") or _last(options, "-p")
    if len(positional) > 1 or (positional and named and Path(positional[0]).resolve() != Path(named).resolve()):
        return None
    project = _project(positional[0] if positional else named)
    region = _last(options, "--region") or _local_region(options)
    first = next(iter(project.functions.values()), None)
    return (project, first, region) if first is not None and region else None


def early_spec(argv: List[str], command: str = "invoke") -> Optional["WorkerSpec"]:
    """The worker spec ``cfnrun COMMAND ARGV`` will most likely start first; None when it cannot tell cheaply."""
    known = COMMANDS.get(command)
    read = read_arguments(argv, known) if known is not None else None
    if known is None or read is None or set(read[1]) & known.not_early:
        return None
    positional, options = read
    found = (_serve_function if command == "serve" else _invoke_function)(positional, options)
    runtime = _runtime(options, found[2]) if found is not None else None
    if found is None or runtime is None:
        return None
    from cfnrun.runtime.spec import worker_spec

    return worker_spec(found[0], found[1], runtime)


def start(argv: List[str], command: str = "invoke") -> Optional[int]:
    """Spawn the worker ``cfnrun COMMAND ARGV`` will need first and tell it to load; its pid, or None when nothing started.

    Neither the event loop nor the worker's own module is imported first: the spawn comes as
    early as reading the project allows. Never raises: whatever goes wrong here, the command
    itself finds and reports it.
    """
    global _early, _began_at
    if _early is not None:
        return None
    _began_at = time.time()
    try:
        spec = early_spec(argv, command)
    except Exception:  # noqa: BLE001 - the command reports it, with its own words
        return None
    if spec is None:
        return None
    from cfnrun.runtime import spec as specs

    ends = specs.SandboxEnds()
    try:
        process = specs.start_worker_process(spec, ends)
    except Exception:  # noqa: BLE001 - an interpreter that cannot start: the command will say so
        ends.close_parent_ends()
        return None
    finally:
        ends.close_worker_ends()
    log_stream_name = specs.new_log_stream_name()
    try:
        ends.parent_end.sendall(specs.load_frame(spec, log_stream_name))  # it imports while cfnrun loads
    except OSError:  # it is gone already (not a Python, say): the command starts its own and says why
        process.kill()
        process.wait()
        ends.close_parent_ends()
        return None
    _early = EarlyWorker(spec, process, ends, log_stream_name)
    return process.pid


def began_at() -> Optional[float]:
    """When ``start`` was called (``time.time()``), if it was: the command reads the project's files from then on."""
    return _began_at


def take(spec: "WorkerSpec") -> Optional["WorkerProcess"]:
    """The early worker if it was started for ``spec`` (call in the command's loop); one for anything else is killed."""
    import asyncio

    early = _early
    if early is None or early.adopted:
        return None
    worker = early.adopt()
    if worker.spec == spec:
        return worker
    _discarding.append(asyncio.ensure_future(worker.kill()))
    return None


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``; then no early worker is left that the command did not adopt."""
    import asyncio

    async def then_settle() -> T:
        try:
            return await main
        finally:
            await _settle()

    return asyncio.run(then_settle())


async def _settle() -> None:
    """Kill an early worker that was not adopted, and wait for the ones being killed."""
    import asyncio

    early = _early
    if early is not None and not early.adopted:
        await early.adopt().kill()
    while _discarding:
        await asyncio.shield(_discarding.pop())


def discard() -> None:
    """However the command ended (a usage error before it ran, too): no early worker is left behind."""
    early = _early
    if early is None or early.adopted:  # adopted in the command's loop, which settled it
        return
    import asyncio

    asyncio.run(_settle())
