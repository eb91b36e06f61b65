"""The process running cloudformation-cli's suite for ``cfnrun test``, started before the endpoint it tests listens.

Importing cfn (pytest, boto3, its contract suite) takes about as long as starting serve; done one
after the other they add up. So the process starts first (``python -m cfnrun.app.cfn_offline
--arguments-from FD``): it imports cfn while serve starts, then waits for its arguments, which name
the endpoint's address. ``run`` sends them and waits for its status; ``abandon`` (a start that
failed, Ctrl-C) closes the pipe instead, and the process exits without running anything.
"""
from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Dict, List, Optional


class SuiteProcess:
    def __init__(self, process: "asyncio.subprocess.Process", arguments_end: int) -> None:
        self.process = process
        self._arguments_end: Optional[int] = arguments_end  # where its arguments go; None once sent or abandoned

    @classmethod
    async def start(cls, cwd: Path, env: Dict[str, str]) -> "SuiteProcess":
        reading, writing = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "cfnrun.app.cfn_offline", "--arguments-from", str(reading),
                cwd=str(cwd), env=env, pass_fds=(reading,),
            )
        except BaseException:
            os.close(writing)
            raise
        finally:
            os.close(reading)
        return cls(process, writing)

    async def run(self, arguments: List[str]) -> int:
        """Run cfn with ``arguments`` (cfn_offline's own options first); its exit status."""
        end = self._take_end()
        assert end is not None, "run once, never after abandon"
        with os.fdopen(end, "wb") as sending:
            sending.write(json.dumps(arguments).encode("utf-8"))
        return await self.process.wait()

    async def abandon(self) -> None:
        """Not run after all: it exits without running anything; wait until it has."""
        end = self._take_end()
        if end is not None:
            os.close(end)
        await self.process.wait()

    def _take_end(self) -> Optional[int]:
        end, self._arguments_end = self._arguments_end, None
        return end
