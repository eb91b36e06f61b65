"""Instructions a one-shot ``cfnrun invoke`` costs in cfnrun's own process: a figure a busy machine does not move.

Usage: python bench/invoke_start_instructions.py [--project samples/note] [--tree PATH] [-- INVOKE-ARGS...]

On a private copy of the project (default: the note sample), with the bench's user environment
(placeholder keys in it, ``benchlib.USER_ENV``) and ``PYTHONHASHSEED=0`` (counts then repeat to the
instruction), valgrind's cachegrind counts, without following children:

- the provider's bare import (``python -c "import PACKAGE.handlers"`` in its code folder): the baseline;
- cfnrun's process up to the moment its worker is spawned (the process ends as soon as the spawn
  returns): everything here is on the one-shot invoke's critical path, before the worker's own
  start;
- cfnrun's process up to the moment its worker is handed its spec (and told to load): the worker's
  interpreter, spawned first of all, starts meanwhile; its import of the provider follows this;
- cfnrun's whole process for ``cfnrun invoke ACTION INVOKE-ARGS`` (default ``LIST``), its worker left
  out: what it does after the spawn overlaps the worker's import, except what follows the answer.

``--tree`` runs another checkout's cfnrun (its folder on PYTHONPATH), to compare two. One untimed
run first compiles the bytecode and fills the template cache. Needs valgrind.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

from benchlib import USER_ENV, private_copy

ROOT = Path(__file__).resolve().parent.parent
# ``cfnrun invoke ARGS`` ending as soon as its worker is spawned (WHEN=spawn), or as soon as it is handed its spec
# (WHEN=handed): the worker is killed and reaped first. cfnrun spawns its worker's interpreter first of all
# (``runtime/waiting_worker.py``) and hands it the spec once it has read the project; a checkout from before
# that (``--tree``) spawns it with the spec, so there both moments are the spawn.
UP_TO = (
    "import os, sys\n"
    "def stop(process):\n"
    "    process.kill(); process.wait(); os._exit(0)\n"
    "try:\n"
    "    import cfnrun.runtime.waiting_worker as waiting\n"
    "except ImportError:\n"
    "    import cfnrun.runtime.spec as spec\n"
    "    started = spec.start_worker_process\n"
    "    spec.start_worker_process = lambda *args, **kwargs: stop(started(*args, **kwargs))\n"
    "else:\n"
    "    if os.environ['WHEN'] == 'spawn':\n"
    "        start = waiting.WaitingWorker.start\n"
    "        waiting.WaitingWorker.start = classmethod(lambda cls, *args: stop(start(*args).process))\n"
    "    else:\n"
    "        frame = waiting.WaitingWorker.sandbox_frame\n"
    "        waiting.WaitingWorker.sandbox_frame = lambda self, spec: (frame(self, spec), stop(self.process))\n"
    "sys.argv = ['cfnrun', 'invoke', *sys.argv[1:]]\n"
    "import runpy\n"
    "runpy.run_module('cfnrun', run_name='__main__', alter_sys=True)\n"
    "os._exit(3)  # no worker was spawned or handed its spec early\n"
)


def instructions(command: List[str], cwd: Path, env: Dict[str, str]) -> int:
    """``command``'s own instructions (valgrind's cachegrind, children not followed)."""
    run = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", *command],
        cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", run.stderr)
    if found is None:
        raise SystemExit(f"valgrind gave no count for {command}:\n{run.stderr[-2000:]}")
    if run.returncode == 3:
        raise SystemExit("cfnrun spawned (or handed its spec to) no worker early for this command line")
    return int(found.group(1).replace(",", ""))


def package_of(project: Path) -> Optional[str]:
    """The provider's package: the entrypoint's first name in .rpdk-config."""
    entrypoint = json.loads((project / ".rpdk-config").read_text(encoding="utf-8")).get("entrypoint", "")
    return entrypoint.rsplit(".", 1)[0] or None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", type=Path, default=ROOT / "samples" / "note")
    parser.add_argument("--tree", type=Path, help="another checkout whose cfnrun to count")
    parser.add_argument("invoke_args", nargs="*", default=["LIST"], help="after --: cfnrun invoke's arguments (default LIST)")
    args = parser.parse_args()
    env = {**USER_ENV, "PYTHONHASHSEED": "0"}
    if args.tree is not None:
        env["PYTHONPATH"] = str(args.tree.resolve())
    with tempfile.TemporaryDirectory() as work:
        project = private_copy(args.project.resolve(), Path(work))
        module = package_of(project)
        code = project / "src" if (project / "src").is_dir() else project
        invoke = [sys.executable, "-m", "cfnrun", "invoke", *args.invoke_args]
        subprocess.run(invoke, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # bytecode, caches
        bare = instructions([sys.executable, "-c", f"import {module}"], code, env) if module else 0
        interpreter = instructions([sys.executable, "-c", "pass"], project, env)
        spawn = instructions([sys.executable, "-c", UP_TO, *args.invoke_args], project, {**env, "WHEN": "spawn"})
        handed = instructions([sys.executable, "-c", UP_TO, *args.invoke_args], project, {**env, "WHEN": "handed"})
        whole = instructions(invoke, project, env)
    print(f"cfnrun invoke {' '.join(args.invoke_args)} on {args.project.name}" + (f" (cfnrun from {args.tree})" if args.tree else ""))
    rows = [
        ("the provider's bare import", bare),
        ("an interpreter's start (python -c pass)", interpreter),
        ("cfnrun's process up to its worker's spawn", spawn),
        ("... up to its worker's spec handed to it", handed),
        ("cfnrun's whole process (its worker left out)", whole),
    ]
    for what, count in rows:
        share = f"  {count / bare:.2f}× the bare import" if bare else ""
        print(f"  {what:46} {count / 1e6:9.1f} M{share}")


if __name__ == "__main__":
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    main()
