"""``cfnrun serve`` against a bare in-process aiohttp endpoint, measured with the same clients.

Usage: python bench/serve_overhead.py [--calls N] [--seconds S] [--concurrency C]

Latency: N sequential warm invocations with a boto3 lambda client, p50/p99, for the
no-op provider and for the note sample's TypeFunction LIST, against four servers: the
in-process floor, a bare forwarder to one child process (the cost of the process hop
alone), cfnrun serve --contract off --no-reload and cfnrun serve with its defaults
(contract checks and reload on: the file watch's thread runs beside the server). The servers run at once and
take turns in batches of 50 calls; "added" and "ratio" are medians over those rounds of
the difference (and ratio) between a server's p50 and the in-process floor's p50 in the
same round, so the drift of a shared machine cancels out. Throughput: C concurrent
aiohttp clients calling the no-op handler for S seconds, cfnrun serve with 2 workers.
Both servers run as separate processes on 127.0.0.1; the client is this process.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import aiohttp
from benchlib import NOTE_LIST_REQUEST, Latency, free_port, note_sample_with_notes, private_copy
import boto3
from botocore import UNSIGNED
from botocore.config import Config

ROOT = Path(__file__).resolve().parents[1]
NOOP = ROOT / "bench" / "noop_project"
LIST_REQUEST = NOTE_LIST_REQUEST
TARGET_ADDED_MS = 0.5  # issue #12: cfnrun serve with default settings over the in-process floor
TARGET_RATIO = 1.5



def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listening on {port}")


def start_cfnrun(project: Path, workers: int, contract: str = "warn", reload: bool = False) -> Tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable, "-m", "cfnrun", "serve", str(project), "--port", str(port), "--workers", str(workers),
            "--log-level", "WARNING", "--contract", contract, "--reload" if reload else "--no-reload",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(port, process)
    return process, f"http://127.0.0.1:{port}"


def start_script(script: str, project: Path, *args: str) -> Tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, str(ROOT / "bench" / script), str(project), str(port), *args])
    wait_for_port(port, process)
    return process, f"http://127.0.0.1:{port}"


def start_inprocess(project: Path) -> Tuple[subprocess.Popen, str]:
    return start_script("inprocess_server.py", project)


def lambda_client(url: str) -> Any:
    return boto3.client(
        "lambda",
        endpoint_url=url,
        region_name="us-east-1",
        config=Config(signature_version=UNSIGNED, retries={"max_attempts": 0}),
    )


def latency(urls: List[str], event: Dict[str, Any], calls: int, batch: int = 50) -> List[Latency]:
    """Sequential invokes; the servers take turns in batches of ``batch`` calls."""
    body = json.dumps(event).encode()
    clients = [lambda_client(url) for url in urls]
    for client in clients:
        for _ in range(50):
            client.invoke(FunctionName="TypeFunction", Payload=body)["Payload"].read()
    results = [Latency() for _ in urls]
    for _ in range(max(1, calls // batch)):
        for client, result in zip(clients, results):
            samples = []
            for _ in range(batch):
                started = time.perf_counter()
                client.invoke(FunctionName="TypeFunction", Payload=body)["Payload"].read()
                samples.append((time.perf_counter() - started) * 1000)
            result.rounds.append(samples)
    return results


async def throughput(url: str, seconds: float, concurrency: int) -> float:
    target = f"{url}/2015-03-31/functions/TypeFunction/invocations"
    done = 0
    stop_at = time.monotonic() + seconds

    async def client(session: aiohttp.ClientSession) -> None:
        nonlocal done
        while time.monotonic() < stop_at:
            async with session.post(target, data=b'{"action": "LIST"}') as response:
                await response.read()
                assert response.status == 200
            done += 1

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        started = time.monotonic()
        await asyncio.gather(*(client(session) for _ in range(concurrency)))
        return done / (time.monotonic() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    print(f"latency: {args.calls} sequential boto3 invokes per case and server, ms")
    print("  bare hop: bench/forwarder_server.py, the process hop and nothing else")
    print("  isolated: cfnrun serve --contract off --no-reload; checked: the defaults (--contract warn, reload on)")
    print(
        f"{'case':30} {'in-process p50':>14} {'p99':>6} {'bare hop p50':>12} {'added':>6}"
        f" {'isolated p50':>12} {'p99':>6} {'added':>6} {'ratio':>5} {'checked p50':>11} {'added':>6} {'ratio':>5}"
    )
    verdicts = []
    noop = private_copy(NOOP, Path(tempfile.mkdtemp(prefix="cfnrun-bench-")))  # serve's history goes in the copy, not the checkout
    for name, project, event in (("no-op handler", noop, {"action": "LIST"}), ("note sample TypeFunction LIST", note_sample_with_notes(), LIST_REQUEST)):
        servers = [
            start_inprocess(project),
            start_script("forwarder_server.py", project),
            start_cfnrun(project, 2, "off"),
            start_cfnrun(project, 2, "warn", reload=True),
        ]
        try:
            floor, hop, isolated, checked = latency([url for _, url in servers], event, args.calls)
        finally:
            for process, _ in servers:
                process.terminate()
                process.wait()
        added, ratio = isolated.added_over(floor)
        checked_added, checked_ratio = checked.added_over(floor)
        verdicts.append((name, checked_added, checked_ratio))
        print(
            f"{name:30} {floor.p50():14.3f} {floor.p99():6.2f} {hop.p50():12.3f} {hop.added_over(floor)[0]:6.3f}"
            f" {isolated.p50():12.3f} {isolated.p99():6.2f} {added:6.3f} {ratio:5.2f}"
            f" {checked.p50():11.3f} {checked_added:6.3f} {checked_ratio:5.2f}"
        )
    for name, checked_added, checked_ratio in verdicts:
        met = checked_added <= TARGET_ADDED_MS and checked_ratio <= TARGET_RATIO
        print(
            f"target (default settings, ≤ +{TARGET_ADDED_MS:g} ms p50 and ≤ {TARGET_RATIO:g}× the floor) on {name}: "
            f"{'met' if met else 'MISSED'} (+{checked_added:.3f} ms, {checked_ratio:.2f}×)"
        )

    print(f"\nthroughput: no-op handler, {args.concurrency} concurrent aiohttp clients for {args.seconds:g} s, invocations/s")
    for name, start in (("in-process aiohttp", start_inprocess), ("cfnrun serve --workers 2", lambda p: start_cfnrun(p, 2, "off"))):
        process, url = start(noop)
        try:
            rate = asyncio.run(throughput(url, args.seconds, args.concurrency))
        finally:
            process.terminate()
            process.wait()
        print(f"{name:32} {rate:10.0f}")


if __name__ == "__main__":
    main()
