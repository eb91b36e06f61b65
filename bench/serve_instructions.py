"""Instructions per call of ``cfnrun serve``'s main process against the in-process floor's: a figure a busy machine does not move.

Usage: python bench/serve_instructions.py [--calls N] [--concurrency C] [--tree PATH] [--serve-arg ARG]...

Each server runs under valgrind's callgrind with counting off; after a warm-up (for serve: until
its history database exists, then 100 calls more, so the import of its late parts is never
counted), counting is turned on (``callgrind_control -i on``) for N no-op LIST calls from C
concurrent aiohttp clients, then dumped. ``cfnrun serve`` runs with its defaults (contract warn, history, reload) and
``--workers 2``; only its main process is counted (every thread of it: the event loop, the
history writer, the file watch), not the workers. The floor is bench/inprocess_server.py.
``--tree`` serves another checkout's cfnrun (its folder on PYTHONPATH), to compare two.

Under valgrind a call takes ~50 times as long, so what runs on a timer (the file watch's
5 ms step, the memory watch) weighs more per call than it does at full speed: compare
figures measured this way with each other, not with wall-clock ones. Needs valgrind.
"""
from __future__ import annotations

import argparse
import asyncio
import glob
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

import aiohttp
from benchlib import USER_ENV, free_port, private_copy
from serve_overhead import NOOP, ROOT, wait_for_port

INVOKE = "/2015-03-31/functions/TypeFunction/invocations"
READY_S = 600.0  # how long serve's late parts may take to load under valgrind


async def calls(url: str, count: int, concurrency: int) -> int:
    """``count`` calls from ``concurrency`` clients, each answered 200 or 429; how many were 429 (under valgrind a caller
    past the connection cap may wait longer than serve's 10 s for a place: with hundreds of clients, or while the late
    parts load)."""
    left = count
    throttled = 0

    async def client(session: aiohttp.ClientSession) -> None:
        nonlocal left, throttled
        while left > 0:
            left -= 1
            async with session.post(url + INVOKE, data=b'{"action": "LIST"}') as response:
                await response.read()
                assert response.status in (200, 429), response.status
                throttled += response.status == 429

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        await asyncio.gather(*(client(session) for _ in range(concurrency)))
    return throttled


def counted(
    command: List[str], env: Dict[str, str], port: int, count: int, concurrency: int, cwd: Optional[Path] = None, ready: Optional[Path] = None,
) -> Dict[str, int]:
    """Instructions per call of the process ``command`` starts, by thread (callgrind's numbering) and in all.

    ``ready``: a file the server writes once its late parts have loaded (serve's history database); counting starts
    only after it exists and more calls have warmed what loaded with it, so their import is never counted."""
    out = tempfile.mkdtemp(prefix="cfnrun-callgrind-")
    valgrind = [
        "valgrind", "--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes", "--trace-children=no",
        f"--callgrind-out-file={out}/callgrind.%p",
    ]
    process = subprocess.Popen(valgrind + command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process, timeout=600)
        url = f"http://127.0.0.1:{port}"
        asyncio.run(calls(url, 200, concurrency))  # warm: the workers' first calls, the late parts loaded
        if ready is not None:
            waited = time.monotonic()
            while not ready.exists() and time.monotonic() - waited < READY_S:
                asyncio.run(calls(url, concurrency, concurrency))
            asyncio.run(calls(url, 100, concurrency))
        subprocess.run(["callgrind_control", "-i", "on", str(process.pid)], check=True, capture_output=True)
        throttled = asyncio.run(calls(url, count, concurrency))
        time.sleep(0.5)  # the history writer's last batch
        subprocess.run(["callgrind_control", "-d", str(process.pid)], check=True, capture_output=True)
    finally:
        process.terminate()
        process.wait()
    threads: Dict[str, int] = {}
    for path in glob.glob(f"{out}/callgrind.{process.pid}.1-*"):  # the dump asked for, one file per thread
        totals = [int(line.split()[1]) for line in open(path) if line.startswith(("summary:", "totals:"))]
        threads[f"thread {path.rsplit('-', 1)[1]}"] = max(totals or [0]) // count
    threads["all"] = sum(threads.values())
    threads["throttled"] = throttled  # calls answered 429 among those counted
    return threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose cfnrun serve runs")
    parser.add_argument("--no-floor", action="store_true", help="count serve alone (its figure, not the floor's)")
    parser.add_argument("--serve-arg", action="append", default=[], help="one more argument for cfnrun serve (e.g. --no-reload)")
    args = parser.parse_args()
    env = {**USER_ENV, "PYTHONPATH": str(args.tree.resolve())}
    floor = {"all": 0}
    port = free_port()
    if not args.no_floor:
        floor = counted([sys.executable, str(ROOT / "bench" / "inprocess_server.py"), str(NOOP), str(port)], env, port, args.calls, args.concurrency)
    port = free_port()
    project = private_copy(NOOP, Path(tempfile.mkdtemp()))
    serve_command = [sys.executable, "-m", "cfnrun", "serve", str(project), "--port", str(port), "--workers", "2", "--log-level", "WARNING", *args.serve_arg]
    # Run from the tree: ``python -m`` puts the working folder ahead of PYTHONPATH, so from another checkout's
    # root serve would import that checkout's cfnrun.
    served = counted(serve_command, env, port, args.calls, args.concurrency, cwd=args.tree.resolve(), ready=project / ".cfnrun" / "history.sqlite3")
    print(f"instructions per call, {args.calls} no-op calls from {args.concurrency} concurrent clients (valgrind callgrind)")
    if floor["all"]:
        print(f"  in-process floor:           {floor['all'] / 1000:8.0f}k")
    ratio = f"{served['all'] / floor['all']:.1f}x; " if floor["all"] else ""
    print(f"  cfnrun serve main process:  {served['all'] / 1000:8.0f}k  ({ratio}tree {args.tree})")
    if served["throttled"]:
        print(f"    ({served['throttled']} of the {args.calls} counted calls were answered 429: no place within 10 s)")
    for thread, count in sorted(served.items()):
        if thread.startswith("thread") and count:
            print(f"    {thread}: {count / 1000:.0f}k")


if __name__ == "__main__":
    main()
