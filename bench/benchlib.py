"""Small pieces the benchmark scripts share."""
from __future__ import annotations

import shutil
import statistics
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator, List, Set, Tuple

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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


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
