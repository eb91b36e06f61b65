"""Soak the worker runtime: many calls, misbehaving handlers and reloads; print what leaked.

Usage: python bench/soak.py [--calls 10000] [--reload-every 1000] [--workers 2] [--concurrency 4]

Drives a real FunctionPool (real worker processes) on the misbehaving test fixture. Most
calls echo a unique token back, and a call whose answer is not its own token counts as
lost. Mixed in: handlers that fork, exit, start a setsid daemon, or close their stdio;
every ``--reload-every`` calls the pool reloads. Prints lost calls, and this process's
open fds, its RSS, its child processes and the sandbox-marked processes of this user,
before the run, after it and after closing the pool.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Dict, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cfnrun.model.project import handler_project  # noqa: E402
from cfnrun.runtime.environment import lambda_environment  # noqa: E402
from cfnrun.runtime.outcome import OutcomeKind  # noqa: E402
from cfnrun.runtime.pool import FunctionPool  # noqa: E402
from cfnrun.runtime.spec import WorkerSpec  # noqa: E402
from cfnrun.runtime.sandbox import MARKER  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "misbehaving"


def spec() -> WorkerSpec:
    project = handler_project("behaviours.handler", FIXTURE / "cfnrun-test-misbehaving.json", FIXTURE)
    return WorkerSpec(
        function_name="Soak",
        handler="behaviours.handler",
        code_dir=FIXTURE,
        cwd=FIXTURE,
        env=lambda_environment(project, project.type_function(), "us-east-1"),
        memory_mb=256,
    )


def census() -> Dict[str, int]:
    me, uid = str(os.getpid()), os.getuid()
    children = marked = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            if Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()[1] == me:
                children += 1
            if f"\0{MARKER}=".encode() in b"\0" + Path(f"/proc/{entry.name}/environ").read_bytes():
                marked += 1
        except (OSError, IndexError):
            continue
    rss_kib = 0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss_kib = int(line.split()[1])
    return {
        "fds": len(os.listdir("/proc/self/fd")),
        "rss_mb": rss_kib // 1024,
        "children": children,
        "sandbox_processes": marked,
    }


def call_for(index: int, scratch: Path) -> Tuple[Dict[str, Any], OutcomeKind]:
    if index % 333 == 332:
        return {"do": "close_stdio"}, OutcomeKind.WORKER_DIED
    if index % 250 == 249:
        return {"do": "exit"}, OutcomeKind.WORKER_DIED
    if index % 500 == 123:
        return {"do": "daemon", "pid_file": str(scratch / f"daemon-{index}")}, OutcomeKind.RETURNED
    if index % 100 == 99:
        return {"do": "fork"}, OutcomeKind.RETURNED
    return {"do": "event", "token": uuid.uuid4().hex}, OutcomeKind.RETURNED


async def soak(calls: int, reload_every: int, workers: int, concurrency: int) -> Dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="cfnrun-soak-"))
    pool = FunctionPool(spec(), size=workers)
    await pool.warm()
    before = census()
    lost = []
    reloads = 0
    next_call = iter(range(calls))

    async def caller() -> None:
        nonlocal reloads
        for index in next_call:
            if index and index % reload_every == 0:
                reloads += 1
                await pool.reload()
            event, expected = call_for(index, scratch)
            outcome = await pool.invoke(event, 10)
            own = outcome.kind is expected
            if own and event["do"] == "event":
                own = outcome.result == {"event": event}
            if not own:
                lost.append((index, event["do"], outcome.kind.value, outcome.error_message))

    started = time.monotonic()
    await asyncio.gather(*(caller() for _ in range(concurrency)))
    elapsed = time.monotonic() - started
    after = census()
    await pool.close()
    closed = census()
    return {"elapsed": elapsed, "reloads": reloads, "lost": lost, "before": before, "after": after, "closed": closed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--reload-every", type=int, default=1_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    report = asyncio.run(soak(args.calls, args.reload_every, args.workers, args.concurrency))
    print(f"calls: {args.calls} in {report['elapsed']:.1f} s, reloads: {report['reloads']}")
    print(f"lost calls: {len(report['lost'])}")
    for index, do, kind, message in report["lost"][:10]:
        print(f"  call {index} ({do}): {kind} {message}")
    print(f"{'':20}{'before':>10}{'after':>10}{'closed':>10}")
    for key in ("fds", "rss_mb", "children", "sandbox_processes"):
        print(f"{key:20}{report['before'][key]:>10}{report['after'][key]:>10}{report['closed'][key]:>10}")


if __name__ == "__main__":
    main()
