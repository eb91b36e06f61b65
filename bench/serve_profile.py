"""Calls per Invoke call of each function in ``cfnrun serve``'s event loop, by concurrent clients: what grows with them.

Usage: python bench/serve_profile.py [--calls N] [--concurrency 1,16,256] [--top K] [--tree PATH] [--serve-arg ARG]...

``cfnrun serve --workers 2`` (defaults) runs with a cProfile profiler that SIGUSR1 turns on and SIGUSR2
turns off and writes out (only the main thread, the event loop's). After a warm-up (until serve's
history database exists, then 200 calls), N no-op LIST calls are made by C concurrent aiohttp
clients, each sending its calls one after another, and profiled; then the next C. Call counts do
not depend on the machine's load (times do: the table gives counts only).

Printed: the profiled calls' total function calls per Invoke call for each C, then the functions
whose calls per Invoke call differ most between the smallest and the largest C.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import pstats
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

from benchlib import USER_ENV, free_port, private_copy
from serve_instructions import calls
from serve_overhead import NOOP, ROOT, wait_for_port

# Runs in serve's process: the profiler, switched by signals, then cfnrun's command line as ``python -m cfnrun``.
PROFILED = """
import cProfile, runpy, signal, sys
split = sys.argv.index("--")
outs, profiler = sys.argv[1:split], cProfile.Profile()
def off(signum, frame):
    profiler.disable()
    profiler.dump_stats(outs.pop(0))
    profiler.clear()
signal.signal(signal.SIGUSR1, lambda signum, frame: profiler.enable())
signal.signal(signal.SIGUSR2, off)
sys.argv = ["cfnrun", *sys.argv[split + 1:]]
runpy.run_module("cfnrun", run_name="__main__", alter_sys=True)
"""
READY_S = 120.0

Key = Tuple[str, int, str]


def profiled(process: subprocess.Popen, url: str, out: Path, count: int, concurrency: int) -> Dict[Key, int]:
    """Each function's calls (primitive and recursive) over ``count`` calls from ``concurrency`` clients."""
    os.kill(process.pid, signal.SIGUSR1)
    asyncio.run(calls(url, count, concurrency))
    time.sleep(0.5)  # the reviews and the history's hand-over of the last calls
    os.kill(process.pid, signal.SIGUSR2)
    waited = time.monotonic()
    while not out.exists() and time.monotonic() - waited < 30:
        time.sleep(0.05)
    time.sleep(0.2)  # written whole
    stats = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
    return {key: value[1] for key, value in stats.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", default="1,16,256")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--tree", type=Path, default=ROOT)
    parser.add_argument("--serve-arg", action="append", default=[])
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    work = Path(tempfile.mkdtemp(prefix="cfnrun-profile-"))
    project = private_copy(NOOP, work)
    port = free_port()
    outs = [work / f"profile-{c}.prof" for c in levels]
    env = {**USER_ENV, "PYTHONPATH": str(args.tree.resolve())}
    command = [sys.executable, "-c", PROFILED, *[str(o) for o in outs], "--"]
    command += ["serve", str(project), "--port", str(port), "--workers", "2", "--log-level", "WARNING", *args.serve_arg]
    process = subprocess.Popen(command, env=env, cwd=args.tree.resolve(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    results: Dict[int, Dict[Key, int]] = {}
    try:
        wait_for_port(port, process, timeout=120)
        asyncio.run(calls(url, 200, 16))
        history = project / ".cfnrun" / "history.sqlite3"
        waited = time.monotonic()
        while not history.exists() and time.monotonic() - waited < READY_S:
            asyncio.run(calls(url, 16, 16))
        asyncio.run(calls(url, 200, max(levels)))
        for concurrency, out in zip(levels, outs):
            results[concurrency] = profiled(process, url, out, args.calls, concurrency)
    finally:
        process.terminate()
        process.wait()
    print(f"function calls per Invoke call in serve's event loop, {args.calls} no-op LIST calls (cProfile; tree {args.tree})")
    for concurrency in levels:
        print(f"  {concurrency:>5} clients: {sum(results[concurrency].values()) / args.calls:8.1f}")
    low, high = results[levels[0]], results[levels[-1]]
    keys = set(low) | set(high)
    grown: List[Tuple[float, Key]] = sorted(((high.get(k, 0) - low.get(k, 0)) / args.calls, k) for k in keys)
    print(f"\nmost changed between {levels[0]} and {levels[-1]} clients, calls per Invoke call:")
    header = "".join(f"{c:>9}" for c in levels)
    print(f"  {header}  function")
    shown = sorted(grown, key=lambda item: -abs(item[0]))[: args.top]
    for _, key in shown:
        per = "".join(f"{results[c].get(key, 0) / args.calls:9.2f}" for c in levels)
        filename, line, name = key
        print(f"  {per}  {name} ({Path(filename).name}:{line})")


if __name__ == "__main__":
    main()
