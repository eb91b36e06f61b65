"""How much a warm cfnrun worker adds to one invocation, against calling the handler in-process.

Usage: python bench/invoke_overhead.py [--calls N]

For a no-op handler and for the note sample's TypeFunction LIST, it times N warm
invocations through cfnrun's FunctionPool (pipe round trip, framing, log capture)
and N direct calls of the same entrypoint in this process, then prints p50/p99 of
each and what the worker adds.
"""
from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchlib import StubContext  # noqa: E402
from cfnrun.invoker.payloads import Entrypoint, OperationRequest  # noqa: E402
from cfnrun.invoker.request_files import OperationInput  # noqa: E402
from cfnrun.project import Project, load_project  # noqa: E402
from cfnrun.protocol import Action  # noqa: E402
from cfnrun.runtime.pool import FunctionPool  # noqa: E402
from cfnrun.runtime.registry import RuntimeSettings, worker_spec  # noqa: E402



def percentiles(samples_ms: List[float]) -> Tuple[float, float]:
    ordered = sorted(samples_ms)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered), p99


def direct(project: Project, handler: str, event: Dict[str, Any], calls: int) -> List[float]:
    """The same entrypoint called in this process, with the worker's cwd and environment."""
    os.chdir(project.root)
    os.environ.update(project.type_function().environment)
    sys.path.insert(0, str(project.code_dir))
    module_name, _, attribute = handler.rpartition(".")
    entry: Callable[..., Any] = getattr(importlib.import_module(module_name), attribute)
    context = StubContext()
    for _ in range(50):
        entry(event, context)
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        entry(event, context)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def through_pool(project: Project, event: Dict[str, Any], calls: int) -> List[float]:
    function = project.type_function()
    pool = FunctionPool(worker_spec(project, function, RuntimeSettings(log_level="WARNING")))
    await pool.warm()
    try:
        for _ in range(50):
            await pool.invoke(event, 30)
        samples = []
        for _ in range(calls):
            started = time.perf_counter()
            await pool.invoke(event, 30)
            samples.append((time.perf_counter() - started) * 1000)
        return samples
    finally:
        await pool.close()


def list_event(project: Project) -> Dict[str, Any]:
    return OperationRequest(
        action=Action.LIST,
        type_name=project.type_name,
        region="us-east-1",
        account_id="123456789012",
        entrypoint=Entrypoint.TYPE,
        operation=OperationInput(desired={}),
    ).payload()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()

    noop = load_project(ROOT / "bench/noop_project")
    note = load_project(ROOT / "samples/note")
    cases = [
        ("no-op handler", noop, noop.type_function().handler, {"action": "LIST"}),
        ("note sample TypeFunction LIST", note, note.type_function().handler, list_event(note)),
    ]
    print(f"{args.calls} warm invocations each; times in ms")
    print(f"{'case':34} {'direct p50':>10} {'p99':>7} {'cfnrun p50':>10} {'p99':>7} {'added p50':>9} {'ratio':>6}")
    for name, project, handler, event in cases:
        direct_p50, direct_p99 = percentiles(direct(project, handler, event, args.calls))
        pool_p50, pool_p99 = percentiles(asyncio.run(through_pool(project, event, args.calls)))
        print(
            f"{name:34} {direct_p50:10.3f} {direct_p99:7.3f} {pool_p50:10.3f} {pool_p99:7.3f} "
            f"{pool_p50 - direct_p50:9.3f} {pool_p50 / direct_p50:6.1f}"
        )


if __name__ == "__main__":
    main()
