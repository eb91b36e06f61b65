"""How cfnrun's costs grow: calls against concurrent clients, stacks against resources and depth, history against size.

Usage: python bench/scale.py [--quick] [--parts serve,stacks,history] [--plot FILE.svg]

- ``serve``: ``cfnrun serve --workers 2`` (defaults: contract warn, history, reload) on the no-op
  project, invoked by 1, 16, 256 and 1,000 concurrent aiohttp clients (each sends calls one after
  another for a few seconds): calls per second, latency p50 and p99, calls not answered 200, and the
  connections opened per call beyond each client's first (while callers wait past serve's connection
  cap, 128 by default, every answer says ``Connection: close``); beside each, the bare in-process
  aiohttp endpoint (bench/inprocess_server.py) with the same clients.
- ``stacks``: the cluster sample (IN_PROGRESS twice, then SUCCESS) on ``cfnrun serve --virtual-clock``:
  stacks of 10, 100 and 500 independent clusters (one ``Fn::ForEach``), and chains of 10, 50 and
  200 (each ``DependsOn`` the one before): CreateStack to CREATE_COMPLETE, and per resource; beside
  them the handler calls' summed durations as serve reports them.
- ``history``: serve's calls per second (one client) after 0, 500 and 5,000 operations asked of it before,
  with what the history kept (500 at most by default: older ones go) and its file's size.

Each table is printed as Markdown, with the date and the command line; ``--plot`` also draws the
curves into one image (bench/scale_plot.py; needs matplotlib: ``pip install -e '.[bench]'``). The
machine must be quiet.
"""
from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, List, Sequence, Tuple

import aiohttp
from benchlib import Serve, private_copy
from run_all import chained_clusters, cluster_project, create_seconds, looped_clusters
from scale_plot import Curves, draw
from serve_overhead import NOOP, start_inprocess

INVOKE = "/2015-03-31/functions/TypeFunction/invocations"


async def clients(url: str, concurrency: int, seconds: float) -> Tuple[float, List[float], int, int]:
    """Calls per second, each call's latency (ms), the calls not answered 200 and the connections the clients opened,
    ``concurrency`` clients for ``seconds`` (past serve's connection cap, every answer says ``Connection: close`` while
    callers wait, and its client opens a new connection for its next call)."""
    latencies: List[float] = []
    failed = 0
    opened = 0
    stop_at = time.monotonic() + seconds

    async def connection_opened(*_: object) -> None:
        nonlocal opened
        opened += 1

    async def client(session: aiohttp.ClientSession) -> None:
        nonlocal failed
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            try:
                async with session.post(url + INVOKE, data=b'{"action": "LIST"}') as response:
                    await response.read()
                    failed += response.status != 200
            except aiohttp.ClientError:
                failed += 1
            latencies.append((time.perf_counter() - started) * 1000)

    connector = aiohttp.TCPConnector(limit=concurrency)
    tracing = aiohttp.TraceConfig()
    tracing.on_connection_create_end.append(connection_opened)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=300), trace_configs=[tracing]) as session:
        started = time.monotonic()
        await asyncio.gather(*(client(session) for _ in range(concurrency)))
        return len(latencies) / (time.monotonic() - started), latencies, failed, opened


def percentile(values: List[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def figures(rate: float, latencies: List[float], failed: int) -> str:
    return f"{rate:,.0f}/s, p50 {statistics.median(latencies):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms" + (f", {failed} failed" if failed else "")


def reconnects(latencies: List[float], opened: int, concurrency: int) -> str:
    """Connections opened per call beyond each client's first."""
    return f"{max(0, opened - concurrency) / len(latencies):.2f}"


def serve_part(work: Path, seconds: float, curves: Curves) -> List[List[str]]:
    rows = []
    floor_process, floor_url = start_inprocess(NOOP)
    serve = Serve(private_copy(NOOP, work), "--workers", "2")
    try:
        for concurrency in (1, 16, 256, 1000):
            served = asyncio.run(clients(serve.url, concurrency, seconds))
            floor = asyncio.run(clients(floor_url, concurrency, seconds))
            opened = reconnects(served[1], served[3], concurrency)
            rows.append([str(concurrency), figures(*served[:3]), opened, figures(*floor[:3]), f"{served[0] / floor[0]:.2f}×"])
            curves.add("clients", "cfnrun serve --workers 2", concurrency, served[0])
            curves.add("clients", "in-process aiohttp floor", concurrency, floor[0])
    finally:
        serve.stop()
        floor_process.terminate()
        floor_process.wait()
    return rows


def stacks_part(work: Path, wide: Sequence[int], chains: Sequence[int], curves: Curves) -> List[List[str]]:
    rows = []
    serve = Serve(cluster_project(work), "--virtual-clock")
    try:
        create_seconds(serve, "warm-up", looped_clusters(3))
        shapes: List[Tuple[str, int, Callable[[int], str]]] = [("independent", n, looped_clusters) for n in wide]
        shapes += [("chain", n, chained_clusters) for n in chains]
        for shape, count, template in shapes:
            serve.settle()  # the stack before's lint runs after its calls: not beside this one
            seen = len(serve.lines)
            wall = create_seconds(serve, f"{shape}-{count}", template(count))
            calls, handler_seconds = serve.invocation_seconds(since=seen)
            rows.append([shape, str(count), f"{wall:.2f} s", f"{wall * 1000 / count:.1f} ms", f"{handler_seconds:.2f} s ({calls} calls)"])
            curves.add("stacks", shape, count, wall)
    finally:
        serve.stop()
    return rows


def history_part(work: Path, seconds: float, curves: Curves) -> List[List[str]]:
    rows = []
    (work / "history").mkdir()
    project = private_copy(NOOP, work / "history")
    history = project / ".cfnrun" / "history.sqlite3"
    made = 0  # operations serve was asked for so far (each call of a no-op LIST is one)
    for calls in (0, 500, 5000):
        serve = Serve(project, "--workers", "2")
        try:
            while made < calls:
                made += len(asyncio.run(clients(serve.url, 1, 0.2))[1])
            rate, latencies, failed, _ = asyncio.run(clients(serve.url, 1, seconds))
        finally:
            serve.stop()
        with sqlite3.connect(history) as database:
            (kept,) = database.execute("SELECT COUNT(*) FROM operations").fetchone()
        made += len(latencies)
        rows.append([f"{calls:,} before", f"{kept:,} kept, {history.stat().st_size / 1024:.0f} KiB", figures(rate, latencies, failed)])
        curves.add("history", "cfnrun serve, one client", calls, rate)
    return rows


def table(head: Sequence[str], rows: List[List[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="shorter runs and smaller stacks: a smoke run")
    parser.add_argument("--parts", default="serve,stacks,history")
    parser.add_argument("--plot", type=Path, help="also draw the curves into this SVG file")
    args = parser.parse_args(argv)
    curves = Curves()
    parts = set(args.parts.split(","))
    seconds = 1.0 if args.quick else 4.0
    print(f"measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, Python {sys.version.split()[0]}, `python bench/scale.py {' '.join(argv)}`")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        if "serve" in parts:
            head = ["concurrent clients", "`cfnrun serve --workers 2`", "new connections per call", "in-process aiohttp floor", "ratio"]
            print("\n" + table(head, serve_part(work, seconds, curves)))
        if "stacks" in parts:
            wide, chains = ((10, 50), (10,)) if args.quick else ((10, 100, 500), (10, 50, 200))
            head = ["shape", "resources", "create", "per resource", "handler calls summed"]
            print("\n" + table(head, stacks_part(work, wide, chains, curves)))
        if "history" in parts:
            print("\n" + table(["operations asked before", "history after the run", "serve, one client"], history_part(work, seconds, curves)))
    if args.plot:
        draw(curves, args.plot, f"cfnrun, {time.strftime('%Y-%m-%d', time.gmtime())}, 2-core Linux VM")
        print(f"\ncurves drawn into {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
