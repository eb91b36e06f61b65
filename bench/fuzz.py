"""``cfnrun fuzz`` throughput and time to a bug, against the same exploration on an in-process stand-in.

Usage: python bench/fuzz.py [--examples N] [--trials T]

1. Operations per second on a synchronous provider (tests/fixtures/sizer with its bug fixed):
   ``cfnrun fuzz``'s exploration on a warm worker, each operation through the invoker with the
   contract checker, driven from this thread's event loop (what fuzz_run does) and, for
   comparison, submitted to a loop in another thread; the baseline is the same exploration on
   an in-process dict (no worker, no invoker, no checker): what hypothesis, the generation and
   the expected-state checks cost alone.
2. Seconds until the bug is found and shrunk, for the sizer as it is (it keeps ``Size % 90`` for
   Size over 90: 10 of the 101 sizes the schema allows), over T seeds; same baseline.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, List

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

from benchlib import LOCAL_STATE  # noqa: E402
from cfnrun.app.fuzz_run import InvokerRunner, LoopDriver, budget_of, load_fuzzed_project  # noqa: E402
from cfnrun.app.settings.fuzz import FuzzSettings  # noqa: E402
from cfnrun.fuzz.explore import Exploration, explore  # noqa: E402
from cfnrun.fuzz.sequence import OperationRunner  # noqa: E402
from cfnrun.model.project import Project  # noqa: E402
from test_fuzz_sequences import Boxes  # noqa: E402  # the unit tests' in-process stand-in, with the same bug

BUG = "return size % 90 if size > 90 else size"


def sizer(fixed: bool) -> Project:
    copy = Path(tempfile.mkdtemp(prefix="cfnrun-bench-")) / "sizer"
    shutil.copytree(ROOT / "tests" / "fixtures" / "sizer", copy, ignore=LOCAL_STATE)
    if fixed:
        source = copy / "sizer.py"
        source.write_text(source.read_text().replace(BUG, "return size"))
    return load_fuzzed_project(copy)


class ThreadLoop:
    """The alternative design: every operation handed to an event loop running in another thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run_until_complete(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()


def timed(runner: OperationRunner, project: Project, settings: FuzzSettings) -> "tuple[Exploration, float]":
    started = time.perf_counter()
    exploration = explore(project.schema, runner, budget_of(settings))
    return exploration, time.perf_counter() - started


def with_worker(project: Project, settings: FuzzSettings, loop: Callable[[], LoopDriver]) -> "tuple[Exploration, float]":
    runner = InvokerRunner(project, settings, loop())
    runner.warm()
    try:
        return timed(runner, project, settings)
    finally:
        runner.close()


def throughput(examples: int) -> None:
    project = sizer(fixed=True)
    settings = FuzzSettings(max_examples=examples, seed=1, log_level="WARNING")
    print(f"1. operations per second, {examples} sequences (seed 1), sizer fixed")
    print(f"{'runner':58} {'operations':>10} {'seconds':>8} {'ops/s':>8}")
    cases: List["tuple[str, Callable[[], tuple[Exploration, float]]]"] = [
        ("in-process dict (baseline: hypothesis + checks only)", lambda: timed(Boxes(fixed=True), project, settings)),
        ("warm worker, invoker + contract, loop in this thread", lambda: with_worker(project, settings, asyncio.new_event_loop)),
        ("warm worker, invoker + contract, loop in another thread", lambda: with_worker(project, settings, ThreadLoop)),
    ]
    for name, run in cases:
        exploration, seconds = run()
        operations = exploration.completed.operations
        print(f"{name:58} {operations:10d} {seconds:8.2f} {operations / seconds:8.0f}")


def time_to_bug(trials: int) -> None:
    project = sizer(fixed=False)
    print(f"\n2. seconds to find and shrink the Size % 90 bug (10 % of Size's values), {trials} seeds")
    print(f"{'runner':58} {'median':>8} {'max':>8} {'found':>6}")
    for name, make in (
        ("in-process dict (baseline)", None),
        ("warm worker, invoker + contract (cfnrun fuzz)", "worker"),
    ):
        seconds: List[float] = []
        found = 0
        for seed in range(1, trials + 1):
            settings = FuzzSettings(max_examples=5000, seed=seed, log_level="WARNING")
            if make is None:
                exploration, took = timed(Boxes(), project, settings)
            else:
                exploration, took = with_worker(project, settings, asyncio.new_event_loop)
            seconds.append(took)
            found += exploration.finding is not None
        print(f"{name:58} {statistics.median(seconds):8.2f} {max(seconds):8.2f} {found:3d}/{trials}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--trials", type=int, default=10)
    args = parser.parse_args()
    os.environ["CFNRUN_HISTORY"] = "off"  # nothing recorded in the copies
    throughput(args.examples)
    time_to_bug(args.trials)


if __name__ == "__main__":
    main()
