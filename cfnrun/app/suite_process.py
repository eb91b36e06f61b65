"""The process running cloudformation-cli's suite for ``cfnrun test``, started before the endpoint it tests listens.

Importing cfn (pytest, boto3, its contract suite) takes about as long as starting serve; done one
after the other they add up. So the process starts first (``python -m cfnrun.app.cfn_offline
--arguments-from FD``): it imports cfn while serve starts, then waits for its arguments, which name
the endpoint's address. ``run`` sends them and waits for its status; ``abandon`` (a start that
failed, Ctrl-C) closes the pipe instead, and the process exits without running anything.
``cfnrun test`` starts it as soon as it has read the project, before serve's modules load.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

from cfnrun.model.errors import CfnrunError


def require_cloudformation_cli() -> None:
    for module, package in (("rpdk.core", "cloudformation-cli"), ("rpdk.python", "cloudformation-cli-python-plugin")):
        if importlib.util.find_spec(module.split(".")[0]) is None or importlib.util.find_spec(module) is None:
            raise CfnrunError(f"cfnrun test runs cloudformation-cli's suite: pip install 'cfnrun[contract]' (missing {package})")


def suite_environment(region: str, use_aws: bool) -> Dict[str, str]:
    """The suite's environment: this one, in ``region``; without ``use_aws``, placeholder keys and no profile."""
    from cfnrun.invoker.placeholder_keys import placeholder_variables

    env = dict(os.environ)
    env["AWS_DEFAULT_REGION"] = env["AWS_REGION"] = region
    if not use_aws:
        for key in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
            env.pop(key, None)
        env.update(placeholder_variables())
    return env


class SuiteProcess:
    def __init__(self, process: "subprocess.Popen[bytes]", arguments_end: int) -> None:
        self.process = process
        self._arguments_end: Optional[int] = arguments_end  # where its arguments go; None once sent or abandoned

    @classmethod
    def start(cls, cwd: Path, env: Dict[str, str]) -> "SuiteProcess":
        """Started, importing cfn: ``cloudformation-cli`` is installed (``require_cloudformation_cli``)."""
        reading, writing = os.pipe()
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "cfnrun.app.cfn_offline", "--arguments-from", str(reading)],
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
        return await _waited(self.process)

    async def abandon(self) -> None:
        """Not run after all: it exits without running anything; wait until it has."""
        self.close()
        await _waited(self.process)

    def close(self) -> None:
        """Its arguments will not come (unless sent already): then it exits without running anything."""
        end = self._take_end()
        if end is not None:
            os.close(end)

    def _take_end(self) -> Optional[int]:
        end, self._arguments_end = self._arguments_end, None
        return end


async def _waited(process: "subprocess.Popen[bytes]") -> int:
    """The process's exit status, waited for on a thread. asyncio is imported here, not with this module: ``cfnrun test``
    imports it before it starts the process, and asyncio's import (~40 ms) would come first."""
    import asyncio

    return await asyncio.to_thread(process.wait)
