"""Who waits in a wide stack create: serve's main thread's CPU against its time waiting for a core.

Usage: python bench/stack_schedule.py [--size 300] [--rounds 2] [--renice-workers 0,5] [--policies normal,batch]

``bench/run_all.py``'s stack-wide create (independent clusters on ``cfnrun serve --virtual-clock``,
after a warm-up stack of 3), measured from the kernel's scheduler statistics
(``/proc/<pid>/task/<tid>/schedstat``: time run on a core, time runnable but waiting for one)
over the measured create only:

- **main run / main wait**: serve's main thread (the event loop: every call's request, answer,
  contract checks, history record and console line) on a core, and runnable while no core was free;
- **workers run**: every process under serve but the lint child (the workers, the zygote), on a core;
- **lint child run**: cfn-lint's child, at low priority beside the create;
- **main switches**: serve's main thread's context switches over the create, voluntary (it waited: for
  a worker's answer, the next request) and involuntary (it was runnable but lost its core: another
  process woke with a better claim, e.g. a worker it just sent a request to, or its time slice ran out).

Each ``--renice-workers`` value is a turn: after the warm-up, every process under serve is set to
that niceness (0: left as started), so the rounds compare serve's workers at equal and at lower
priority than its main process, taking turns. On a machine others load, their processes take cores
too: compare the turns of one run with each other, and read the wait beside the run.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path
from typing import List, Tuple

from benchlib import Serve
from run_all import cluster_project, create_seconds, looped_clusters


def descendants(pid: int) -> List[int]:
    found: List[int] = []
    for child in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split():
        found += [int(child), *descendants(int(child))]
    return found


def scheduled(pid: int, tid: int) -> Tuple[float, float]:
    """Seconds a thread ran on a core, and waited runnable for one."""
    try:
        ran, waited, _ = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
    except (OSError, ValueError):
        return 0.0, 0.0
    return int(ran) / 1e9, int(waited) / 1e9


def switches(pid: int, tid: int) -> Tuple[int, int]:
    """A thread's context switches so far: voluntary, involuntary."""
    counts = {"voluntary_ctxt_switches": 0, "nonvoluntary_ctxt_switches": 0}
    try:
        for line in Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in counts:
                counts[name] = int(value)
    except OSError:
        pass
    return counts["voluntary_ctxt_switches"], counts["nonvoluntary_ctxt_switches"]


def is_lint_child(pid: int) -> bool:
    try:
        return b"cfnrun.stacks.lint_child" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def process_run(pid: int) -> float:
    try:
        tids = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return 0.0
    return sum(scheduled(pid, tid)[0] for tid in tids)


def batch(pid: int) -> None:
    """Every thread of ``pid`` under SCHED_BATCH: woken, it waits for the running task's tick rather than preempting it."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setscheduler(int(tid), os.SCHED_BATCH, os.sched_param(0))
        except OSError:
            pass


def one_turn(size: int, niceness: int, policy: str = "normal") -> str:
    serve = Serve(cluster_project(Path(tempfile.mkdtemp(prefix="cfnrun-stack-schedule-"))), "--virtual-clock")
    try:
        create_seconds(serve, "warm-up", looped_clusters(3))
        main = serve.process.pid
        children = descendants(main)
        lint = [child for child in children if is_lint_child(child)]
        workers = [child for child in children if child not in lint]
        if niceness:
            for worker in workers:  # the lint child keeps its own (lower) priority
                os.setpriority(os.PRIO_PROCESS, worker, niceness)
        if policy == "batch":
            for worker in workers:  # the zygote too: the workers it forks later inherit the policy
                batch(worker)
        seen = len(serve.lines)
        main_before, workers_before, lint_before = scheduled(main, main), sum(map(process_run, workers)), sum(map(process_run, lint))
        switched_before = switches(main, main)
        wall = create_seconds(serve, "wide", looped_clusters(size))
        main_after, workers_after, lint_after = scheduled(main, main), sum(map(process_run, workers)), sum(map(process_run, lint))
        switched_after = switches(main, main)
        calls, handler_seconds = serve.invocation_seconds(since=seen)
    finally:
        serve.stop()
    return (
        f"workers at nice {niceness:>2} {policy:<6}: wall {wall:5.2f} s, main run {main_after[0] - main_before[0]:5.2f} s, "
        f"main wait {main_after[1] - main_before[1]:5.2f} s, main switches {switched_after[0] - switched_before[0]} voluntary "
        f"{switched_after[1] - switched_before[1]} involuntary, workers run {workers_after - workers_before:5.2f} s, lint child run {lint_after - lint_before:4.2f} s, "
        f"handler calls {handler_seconds:6.2f} s summed over {calls}, load {os.getloadavg()[0]:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=300, help="independent clusters in the measured stack")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--renice-workers", default="0,5", help="comma-separated niceness for serve's workers, one turn each per round")
    parser.add_argument("--policies", default="normal", help="comma-separated scheduling policies for serve's workers (normal, batch), one turn each per niceness")
    args = parser.parse_args()
    for _ in range(args.rounds):
        for niceness in (int(value) for value in args.renice_workers.split(",")):
            for policy in args.policies.split(","):
                print(one_turn(args.size, niceness, policy), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    main()
