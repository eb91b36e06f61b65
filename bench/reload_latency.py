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
import threading
import time
from pathlib import Path

import boto3
from benchlib import LOCAL_STATE, NOTE_LIST_REQUEST, ROOT, children, free_port
from botocore import UNSIGNED
from botocore.config import Config

MARKER = "status=OperationStatus.SUCCESS,\n        resourceModels="
LIST_REQUEST = json.dumps(NOTE_LIST_REQUEST).encode()


def zygotes(pid: int) -> int:
    """How many of ``pid``'s children are zygotes (``worker.py --zygote``)."""
    return sum(b"--zygote" in command for _, command in children({pid}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--gap", type=float, default=2.0, help="seconds between an answered edit and the next save")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="cfnrun-reload-bench-"))
    project = work / "note"
    shutil.copytree(ROOT / "samples" / "note", project, ignore=LOCAL_STATE)
    handlers = project / "src" / "cfnrun_sample_note" / "handlers.py"
    original = handlers.read_text()
    assert MARKER in original, "the note sample's LIST handler changed; update MARKER"
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "cfnrun", "serve", str(project), "--port", str(port), "--log-level", "WARNING"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert server.stdout is not None
        for line in server.stdout:
            if "reload: watching" in line:
                break
        # Keep reading what it prints (a line per call): a full pipe would stop the server mid-write.
        threading.Thread(target=server.stdout.read, daemon=True).start()
        client = boto3.client(
            "lambda",
            endpoint_url=f"http://127.0.0.1:{port}",
            region_name="us-east-1",
            config=Config(signature_version=UNSIGNED, retries={"max_attempts": 0}),
        )

        def message() -> str:
            return json.loads(client.invoke(FunctionName="TypeFunction", Payload=LIST_REQUEST)["Payload"].read())["message"]

        message()
        # Measure serve's steady state: each function's zygote (which forks reload workers) has started and
        # imported the provider's dependencies (one untimed edit). A save in serve's first second or so
        # reloads into a freshly spawned process instead (~0.4 s here).
        deadline = time.monotonic() + 30
        while zygotes(server.pid) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        samples = []
        for edit in range(0, args.edits + 1):
            time.sleep(args.gap)
            expected = f"edit {edit}"
            started = time.perf_counter()
            handlers.write_text(original.replace(MARKER, f'status=OperationStatus.SUCCESS, message="{expected}",\n        resourceModels='))
            while message() != expected:
                time.sleep(0.002)
            if edit:
                samples.append((time.perf_counter() - started) * 1000)
        samples.sort()
        print(f"save → first call with the new behaviour, {args.edits} edits of the note sample (imports boto3), ms")
        print(f"p50 {statistics.median(samples):.0f}   p95 {samples[int(len(samples) * 0.95) - 1]:.0f}   max {samples[-1]:.0f}")
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)

    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import cfnrun_sample_note.handlers"], cwd=ROOT / "samples/note/src", check=True)
    print(f"for comparison, a fresh Python process importing the provider: {(time.perf_counter() - started) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
