"""Instructions per record of serve's history writer: what its thread runs for each call serve answers.

Usage: python bench/history_instructions.py [--records N] [--batch B] [--rounds R] [--tree PATH]...

The records are those of the bench's no-op LIST calls as serve's writer thread makes them: the call recorder's
record of each call (masking, the JSON texts, the store's inserts) inside the store's batch of B records, each
batch committed and pruned, on a private copy of bench/noop_project whose history is already at its limit (500
operations: each batch removes as many as it adds, as in a serve that has run a while). ``--batch 1`` is calls
one after another (the latency row); serve under many clients gathers larger batches.

Each tree (default: this checkout; ``--tree`` another checkout's cfnrun, more than once to compare) is counted
with cachegrind twice from the same start, writing N records and writing none; the difference over N is the
figure (a first run per tree, uncounted, makes what cfnrun caches). With several trees they take turns, A, B, A,
B, ``--rounds`` times. Needs valgrind.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
NOOP = ROOT / "bench" / "noop_project"
FILLED = 520  # records written before counting: the store at its limit of 500


def drive(records: int, batch: int) -> None:
    """In the child process: the records, on the cfnrun that PYTHONPATH names."""
    import shutil

    from cfnrun.history.recorder import CallRecorder
    from cfnrun.history.store import HistoryStore
    from cfnrun.history.writer import HistoryWriter
    from cfnrun.model.budgets import Budget, BudgetKind
    from cfnrun.model.project import load_project
    from cfnrun.model.protocol import Action
    from cfnrun.model.seen_call import SeenCall
    from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind

    copy = Path(tempfile.mkdtemp(prefix="cfnrun-bench-")) / "noop"
    shutil.copytree(NOOP, copy, ignore=shutil.ignore_patterns(".cfnrun"))
    project = load_project(copy)
    store = HistoryStore(project.root)
    recorder = CallRecorder(HistoryWriter(store), lambda: project.schema, project.type_name)
    budgets = (Budget(30.0, "the function's Timeout", BudgetKind.CONTRACT), Budget(7200.0, "the schema", BudgetKind.CONTRACT, True))

    def written(count: int, size: int) -> None:
        for start in range(0, count, size):
            with store.batch():
                for number in range(start, min(start + size, count)):
                    call = SeenCall.parse({"action": "LIST"})
                    outcome = InvocationOutcome(OutcomeKind.RETURNED, f"request-{number}", 0.05, result={"status": "SUCCESS"})
                    recorder._record("TypeFunction", Action.LIST, call, outcome, [], budgets, 1.8e9 + number)

    written(FILLED, 16)
    written(records, batch)
    store.close()
    assert len(store.operations()) == store.limit


def _env(tree: Path) -> Dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree.resolve()), "CFNRUN_HISTORY": "on", "PYTHONHASHSEED": "0"}  # the same count run after run
    env.pop("CFNRUN_HISTORY_LIMIT", None)
    return env


def _python() -> str:
    return os.path.realpath(sys.executable)  # not a shim script: cachegrind counts the process it starts


def counted(tree: Path, records: int, batch: int) -> int:
    """cachegrind's instruction count of a child writing ``records`` records after the start."""
    env = _env(tree)
    run = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
         _python(), __file__, "--drive", str(records), str(batch)],
        env=env, cwd=tree.resolve(), capture_output=True, text=True,
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", run.stderr)
    if run.returncode != 0 or found is None:
        raise SystemExit(f"the driver failed on {tree}:\n{run.stderr[-3000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    if sys.argv[1:2] == ["--drive"]:
        drive(int(sys.argv[2]), int(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=300)
    parser.add_argument("--batch", type=int, default=1, help="records per batch (1: calls one after another)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tree", type=Path, action="append", help="a checkout whose cfnrun is counted (default: this one)")
    args = parser.parse_args()
    trees: List[Path] = args.tree or [ROOT]
    for tree in trees:  # what cfnrun caches for this interpreter and tree (its usable schemas) made first, outside the counts
        subprocess.run([_python(), __file__, "--drive", "0", "1"], env=_env(tree), cwd=tree.resolve(), check=True)
    print(f"instructions per record, {args.records} records in batches of {args.batch} (valgrind cachegrind)")
    for round_ in range(1, args.rounds + 1):
        for tree in trees:
            per_record = (counted(tree, args.records, args.batch) - counted(tree, 0, args.batch)) / args.records
            print(f"  round {round_}  {per_record / 1000:7.1f}k  {tree}", flush=True)


if __name__ == "__main__":
    main()
