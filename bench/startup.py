"""Cold start: cfnrun's own start-up beside the provider's bare import, measured in the same run.

Usage: python bench/startup.py [--rounds N] [--crashes N] [--edits N]

On a private copy of the note sample (its handlers import boto3 through the support
library), each round times, one after the other so a busy machine slows all alike:

- the bare import: ``python -c "import cfnrun_sample_note.handlers"`` (the physical limit);
- ``cfnrun --version``;
- a one-shot ``cfnrun invoke LIST --no-credentials`` (synchronous: one call, SUCCESS);
- ``cfnrun serve`` launch → the first LIST answered (the client knows the port and calls until
  the port takes the call, as a client started beside serve would; it includes waiting for
  TypeFunction's worker), with
  ``--no-reload`` and with reload on (the default).

Each figure is the median over rounds, printed beside the bare import's median as a ratio.
Then the first call after TypeFunction's worker is killed (SIGKILL while idle, so the call
finds it dead and needs another worker: a fork of the function's zygote), with crashes a
second apart and back to back, and the reload p50 from bench/reload_latency.py with saves
2 s apart and back to back.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

from benchlib import CFNRUN, LOCAL_STATE, NOTE_LIST_REQUEST, ROOT, children, free_port, timed

LIST_REQUEST = json.dumps(NOTE_LIST_REQUEST).encode()
# No AWS configuration to read: the figures do not depend on the machine's ~/.aws. Bytecode is
# cached (in a private folder, set in main) even where PYTHONDONTWRITEBYTECODE is set, as in an
# installed cfnrun: otherwise every run compiles cfnrun's modules and the provider's from source.
QUIET_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != "PYTHONDONTWRITEBYTECODE"},
    "CFNRUN_HISTORY": "off",
    "NO_COLOR": "1",
}


def quiet(args: List[str], cwd: Path) -> None:
    subprocess.run(args, cwd=cwd, env=QUIET_ENV, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def list_call(url: str) -> Dict[str, object]:
    """One LIST through the Lambda Invoke API, with the standard library (no client import to time)."""
    host, port = url.rsplit("/", 1)[-1].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        connection.request("POST", "/2015-03-31/functions/TypeFunction/invocations", body=LIST_REQUEST)
        response = connection.getresponse()
        body = json.loads(response.read())
    finally:
        connection.close()
    if response.status != 200 or body.get("status") != "SUCCESS":
        raise RuntimeError(f"LIST did not succeed: {response.status} {body}")
    return dict(body)


class Server:
    """``cfnrun serve`` on a port chosen here, so a client can call it before serve says anything (as a real one would)."""

    def __init__(self, project: Path, *args: str) -> None:
        port = free_port()
        self.process = subprocess.Popen(
            CFNRUN + ["serve", str(project), "--port", str(port), "--log-level", "WARNING", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=QUIET_ENV,
        )
        self.url = f"http://127.0.0.1:{port}"

    def first_answer(self) -> Dict[str, object]:
        """The first LIST answered: tried again while nothing listens yet (every 2 ms, for up to 60 s)."""
        deadline = time.monotonic() + 60
        while True:
            try:
                return list_call(self.url)
            except ConnectionRefusedError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("cfnrun serve never answered") from None
                time.sleep(0.002)

    def worker_pids(self, function: str = "TypeFunction") -> List[int]:
        """The function's workers (children of the server, or forks of its zygote), oldest first; not the zygote."""
        workers: List[int] = []
        parents = {self.process.pid}
        for level in range(2):  # the server's children, then the zygote's (whose command line is the zygote's)
            zygotes = set()
            for pid, command in children(parents):
                if f"AWS_LAMBDA_FUNCTION_NAME={function}\0".encode() not in _environ(pid):
                    continue
                if level == 0 and b"--zygote" in command:
                    zygotes.add(pid)
                else:
                    workers.append(pid)
            parents = zygotes
        return sorted(workers, key=_start_time)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def _start_time(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


def _environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def serve_to_first_answer(project: Path, *args: str) -> float:
    started = time.perf_counter()
    server = Server(project, *args)
    try:
        server.first_answer()
        return time.perf_counter() - started
    finally:
        server.stop()


def after_crash(project: Path, crashes: int, gap_s: float) -> List[float]:
    """Kill TypeFunction's idle worker, then time the next call (it needs another worker), ``gap_s`` after the last."""
    server = Server(project, "--workers", "1", "--no-reload")
    samples = []
    try:
        server.first_answer()
        time.sleep(1.0)  # the zygote imports the dependencies the first worker told
        for _ in range(crashes):
            time.sleep(gap_s)
            (worker,) = server.worker_pids()
            os.kill(worker, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while Path(f"/proc/{worker}").exists():  # gone once it is reaped
                if time.monotonic() > deadline:
                    raise RuntimeError(f"worker {worker} still there 10 s after SIGKILL")
                time.sleep(0.005)
            samples.append(timed(lambda: list_call(server.url)))
    finally:
        server.stop()
    return samples


def reload_p50(edits: int, gap_s: float) -> Optional[str]:
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "reload_latency.py"), "--edits", str(edits), "--gap", str(gap_s)],
        capture_output=True, text=True, check=True, env=QUIET_ENV,
    )
    found = re.search(r"p50 (\d+)", run.stdout)
    return found.group(1) if found else None


def row(name: str, seconds: float, bare: float, target: str) -> str:
    return f"| {name} | {seconds * 1000:.0f} | {seconds / bare:.2f}× | {target} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--crashes", type=int, default=15)
    parser.add_argument("--edits", type=int, default=10, help="saves for the reload figure (0 leaves it out)")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="cfnrun-startup-bench-"))
    QUIET_ENV["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    project = work / "note"
    shutil.copytree(ROOT / "samples" / "note", project, ignore=LOCAL_STATE)
    code_dir = project / "src"
    try:
        cases: Dict[str, Callable[[], float]] = {
            "bare": lambda: timed(lambda: quiet([sys.executable, "-c", "import cfnrun_sample_note.handlers"], code_dir)),
            "version": lambda: timed(lambda: quiet(CFNRUN + ["--version"], project)),
            "invoke": lambda: timed(lambda: quiet(CFNRUN + ["invoke", "LIST", "--no-credentials"], project)),
            "serve": lambda: serve_to_first_answer(project, "--no-reload"),
            "serve_reload": lambda: serve_to_first_answer(project),  # the default: the file watcher starts before it listens
        }
        for run in cases.values():  # once each, untimed: bytecode compiled, files in the page cache
            run()
        samples: Dict[str, List[float]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            for name, run in cases.items():
                samples[name].append(run())
        median = {name: statistics.median(values) for name, values in samples.items()}
        bare = median["bare"]
        crashes = {gap: after_crash(project, args.crashes, gap) for gap in (1.0, 0.0)}
        reloads = {gap: reload_p50(args.edits, gap) for gap in (2.0, 0.0)} if args.edits else {}
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"cold start on the note sample, median of {args.rounds} rounds (ms; ratio to the bare import in the same run)")
    print("| case | ms | × bare import | target |")
    print("| --- | ---: | ---: | --- |")
    print(f"| bare `python -c \"import cfnrun_sample_note.handlers\"` | {bare * 1000:.0f} | 1.00× | |")
    print(row("`cfnrun --version`", median["version"], bare, "≤ 0.3×"))
    print(row("`cfnrun invoke LIST --no-credentials` (one-shot)", median["invoke"], bare, "≤ 1.5×"))
    print(row("`cfnrun serve --no-reload` launch → first answer", median["serve"], bare, "≤ 1.5×"))
    print(row("`cfnrun serve` (reload on, the default) launch → first answer", median["serve_reload"], bare, "≤ 1.5×"))
    for gap, crash in crashes.items():
        p50 = statistics.median(crash)
        spacing = "1 s apart" if gap else "back to back"
        print(f"| first call after a worker crash ({spacing}), p50 of {len(crash)} | {p50 * 1000:.0f} | {p50 / bare:.2f}× | ≤ 50 ms |")
    for gap, reload in reloads.items():
        spacing = f"{gap:g} s apart" if gap else "back to back"
        print(f"| reload p50 ({args.edits} saves {spacing}, bench/reload_latency.py) | {reload} | | ≤ 100 ms |")


if __name__ == "__main__":
    main()
