"""Small pieces the benchmark scripts share."""
from __future__ import annotations

import os
import re
import shutil
import statistics
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

ROOT = Path(__file__).resolve().parents[1]
# Left out of private copies of a sample: state a local run left in the tree (handler state, history, bytecode).
LOCAL_STATE = shutil.ignore_patterns(".state", ".cfnrun", "__pycache__")

NOTE_LIST_REQUEST: Dict[str, Any] = {
    "action": "LIST",
    "awsAccountId": "123456789012",
    "bearerToken": "bench",
    "region": "us-east-1",
    "resourceType": "Cfnrun::Sample::Note",
    "requestData": {"resourceProperties": {}},
}


class StubContext:
    """The Lambda context fields the support library reads, for in-process baselines."""

    function_name = "TypeFunction"
    aws_request_id = "bench"

    def get_remaining_time_in_millis(self) -> int:
        return 60000


def children(parents: Set[int]) -> Iterator[Tuple[int, bytes]]:
    """The processes whose parent is one of ``parents``, with their command lines (Linux /proc)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):  # gone meanwhile
            continue
        if parent in parents:
            yield int(entry.name), command


CFNRUN = [sys.executable, "-m", "cfnrun"]
# A user's environment: placeholder credentials in the environment, so cfnrun resolves credentials
# as it does on a machine with an AWS configuration (its default path), and nothing from this machine's.
USER_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k not in ("CFNRUN_HISTORY", "PYTHONDONTWRITEBYTECODE")},
    "AWS_ACCESS_KEY_ID": "AKIDCFNRUNBENCH",
    "AWS_SECRET_ACCESS_KEY": "cfnrun-bench",
    "AWS_DEFAULT_REGION": "us-east-1",
    "NO_COLOR": "1",
}
# serve's console line for one call ends "<status> <duration> ms [<request id>]"
CALL_LINE = re.compile(r" → .* ([0-9.]+) ms \[[0-9a-f-]+\]$")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def timed(run: Callable[[], object]) -> float:
    """Seconds ``run`` took."""
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def private_copy(source: Path, work: Path) -> Path:
    """A copy of a sample or fixture in ``work``, without the state a local run left in it."""
    copy = work / source.name
    shutil.copytree(source, copy, ignore=LOCAL_STATE)
    return copy


class Serve:
    """``cfnrun serve`` on a free port, started and waited for until it says it listens.

    Everything it prints afterwards is kept in ``lines`` (read on a thread: a full pipe would
    stop the server mid-write).
    """

    def __init__(self, project: Path, *args: str, env: Optional[Dict[str, str]] = None, ready: str = "listening on") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            CFNRUN + ["serve", str(project), "--port", str(self.port), "--log-level", "WARNING", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env if env is not None else USER_ENV,
        )
        self.lines: List[str] = []
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            if ready in line:
                break
        else:
            raise SystemExit(f"cfnrun serve ended before it said {ready!r}:\n" + "\n".join(self.lines[-20:]))
        threading.Thread(target=self._keep_reading, daemon=True).start()

    def _keep_reading(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def invocation_seconds(self, since: int = 0) -> Tuple[int, float]:
        """How many calls serve reported after line ``since``, and their summed durations (handler and worker hop)."""
        found = [float(match.group(1)) for line in self.lines[since:] if (match := CALL_LINE.search(line))]
        return len(found), sum(found) / 1000

    def settle(self, quiet_s: float = 0.2, most_s: float = 60.0) -> None:
        """Until serve and every process under it have used no CPU for ``quiet_s`` (looked at every 20 ms): what a
        warm-up started in the background (the template lint of its stack, which waits for a pause in the handler
        calls; a spare worker's imports) is done before a measured run starts."""
        deadline = time.monotonic() + most_s
        used, quiet_since = -1.0, time.monotonic()
        while time.monotonic() < deadline:
            now_used = sum(cpu_seconds(pid) for pid in process_tree(self.process.pid))
            if now_used != used:
                used, quiet_since = now_used, time.monotonic()
            elif time.monotonic() - quiet_since >= quiet_s:
                return
            time.sleep(0.02)
        raise SystemExit(f"cfnrun serve kept using CPU for {most_s:g} s after its warm-up")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


_TICKS = os.sysconf("SC_CLK_TCK")


def process_tree(pid: int) -> List[int]:
    """``pid`` and every process under it (Linux /proc)."""
    found, parents = [pid], {pid}
    while True:
        more = [child for child, _ in children(parents) if child not in found]
        if not more:
            return found
        found += more
        parents = set(more)


def cpu_seconds(pid: int) -> float:
    """User and system CPU time ``pid`` has used (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICKS


def note_sample_with_notes(count: int = 3) -> Path:
    """A copy of samples/note whose store holds ``count`` notes, so a LIST returns models.

    The notes are created with ``cfnrun invoke CREATE``; the copy keeps the benchmark
    independent of whatever the checkout's own sample store holds.
    """
    copy = Path(tempfile.mkdtemp(prefix="cfnrun-bench-")) / "note"
    shutil.copytree(ROOT / "samples" / "note", copy, ignore=LOCAL_STATE)
    for _ in range(count):
        subprocess.run(
            [sys.executable, "-m", "cfnrun", "invoke", "CREATE", "requests/create.json", "--json", "--no-credentials"],
            cwd=copy,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return copy


class Latency:
    """One server's samples, kept per round so servers can be compared round by round."""

    def __init__(self) -> None:
        self.rounds: List[List[float]] = []

    @property
    def samples(self) -> List[float]:
        return sorted(sample for batch in self.rounds for sample in batch)

    def p50(self) -> float:
        return statistics.median(self.samples)

    def p99(self) -> float:
        ordered = self.samples
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]

    def added_over(self, floor: "Latency") -> Tuple[float, float]:
        """Median over rounds of (this p50 - floor p50) and of (this p50 / floor p50).

        Pairing each round with the floor's round just before it cancels the drift of a
        shared virtual machine, which moves both servers alike within a round.
        """
        pairs = [(statistics.median(mine), statistics.median(theirs)) for mine, theirs in zip(self.rounds, floor.rounds)]
        return statistics.median(a - b for a, b in pairs), statistics.median(a / b for a, b in pairs)
