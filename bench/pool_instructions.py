"""Instructions per warm call on each side of the process hop: the parent's pool and its worker.

Usage: python bench/pool_instructions.py [--calls N] [--tree PATH]

Runs a driver under valgrind (cachegrind, ``--trace-children=yes``) twice: a warm one-worker
``FunctionPool`` of the no-op provider answering WARM and then WARM + N no-op calls one after
another. The difference of the two runs, divided by N, is what one more call costs in the parent
(the pool, the worker's process handle, the channel, the log pipe) and in the worker (its loop: read,
parse, context, handler, checks, reply): start-up and shutdown cancel out. Instruction counts do not
move with the machine's load. ``--tree`` runs another checkout's cfnrun, to compare two.
"""
from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, Tuple

ROOT = Path(__file__).resolve().parents[1]
NOOP = ROOT / "bench" / "noop_project"
WARM = 50

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

async def main(count):
    pool = FunctionPool(spec)
    await pool.warm()
    for _ in range(count):
        outcome = await pool.invoke(None, 30, "00000000-0000-4000-8000-000000000000", b'{"action":"LIST"}')
        assert outcome.result == {"status": "SUCCESS"}, outcome
    # No teardown, whose sweep for the worker's marker reads every process of the machine: the worker leaves
    # at its channel's EOF and writes its counts (a kill would lose them), then this process ends at once.
    worker = pool._idle[0]
    worker._channel.close()
    await worker.process.wait()
    os._exit(0)

asyncio.run(main(int(sys.argv[2])))
"""


def instructions(tree: Path, count: int) -> Tuple[int, int]:
    """Instructions of (the driver, its worker) for ``count`` calls."""
    out = tempfile.mkdtemp(prefix="cfnrun-pool-cg-")
    command = [
        "valgrind", "--tool=cachegrind", "--cache-sim=no", "--trace-children=yes",
        f"--cachegrind-out-file={out}/cg.%p", sys.executable, "-c", DRIVER, str(NOOP), str(count),
    ]
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}  # the same imports, the same dicts: start-ups cancel out
    process = subprocess.run(command, env=env, capture_output=True, text=True, cwd=out)  # cwd: not a checkout's cfnrun
    if process.returncode != 0:
        raise SystemExit(process.stderr[-3000:])
    counts: Dict[int, int] = {}
    for path in glob.glob(f"{out}/cg.*"):
        pid = int(path.rsplit(".", 1)[1])
        for line in open(path):
            if line.startswith("summary:"):
                counts[pid] = int(line.split()[1])
    driver = min(counts)  # the driver started first; its worker (and anything else) later
    others = sorted((pid for pid in counts if pid != driver), key=lambda pid: -counts[pid])
    return counts[driver], counts[others[0]] if others else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--tree", type=Path, default=ROOT)
    args = parser.parse_args()
    parent_a, worker_a = instructions(args.tree, WARM)
    parent_b, worker_b = instructions(args.tree, WARM + args.calls)
    print(f"parent: {(parent_b - parent_a) / args.calls / 1000:.1f}k instructions per call")
    print(f"worker: {(worker_b - worker_a) / args.calls / 1000:.1f}k instructions per call")


if __name__ == "__main__":
    main()
