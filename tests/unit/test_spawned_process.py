"""A spawned worker's process handle: its exit status is read off it as a plain value once the watch reaped it."""
from __future__ import annotations

import asyncio
import subprocess
import sys

from cfnrun.runtime.process import SpawnedProcess


def test_the_status_is_none_while_it_runs_and_the_reaped_one_after() -> None:
    async def run() -> None:
        popen = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read(); sys.exit(3)"], stdin=subprocess.PIPE)
        process = SpawnedProcess(popen)
        assert process.pid == popen.pid
        assert process.returncode is None
        assert popen.stdin is not None
        popen.stdin.close()  # the child may leave now
        assert await process.wait() == 3
        assert process.returncode == 3

    asyncio.run(run())
