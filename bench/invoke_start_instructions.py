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
  out: what it does after the spawn overlaps the worker's import, except what follows the answer;
- its worker, started alone as cfnrun starts it: up to where it waits for its spec, and from the spec
  to its ready reply (the provider imported); the ready reply then comes after about the later of
  (the spawn + the wait) and the hand-off, plus that (not with ``--tree``).

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


# The worker cfnrun invoke ARGS starts first, alone under valgrind (WORKER_COUNT=1: counted in a file, LOG): its
# interpreter started waiting for its spec, as cfnrun starts it (``runtime/waiting_worker.py``), then, with
# UNTIL=waiting, its channel closed (it leaves where it waits) or, with UNTIL=ready, handed the spec and told to load,
# its ready reply awaited, then its channel closed. It leaves by os._exit (the launch's sys.exit changed so): the
# interpreter's teardown, which a worker never reaches in a one-shot invoke (it is killed), is not counted.
WORKER = (
    "import os, subprocess, sys\n"
    "from cfnrun.app.early_start import early_spec\n"
    "from cfnrun.runtime import launch, spec as specs\n"
    "from cfnrun.runtime.worker.protocol import FRAME_HEADER, encode_frame\n"
    "spec = early_spec(sys.argv[1:])\n"
    "ends = launch.SandboxEnds()\n"
    "code = launch._LAUNCH.replace('sys.exit(worker.main(sys.argv))', 'worker.main(sys.argv); os._exit(0)')\n"
    "valgrind = ['valgrind', '--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null', '--log-file=' + os.environ['LOG']]\n"
    "environment = {**launch.started_environment(dict(os.environ)), launch.MARKER: ends.marker}\n"
    "command = [*valgrind, spec.python, '-u', '-c', code, launch.WORKER_SCRIPT, '--lifeline', str(ends.lifeline_read), '--await-sandbox']\n"
    "process = subprocess.Popen(command, stdin=ends.worker_end.fileno(), stdout=ends.log_write, stderr=ends.log_write,\n"
    "                           pass_fds=(ends.lifeline_read,), env=environment, start_new_session=True)\n"
    "ends.close_worker_ends()\n"
    "if os.environ['UNTIL'] == 'ready':\n"
    "    sandbox = {'type': 'sandbox', 'cwd': str(spec.cwd), 'environment': {**spec.env, launch.MARKER: ends.marker}, 'options': specs.worker_options(spec)}\n"
    "    ends.parent_end.sendall(encode_frame(sandbox) + specs.load_frame(spec, specs.new_log_stream_name()))\n"
    "    reply = ends.parent_end.makefile('rb').read(FRAME_HEADER.size)\n"
    "    assert reply, 'the worker left without a reply'\n"
    "ends.parent_end.close()  # the channel only: a closed lifeline would kill it before it leaves\n"
    "sys.exit(process.wait())\n"
)


def worker_instructions(argv: List[str], cwd: Path, env: Dict[str, str], until: str) -> int:
    """The instructions of the worker ``cfnrun invoke ARGV`` starts first, up to where it waits for its spec or its ready reply."""
    with tempfile.TemporaryDirectory() as logs:
        log = Path(logs) / "worker.log"
        run = subprocess.run([sys.executable, "-c", WORKER, *argv], cwd=cwd, env={**env, "LOG": str(log), "UNTIL": until},
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        found = re.search(r"I\s+refs:\s+([\d,]+)", log.read_text() if log.exists() else "")
        if run.returncode != 0 or found is None:
            raise SystemExit(f"the worker could not be counted ({until}):\n{run.stderr[-2000:]}")
        return int(found.group(1).replace(",", ""))


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
        waiting = ready = 0
        if args.tree is None:
            waiting = worker_instructions(args.invoke_args, project, env, "waiting")
            ready = worker_instructions(args.invoke_args, project, env, "ready")
    print(f"cfnrun invoke {' '.join(args.invoke_args)} on {args.project.name}" + (f" (cfnrun from {args.tree})" if args.tree else ""))
    rows = [
        ("the provider's bare import", bare),
        ("an interpreter's start (python -c pass)", interpreter),
        ("cfnrun's process up to its worker's spawn", spawn),
        ("... up to its worker's spec handed to it", handed),
        ("cfnrun's whole process (its worker left out)", whole),
    ]
    if waiting:
        rows += [
            ("its worker, up to waiting for its spec", waiting),
            ("its worker, from the spec to its ready reply", ready - waiting),
            ("so its ready reply, after about", max(spawn + waiting, handed) + ready - waiting),
        ]
    for what, count in rows:
        share = f"  {count / bare:.2f}× the bare import" if bare else ""
        print(f"  {what:46} {count / 1e6:9.1f} M{share}")


if __name__ == "__main__":
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    main()
