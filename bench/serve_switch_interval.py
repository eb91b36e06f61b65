"""``cfnrun serve --workers 2``'s throughput with Python's thread switch interval at its default and at smaller ones.

Usage: python bench/serve_switch_interval.py [--intervals 0,0.001,0.0005] [--clients 16] [--turns 10] [--seconds 2]

serve's main process runs its event loop beside other threads (the history writer, the file watch,
the memory watch) under one interpreter lock. Each socket call on the loop (a send to a worker or a
client, a read of a reply) lets go of the lock; when another thread takes it meanwhile, the loop
waits to get it back, up to the switch interval (``sys.setswitchinterval``, 5 ms by default) while
that thread runs Python. Under cProfile on a loaded machine (2026-11-27, 16 clients, load average
12) the loop spent 18-32% of its wall time in ``recv_into`` on the workers' sockets, but as much with
the history off (``CFNRUN_HISTORY=off``), so there the lock could not be told apart from waiting for
a core. This script tells them apart on a quiet machine.

One server per interval (0: the default), the same no-op project and defaults otherwise, set before
cfnrun starts; the servers take turns, ``--clients`` aiohttp clients for ``--seconds`` each turn,
and the median calls per second of each is printed beside the in-process floor's. Run it on a quiet
machine: it measures wall time.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Tuple

from benchlib import USER_ENV, free_port, private_copy
from scale import clients
from serve_overhead import NOOP, ROOT, start_inprocess, wait_for_port

# serve's command line, with the switch interval (the first argument; 0: left as it is) set first.
WITH_INTERVAL = (
    "import runpy, sys\n"
    "interval = float(sys.argv.pop(1))\n"
    "if interval:\n"
    "    sys.setswitchinterval(interval)\n"
    "sys.argv = ['cfnrun', *sys.argv[1:]]\n"
    "runpy.run_module('cfnrun', run_name='__main__', alter_sys=True)\n"
)


def start(interval: float, work: Path) -> Tuple[subprocess.Popen, str]:
    port = free_port()
    project = private_copy(NOOP, Path(tempfile.mkdtemp(dir=work)))
    command = [sys.executable, "-c", WITH_INTERVAL, str(interval), "serve", str(project), "--port", str(port), "--workers", "2", "--log-level", "WARNING"]
    process = subprocess.Popen(command, env=USER_ENV, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port, process, timeout=120)
    url = f"http://127.0.0.1:{port}"
    asyncio.run(clients(url, 16, 2.0))  # warm: the workers' first calls, the late parts loaded
    return process, url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--intervals", default="0,0.001,0.0005", help="switch intervals in seconds, 0 for the default")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    intervals = [float(i) for i in args.intervals.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        servers = {interval: start(interval, Path(folder)) for interval in intervals}
        floor_process, floor_url = start_inprocess(NOOP)
        rates: Dict[float, List[float]] = {interval: [] for interval in intervals}
        floor: List[float] = []
        try:
            for turn in range(args.turns):
                for interval in intervals if turn % 2 == 0 else reversed(intervals):
                    rates[interval].append(asyncio.run(clients(servers[interval][1], args.clients, args.seconds))[0])
                floor.append(asyncio.run(clients(floor_url, args.clients, args.seconds))[0])
        finally:
            for process, _ in servers.values():
                process.terminate()
                process.wait()
            floor_process.terminate()
            floor_process.wait()
    print(f"{args.clients} clients, {args.turns} turns of {args.seconds:g} s; in-process floor median {statistics.median(floor):,.0f}/s")
    for interval in intervals:
        median = statistics.median(rates[interval])
        name = f"{interval * 1000:g} ms" if interval else f"default ({sys.getswitchinterval() * 1000:g} ms)"
        print(f"  switch interval {name:<16} {median:8,.0f}/s  {median / statistics.median(floor):.2f}x the floor")


if __name__ == "__main__":
    main()
