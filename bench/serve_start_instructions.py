"""Instructions one ``cfnrun serve`` start costs, per process, until serve is idle: a figure a busy machine does not move.

Usage: python bench/serve_start_instructions.py [--project samples/note] [--tree PATH] [-- SERVE-ARGS...]

``cfnrun serve PROJECT --port 0`` (defaults: contract warn, history, reload) runs under valgrind's
callgrind with ``--trace-children=yes``, so the warm workers it spawns are counted too (a zygote's
forks are followed as well: each process dumps its count before it forks, so a fork's count is its
own, not its parent's up to the fork as well). Once serve prints its "listening" line, the process tree is
watched until it is idle (its CPU ticks grow by less than a tenth of a core over three
seconds in a row: what serve does after listening, loading what calls will need, is counted),
then every process of the tree dumps its count (``callgrind_control -d``), and serve is stopped.
Printed: instructions per process (serve's main process, each worker by its command, a zygote's
forks as such), and the total.
``--tree`` runs another checkout's cfnrun (its folder on PYTHONPATH), to compare two.

Under valgrind a start takes ~30-50 times as long; the counts do not depend on it. Needs valgrind.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List, Tuple

from benchlib import USER_ENV, children, private_copy

ROOT = Path(__file__).resolve().parent.parent
IDLE_TICKS = 10  # per second: a tenth of a core (the clock tick is 1/100 s)
IDLE_SECONDS = 3
# ``python -m cfnrun serve ARGS``, with the workers' import budget (30 s) raised: under valgrind a
# provider's import takes ~30 times as long.
LAUNCH = (
    "import runpy, sys\n"
    "from cfnrun.runtime.spec import WorkerSpec\n"
    "WorkerSpec.__init__.__defaults__ = tuple(600.0 if d == 30.0 else d for d in WorkerSpec.__init__.__defaults__)\n"
    "sys.argv = ['cfnrun', 'serve', *sys.argv[1:]]\n"
    "runpy.run_module('cfnrun', run_name='__main__', alter_sys=True)\n"
)


def tree(pid: int) -> List[int]:
    """``pid`` and every process under it."""
    found = [pid]
    layer = {pid}
    while layer:
        layer = {child for child, _ in children(layer)}
        found.extend(sorted(layer))
    return found


def parent_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError):
        return 0


def ticks(pids: List[int]) -> int:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total


def command_of(pid: int) -> str:
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    text = [w.decode(errors="replace") for w in words if w]
    return " ".join(text[-4:])[-90:]


def wait_idle(pid: int, timeout_s: float = 900) -> None:
    deadline = time.monotonic() + timeout_s
    quiet = 0
    before = ticks(tree(pid))
    while quiet < IDLE_SECONDS:
        if time.monotonic() > deadline:
            raise SystemExit("serve did not become idle")
        time.sleep(1)
        now = ticks(tree(pid))
        quiet = quiet + 1 if now - before < IDLE_TICKS else 0
        before = now


def counted(args: List[str], env: Dict[str, str]) -> List[Tuple[str, int]]:
    out = tempfile.mkdtemp(prefix="cfnrun-start-callgrind-")
    valgrind = [
        "valgrind", "--tool=callgrind", "--trace-children=yes", "--dump-instr=no", "--compress-strings=no",
        "--dump-before=*fork",  # a forked child's count then starts from zero (it would start from its parent's)
        f"--callgrind-out-file={out}/callgrind.%p",
    ]
    command = valgrind + [sys.executable, "-c", LAUNCH, *args]
    # Started in its output folder: ``python -c`` puts the current folder first on sys.path, where a checkout's
    # own cfnrun would shadow ``--tree``'s.
    process = subprocess.Popen(command, env=env, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    labels: Dict[int, str] = {}
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if "listening on" in line:
                break
        else:
            raise SystemExit("serve ended before listening")
        threading.Thread(target=process.stdout.read, daemon=True).start()  # what it prints next: never a full pipe
        wait_idle(process.pid)
        for pid in tree(process.pid):
            labels[pid] = "serve (main process)" if pid == process.pid else command_of(pid)
            parent = parent_of(pid)
            if parent in labels and labels[parent] == labels[pid]:  # not exec'd: a fork (of a zygote)
                labels[pid] = f"fork of [{parent}]"
            subprocess.run(["callgrind_control", "-d", str(pid)], capture_output=True)
    finally:
        process.terminate()
        try:
            process.wait(timeout=300)
        except subprocess.TimeoutExpired:
            process.kill()
    rows: List[Tuple[str, int]] = []
    for pid, label in labels.items():
        parts = list(Path(out).glob(f"callgrind.{pid}.*"))  # one per fork it made, then callgrind_control's (not the exit's)
        if not parts:
            continue
        count = 0
        for dump in parts:
            totals = [int(line.split()[1]) for line in dump.read_text().splitlines() if line.startswith(("summary:", "totals:"))]
            count += max(totals or [0])
        rows.append((f"{label} [{pid}]", count))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", default=str(ROOT / "samples" / "note"))
    parser.add_argument("--tree", type=Path, help="another checkout whose cfnrun to run")
    parser.add_argument("serve_args", nargs="*", help="more arguments for cfnrun serve (after --)")
    options = parser.parse_args()
    env = dict(USER_ENV)
    if options.tree is not None:
        env["PYTHONPATH"] = str(options.tree.resolve())
    with tempfile.TemporaryDirectory(prefix="cfnrun-start-") as work:
        project = private_copy(Path(options.project), Path(work))  # its history and state stay out of the sample
        rows = counted([str(project), "--port", "0", *options.serve_args], env)
    for label, count in rows:
        print(f"{count:>15,}  {label}")
    print(f"{sum(count for _, count in rows):>15,}  all")


if __name__ == "__main__":
    main()
