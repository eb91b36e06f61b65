"""CPU per call under the throughput row's load, by process: where serve's calls per second go on two cores.

Usage: python bench/serve_cpu.py [--rounds 3] [--seconds 3] [--turn "ARGS"]...

The load is ``bench/run_all.py``'s serve-throughput row (16 concurrent aiohttp clients in this process, no-op
LIST calls). For each turn, after a second's warm-up, the CPU time (user and system, from
``/proc/<pid>/stat``) that each process spent over S seconds is divided by the calls answered: serve's main
process, its workers (every other process under it) and the client (this process, ``getrusage``). The turns take
turns, ``--rounds`` times; medians are printed. A thread switch, a lock handed between threads and a wake-up
are in these figures, which instruction counts (``bench/serve_instructions.py``) leave out.

A turn is ``floor`` (bench/inprocess_server.py), ``forwarder`` (bench/forwarder_server.py with two children,
their CPU under "workers") or serve's extra arguments and ``NAME=VALUE`` settings of its
environment, e.g. ``--turn ""`` (the defaults), ``--turn "--no-reload"``, ``--turn "CFNRUN_HISTORY=off"``,
``--turn "PYTHONPATH=/path/to/other/checkout"`` (run this from outside both checkouts, so that ``python -m``
imports the one on PYTHONPATH). Default turns: the floor and serve's defaults.
"""
from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import tempfile
from pathlib import Path
from typing import Callable, Dict, List, Tuple

from benchlib import USER_ENV, Serve, cpu_seconds, private_copy, process_tree
from serve_overhead import NOOP, start_inprocess, start_script, throughput

CONCURRENCY = 16


def measured(pid: int, url: str, seconds: float) -> Tuple[float, float, float, float]:
    """(calls/s, client µs, serve main µs, workers µs) per call."""
    asyncio.run(throughput(url, 1.0, CONCURRENCY))
    pids = process_tree(pid)  # after the warm-up: the workers are up
    before = {each: cpu_seconds(each) for each in pids}
    started = resource.getrusage(resource.RUSAGE_SELF)
    rate = asyncio.run(throughput(url, seconds, CONCURRENCY))
    ended = resource.getrusage(resource.RUSAGE_SELF)
    spent = {each: cpu_seconds(each) - before[each] for each in pids}
    calls = rate * seconds
    client = ended.ru_utime - started.ru_utime + ended.ru_stime - started.ru_stime
    workers = sum(value for each, value in spent.items() if each != pid)
    return rate, 1e6 * client / calls, 1e6 * spent[pid] / calls, 1e6 * workers / calls


def started(turn: str) -> Tuple[int, str, Callable[[], object]]:
    if turn in ("floor", "forwarder"):
        process, url = start_inprocess(NOOP) if turn == "floor" else start_script("forwarder_server.py", NOOP, "2")
        return process.pid, url, lambda: (process.terminate(), process.wait())
    words = turn.split()
    settings = dict(word.split("=", 1) for word in words if "=" in word and not word.startswith("-"))
    arguments = [word for word in words if word not in [f"{key}={value}" for key, value in settings.items()]]
    serve = Serve(private_copy(NOOP, Path(tempfile.mkdtemp())), "--workers", "2", *arguments, env={**USER_ENV, **settings})
    return serve.process.pid, serve.url, serve.stop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--turn", action="append", help="floor, forwarder, or serve's arguments and NAME=VALUE settings")
    args = parser.parse_args()
    turns = args.turn or ["floor", ""]
    figures: Dict[str, List[Tuple[float, float, float, float]]] = {turn: [] for turn in turns}
    for _ in range(args.rounds):
        for turn in turns:
            pid, url, stop = started(turn)
            try:
                figures[turn].append(measured(pid, url, args.seconds))
            finally:
                stop()
    print(f"CPU µs per call, {CONCURRENCY} concurrent clients, medians of {args.rounds} turns of {args.seconds:g} s")
    print(f"{'turn':44} {'calls/s':>8} {'client':>7} {'main':>6} {'workers':>8} {'in all':>7}")
    for turn, rows in figures.items():
        rate, client, main_process, workers = (statistics.median(row[n] for row in rows) for n in range(4))
        total = statistics.median(sum(row[1:]) for row in rows)
        print(f"{(turn or '(serve, defaults)'):44} {rate:8,.0f} {client:7.0f} {main_process:6.0f} {workers:8.0f} {total:7.0f}")


if __name__ == "__main__":
    main()
