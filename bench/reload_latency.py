"""Time from saving a handler file to the first call that returns the new behaviour.

Usage: python bench/reload_latency.py [--edits N] [--gap SECONDS]

Serves a private copy of the note sample (its handlers import boto3 through the
support library) with ``cfnrun serve``, waits until each function's zygote runs (Linux;
serve's steady state) and makes one untimed edit, then N times: rewrite the LIST handler's
message (``--gap`` seconds after the last one answered; 0 for back-to-back saves), and
call LIST through boto3 until the new message comes back. Prints p50,
p95 and the slowest edit, and, for comparison, what starting a fresh worker that
imports the provider costs on this machine.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List

import boto3
from benchlib import NOTE_LIST_REQUEST, ROOT, Serve, children, private_copy, timed
from botocore import UNSIGNED
from botocore.config import Config

MARKER = "status=OperationStatus.SUCCESS,\n        resourceModels="
LIST_REQUEST = json.dumps(NOTE_LIST_REQUEST).encode()


def zygotes(pid: int) -> int:
    """How many of ``pid``'s children are zygotes (``worker.py --zygote``)."""
    return sum(b"--zygote" in command for _, command in children({pid}))


def save_to_live(edits: int, gap_s: float) -> List[float]:
    """Milliseconds from each of ``edits`` saves to the first LIST answering with the new code, sorted."""
    work = Path(tempfile.mkdtemp(prefix="cfnrun-reload-bench-"))
    project = private_copy(ROOT / "samples" / "note", work)
    handlers = project / "src" / "cfnrun_sample_note" / "handlers.py"
    original = handlers.read_text()
    assert MARKER in original, "the note sample's LIST handler changed; update MARKER"
    server = Serve(project, ready="reload: watching")
    try:
        client = boto3.client(
            "lambda",
            endpoint_url=server.url,
            region_name="us-east-1",
            config=Config(signature_version=UNSIGNED, retries={"max_attempts": 0}),
        )

        def message() -> str:
            return str(json.loads(client.invoke(FunctionName="TypeFunction", Payload=LIST_REQUEST)["Payload"].read())["message"])

        message()
        # Measure serve's steady state: each function's zygote (which forks reload workers) has started and
        # imported the provider's dependencies (one untimed edit). A save in serve's first second or so
        # reloads into a freshly spawned process instead (~0.4 s here).
        deadline = time.monotonic() + 30
        while zygotes(server.process.pid) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        samples = []
        for edit in range(0, edits + 1):
            time.sleep(gap_s)
            expected = f"edit {edit}"
            started = time.perf_counter()
            handlers.write_text(original.replace(MARKER, f'status=OperationStatus.SUCCESS, message="{expected}",\n        resourceModels='))
            while message() != expected:
                time.sleep(0.002)
            if edit:
                samples.append((time.perf_counter() - started) * 1000)
        return sorted(samples)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


def fresh_import_ms() -> float:
    """A fresh Python process importing the note provider, for comparison."""
    return timed(lambda: subprocess.run([sys.executable, "-c", "import cfnrun_sample_note.handlers"], cwd=ROOT / "samples/note/src", check=True)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--gap", type=float, default=2.0, help="seconds between an answered edit and the next save")
    args = parser.parse_args()

    samples = save_to_live(args.edits, args.gap)
    print(f"save → first call with the new behaviour, {args.edits} edits of the note sample (imports boto3), ms")
    print(f"p50 {statistics.median(samples):.0f}   p95 {samples[int(len(samples) * 0.95) - 1]:.0f}   max {samples[-1]:.0f}")
    print(f"for comparison, a fresh Python process importing the provider: {fresh_import_ms():.0f} ms")


if __name__ == "__main__":
    main()
