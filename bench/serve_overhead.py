"""``cfnrun serve`` against a bare in-process aiohttp endpoint, measured with the same clients.

Usage: python bench/serve_overhead.py [--calls N] [--seconds S] [--concurrency C]

Latency: N sequential warm invocations with a boto3 lambda client, p50/p99, for the
no-op provider and for the note sample's TypeFunction LIST; both servers run at once
and take turns in small batches, so both see the same machine. Throughput: C concurrent
aiohttp clients calling the no-op handler for S seconds, cfnrun serve with 2 workers.
Both servers run as separate processes on 127.0.0.1; the client is this process.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import aiohttp
from benchlib import NOTE_LIST_REQUEST, free_port
import boto3
from botocore import UNSIGNED
from botocore.config import Config

ROOT = Path(__file__).resolve().parents[1]
NOOP = ROOT / "bench" / "noop_project"
NOTE = ROOT / "samples" / "note"
LIST_REQUEST = NOTE_LIST_REQUEST



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


def start_cfnrun(project: Path, workers: int, contract: str = "warn") -> Tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable, "-m", "cfnrun", "serve", str(project), "--port", str(port), "--workers", str(workers),
            "--log-level", "WARNING", "--contract", contract, "--no-reload",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(port, process)
    return process, f"http://127.0.0.1:{port}"


def start_inprocess(project: Path) -> Tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, str(ROOT / "bench" / "inprocess_server.py"), str(project), str(port)])
    wait_for_port(port, process)
    return process, f"http://127.0.0.1:{port}"


def lambda_client(url: str) -> Any:
    return boto3.client(
        "lambda",
        endpoint_url=url,
        region_name="us-east-1",
        config=Config(signature_version=UNSIGNED, retries={"max_attempts": 0}),
    )


def latency(urls: List[str], event: Dict[str, Any], calls: int, rounds: int = 10) -> List[Tuple[float, float]]:
    """p50/p99 per server; servers take turns in small batches so both see the same machine."""
    body = json.dumps(event).encode()
    clients = [lambda_client(url) for url in urls]
    for client in clients:
        for _ in range(50):
            client.invoke(FunctionName="TypeFunction", Payload=body)["Payload"].read()
    samples: List[List[float]] = [[] for _ in urls]
    for _ in range(rounds):
        for client, collected in zip(clients, samples):
            for _ in range(max(1, calls // rounds)):
                started = time.perf_counter()
                client.invoke(FunctionName="TypeFunction", Payload=body)["Payload"].read()
                collected.append((time.perf_counter() - started) * 1000)
    results = []
    for collected in samples:
        collected.sort()
        results.append((statistics.median(collected), collected[min(len(collected) - 1, int(len(collected) * 0.99))]))
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
    print("  worker isolation: cfnrun serve --contract off; with checks: the default --contract warn")
    print(
        f"{'case':32} {'in-process p50':>14} {'p99':>7} {'isolated p50':>12} {'p99':>7} {'added':>7} {'ratio':>6}"
        f" {'checked p50':>11} {'added':>7}"
    )
    for name, project, event in (("no-op handler", NOOP, {"action": "LIST"}), ("note sample TypeFunction LIST", NOTE, LIST_REQUEST)):
        servers = [start_inprocess(project), start_cfnrun(project, 2, "off"), start_cfnrun(project, 2, "warn")]
        try:
            (base50, base99), (run50, run99), (checked50, _) = latency([url for _, url in servers], event, args.calls)
        finally:
            for process, _ in servers:
                process.terminate()
                process.wait()
        print(
            f"{name:32} {base50:14.3f} {base99:7.3f} {run50:12.3f} {run99:7.3f} {run50 - base50:7.3f} {run50 / base50:6.2f}"
            f" {checked50:11.3f} {checked50 - base50:7.3f}"
        )

    print(f"\nthroughput: no-op handler, {args.concurrency} concurrent aiohttp clients for {args.seconds:g} s, invocations/s")
    for name, start in (("in-process aiohttp", start_inprocess), ("cfnrun serve --workers 2", lambda p: start_cfnrun(p, 2, "off"))):
        process, url = start(NOOP)
        try:
            rate = asyncio.run(throughput(url, args.seconds, args.concurrency))
        finally:
            process.terminate()
            process.wait()
        print(f"{name:32} {rate:10.0f}")


if __name__ == "__main__":
    main()
