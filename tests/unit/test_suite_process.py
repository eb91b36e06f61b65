"""``app/suite_process.py``: cfn's process starts before its arguments are known, then runs them, or nothing."""
from __future__ import annotations

import asyncio
import os
from pathlib import Path

from cfnrun.app.suite_process import SuiteProcess


def _started(cwd: Path) -> SuiteProcess:
    return SuiteProcess.start(cwd, dict(os.environ))


def test_the_arguments_sent_later_are_the_ones_cfn_runs(tmp_path: Path, capfd: "object") -> None:
    async def run() -> int:
        suite = _started(tmp_path)
        try:
            return await suite.run(["--version"])
        finally:
            await suite.abandon()  # after a run: nothing more to do

    assert asyncio.run(run()) == 0
    out, _ = capfd.readouterr()  # type: ignore[attr-defined]
    assert out.startswith("cfn ")


def test_abandoned_it_runs_nothing_and_is_gone(tmp_path: Path, capfd: "object") -> None:
    async def abandon() -> "int | None":
        suite = _started(tmp_path)
        await suite.abandon()
        return suite.process.returncode

    assert asyncio.run(abandon()) == 0
    out, err = capfd.readouterr()  # type: ignore[attr-defined]
    assert (out, err) == ("", "") and not (tmp_path / "rpdk.log").exists()
