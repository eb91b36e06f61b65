"""How much a warm cfnrun worker adds to one invocation, against calling the handler in-process.

Usage: python bench/invoke_overhead.py [--calls N]

For a no-op handler and for the note sample's TypeFunction LIST (over three notes), it
times N warm invocations through cfnrun's FunctionPool (socket round trip, framing, log
capture, deadline) and N direct calls of the same entrypoint in this process, taking
turns in batches of 50, then prints p50/p99 of each and what the worker adds: the
median over batches of the pool's p50 minus the direct p50 of the batch beside it.
"""
from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchlib import Latency, StubContext, note_sample_with_notes  # noqa: E402
from cfnrun.invoker.payloads import Entrypoint, OperationRequest  # noqa: E402
from cfnrun.invoker.request_files import OperationInput  # noqa: E402
from cfnrun.model.project import Project, load_project  # noqa: E402
from cfnrun.model.protocol import Action  # noqa: E402
from cfnrun.runtime.pool import FunctionPool  # noqa: E402
from cfnrun.runtime.spec import RuntimeSettings, worker_spec  # noqa: E402



def direct_entry(project: Project, handler: str) -> Callable[..., Any]:
    """The entrypoint imported into this process, with the worker's cwd and environment."""
    os.chdir(project.root)
    os.environ.update(project.type_function().environment)
    sys.path.insert(0, str(project.code_dir))
    module_name, _, attribute = handler.rpartition(".")
    return getattr(importlib.import_module(module_name), attribute)  # type: ignore[no-any-return]


async def measure(project: Project, handler: str, event: Dict[str, Any], calls: int, batch: int = 50) -> Tuple[Latency, Latency]:
    """Direct calls and pool calls, taking turns in batches so both see the same machine."""
    entry = direct_entry(project, handler)
    context = StubContext()
    pool = FunctionPool(worker_spec(project, project.type_function(), RuntimeSettings(log_level="WARNING")))
    await pool.warm()
    direct, pooled = Latency(), Latency()
    try:
        for _ in range(50):
            entry(event, context)
            await pool.invoke(event, 30)
        for _ in range(max(1, calls // batch)):
            samples = []
            for _ in range(batch):
                started = time.perf_counter()
                entry(event, context)
                samples.append((time.perf_counter() - started) * 1000)
            direct.rounds.append(samples)
            samples = []
            for _ in range(batch):
                started = time.perf_counter()
                await pool.invoke(event, 30)
                samples.append((time.perf_counter() - started) * 1000)
            pooled.rounds.append(samples)
        return direct, pooled
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
    note = load_project(note_sample_with_notes())
    cases = [
        ("no-op handler", noop, noop.type_function().handler, {"action": "LIST"}),
        ("note sample TypeFunction LIST", note, note.type_function().handler, list_event(note)),
    ]
    print(f"{args.calls} warm invocations each; times in ms")
    print(f"{'case':34} {'direct p50':>10} {'p99':>7} {'cfnrun p50':>10} {'p99':>7} {'added p50':>9}")
    for name, project, handler, event in cases:
        direct, pooled = asyncio.run(measure(project, handler, event, args.calls))
        print(
            f"{name:34} {direct.p50():10.3f} {direct.p99():7.3f} {pooled.p50():10.3f} {pooled.p99():7.3f} "
            f"{pooled.added_over(direct)[0]:9.3f}"
        )


if __name__ == "__main__":
    main()
