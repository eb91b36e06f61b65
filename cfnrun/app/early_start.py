"""One-shot ``cfnrun invoke``: the function's worker starts before the command line library loads.

A one-shot invoke waits for two imports: cfnrun's own (typer, pydantic, jsonschema, the
contract checker, ...) and the worker's import of the provider. Done one after the
other they add up; here they overlap. ``cfnrun/__main__.py`` hands the arguments of an
``invoke`` to ``start`` first: a small reading of them (the project, the function, and what
else goes into the worker's environment) is enough to spawn that function's worker and
tell it to load, with only the light project model and ``runtime/spec.py`` imported (not
even the event loop: the command adopts the process into its loop later). Then the command line runs
as always, and ``app/invoke.make_target`` adopts the early worker only if the worker
spec it computes is equal to the early one; otherwise the early worker is killed. So the
reading here may guess: a wrong guess costs a process, never a different run.

Anything unusual (``--in-process``, ``--lambda-endpoint``, ``--watch``, ``--moto``,
``--print-request``, ``--help``, a hook project, an option not listed below, the request
on standard input without ``--region``) starts nothing early. Every way out of the
command (usage errors included) goes through ``discard``, which kills a worker that was
not adopted and waits until it is gone.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Coroutine, Dict, List, Optional, Tuple, TypeVar

if TYPE_CHECKING:
    import asyncio
    import subprocess

    from cfnrun.runtime.process import WorkerProcess
    from cfnrun.runtime.spec import SandboxEnds, WorkerSpec

T = TypeVar("T")

# Every option of ``cfnrun invoke`` (tests/unit/test_early_start.py holds these against the command line).
VALUE_OPTIONS = {
    "--project", "-p", "--handler", "--schema", "--code-dir", "--function", "--entrypoint", "--region", "--account-id",
    "--profile", "--max-reinvoke", "--time-scale", "--invocation-timeout", "--operation-timeout", "--log-level", "--python",
    "--memory-limit", "--contract", "--typeconfig", "--aws-endpoint", "--inject", "--lambda-endpoint",
}
FLAG_OPTIONS = {
    "--credentials", "--no-credentials", "--keep-polling", "--virtual-clock", "--json", "--print-request", "--watch",
    "--in-process", "--string-primitives", "--moto", "--retry", "--no-retry", "--help",
}
# With these the command runs no local worker, or not one worker once: nothing starts early.
NOT_EARLY = {"--handler", "--schema", "--code-dir", "--lambda-endpoint", "--in-process", "--watch", "--moto", "--print-request", "--help"}


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
_discarding: List["asyncio.Future[None]"] = []


def read_arguments(argv: List[str]) -> Optional[Tuple[List[str], Dict[str, List[str]]]]:
    """Positional arguments and options of an ``invoke`` command line; None when it is not one to read."""
    positional: List[str] = []
    options: Dict[str, List[str]] = {}
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
        if name in FLAG_OPTIONS and not equals:
            options.setdefault(name, []).append("")
            continue
        if name not in VALUE_OPTIONS:
            return None
        if not equals:
            if index >= len(argv):
                return None
            value = argv[index]
            index += 1
        options.setdefault(name, []).append(value)
    return positional, options


def early_spec(argv: List[str]) -> Optional["WorkerSpec"]:
    """The worker spec ``cfnrun invoke ARGV`` will most likely need; None when it cannot tell cheaply."""
    read = read_arguments(argv)
    if read is None:
        return None
    positional, options = read
    if not 1 <= len(positional) <= 2 or set(options) & NOT_EARLY:
        return None

    def last(name: str, default: Optional[str] = None) -> Optional[str]:
        values = options.get(name)
        return values[-1] if values else default

    from cfnrun.invoker.region import local_region, region_needs_botocore
    from cfnrun.model.action import action_from_argument
    from cfnrun.model.faults import parse_faults
    from cfnrun.model.project import find_project_root, load_project
    from cfnrun.runtime.environment import DEFAULT_ACCOUNT_ID
    from cfnrun.runtime.spec import RuntimeSettings, worker_spec

    action_from_argument(positional[0])
    named = last("--project") or last("-p")
    root = Path(named) if named else (find_project_root(Path.cwd()) or Path("."))
    project = load_project(root, usable_schema=False)  # the command checks the schema; jsonschema is not needed here
    if project.is_hook:
        return None
    request_file = positional[1] if len(positional) > 1 else None
    document: Any = None
    if request_file is not None and request_file != "-":
        document = json.loads(Path(request_file).read_text(encoding="utf-8"))
    sam_tests = isinstance(document, dict) and isinstance(document.get("request"), dict)
    region = last("--region") or (document.get("region") if sam_tests else None)
    if not region:
        if request_file == "-":
            return None  # the request's region is on standard input, which only the command reads
        if region_needs_botocore(last("--profile")):
            return None  # reading the profile's region would cost what starting early saves
        region = local_region()
    entrypoint = (last("--entrypoint") or "").lower()
    if last("--function"):
        function = project.function(last("--function") or "")
    elif entrypoint == "test" or (sam_tests and entrypoint != "type"):
        function = project.test_function()
    else:
        function = project.type_function()
    memory_limit = last("--memory-limit", "on")
    if memory_limit not in ("on", "off"):
        return None
    runtime = RuntimeSettings(
        str(region), last("--account-id", DEFAULT_ACCOUNT_ID) or DEFAULT_ACCOUNT_ID, 1, (last("--log-level", "INFO") or "INFO").upper(),
        last("--python", sys.executable) or sys.executable, memory_limit=memory_limit == "on",
        aws_endpoint=last("--aws-endpoint"), faults=parse_faults(options.get("--inject", [])),
    )
    return worker_spec(project, function, runtime)


def start(argv: List[str]) -> Optional[int]:
    """Spawn the worker ``cfnrun invoke ARGV`` will need and tell it to load; its pid, or None when nothing started.

    Neither the event loop nor the worker's own module is imported first: the spawn comes as
    early as reading the project allows. Never raises: whatever goes wrong here, the command
    itself finds and reports it.
    """
    global _early
    if _early is not None:
        return None
    try:
        spec = early_spec(argv)
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
