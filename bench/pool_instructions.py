"""Instructions per warm call on each side of the process hop: the parent's pool and its worker.

Usage: python bench/pool_instructions.py [--calls N] [--tree PATH]

Runs a driver under valgrind's callgrind (``--trace-children=yes``, counting off): a one-worker
``FunctionPool`` of the no-op provider, warmed with 50 calls; then counting is turned on in both
processes (``callgrind_control -i on``) for N no-op calls made one after another, and off again.
What is counted is what those calls cost in the parent (the pool, the worker's process handle, the
channel, the log pipe, the event loop's turns) and in the worker (its loop: read, parse, context,
handler, checks, reply). Instruction counts do not move with the machine's load. ``--tree`` runs
another checkout's cfnrun, to compare two.
"""
from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List, Tuple

ROOT = Path(__file__).resolve().parents[1]
NOOP = ROOT / "bench" / "noop_project"

DRIVER = r"""
import asyncio, os, sys
from pathlib import Path
from cfnrun.model.project import load_project
from cfnrun.runtime.environment import lambda_environment
from cfnrun.runtime.pool import FunctionPool
from cfnrun.runtime.spec import WorkerSpec

project = load_project(Path(sys.argv[1]))
function = project.type_function()
spec = WorkerSpec(
    function_name="TypeFunction", handler=function.handler, code_dir=project.code_dir, cwd=project.root,
    env=lambda_environment(project, function, "us-east-1"), memory_mb=128, region="us-east-1",
)

async def calls(pool, count):
    for _ in range(count):
        outcome = await pool.invoke(None, 30, "00000000-0000-4000-8000-000000000000", b'{"action":"LIST"}')
        assert outcome.result == {"status": "SUCCESS"}, outcome

async def main(count):
    pool = FunctionPool(spec)
    await pool.warm()
    await calls(pool, 50)
    print(os.getpid(), pool.pids[0], flush=True)
    sys.stdin.readline()  # counting on
    await calls(pool, count)
    print("done", flush=True)
    sys.stdin.readline()  # counting off
    # No teardown, whose sweep for the worker's marker reads every process of the machine: the worker leaves
    # at its channel's EOF and writes its counts (a kill would lose them), then this process ends at once.
    worker = pool._idle[0]
    worker._channel.close()
    await worker.process.wait()
    os._exit(0)

asyncio.run(main(int(sys.argv[2])))
"""


def instructions(tree: Path, count: int) -> Tuple[int, int]:
    """Instructions of (the driver, its worker) over ``count`` warm calls."""
    out = tempfile.mkdtemp(prefix="cfnrun-pool-cg-")
    command = [
        "valgrind", "--tool=callgrind", "--instr-atstart=no", "--trace-children=yes",
        f"--callgrind-out-file={out}/cg.%p", sys.executable, "-c", DRIVER, str(NOOP), str(count),
    ]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    process = subprocess.Popen(command, env=env, cwd=out, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdin is not None and process.stdout is not None
    pids: List[str] = process.stdout.readline().split()
    if len(pids) != 2:
        raise SystemExit(f"the driver did not start: {pids}")

    def control(switch: str) -> None:
        for pid in pids:
            subprocess.run(["callgrind_control", "-i", switch, pid], check=True, capture_output=True)

    control("on")
    process.stdin.write("go\n")
    process.stdin.flush()
    process.stdout.readline()
    control("off")
    process.stdin.write("end\n")
    process.stdin.close()
    process.wait()
    totals = []
    for pid in pids:
        (path,) = glob.glob(f"{out}/cg.{pid}")
        totals.append(max(int(line.split()[1]) for line in open(path) if line.startswith(("summary:", "totals:"))))
    return totals[0], totals[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--tree", type=Path, default=ROOT)
    args = parser.parse_args()
    parent, worker = instructions(args.tree, args.calls)
    print(f"parent: {parent / args.calls / 1000:.1f}k instructions per call")
    print(f"worker: {worker / args.calls / 1000:.1f}k instructions per call")


if __name__ == "__main__":
    main()
