"""TestType on serve: cloudformation-cli's contract suite (``cfnrun test``) run on a registered version's own unpacked code.

The suite runs in a child process (``cfnrun test --virtual-clock``, with serve's AWS endpoint), in a
project made once in the version's folder (``test/``): its ``.rpdk-config``, its schema under the
name cfn gives it, its contract test inputs and a hook's target schemas, and ``src`` the unpacked
handler bundle. Its outcome is TypeTestsStatus and a TypeTestsStatusDescription naming the failed
tests; its output is what LogDeliveryBucket receives.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path
from typing import Optional, Tuple

from cfnrun.app.contract_results import RESULTS_FILE, failed_tests
from cfnrun.model.project import RPDK_CONFIG, schema_file_name
from cfnrun.registry.package import SCHEMA
from cfnrun.registry.store import TypeVersion

TEST_PROJECT = "test"
SHARED = ("inputs", "target-schemas", "target-info.json")  # what the suite reads offline, from the package as it came


def test_project(version: TypeVersion) -> Path:
    """The version as a project ``cfnrun test`` runs; made on first use."""
    package = version.package
    project = package.root / TEST_PROJECT
    if not project.is_dir():
        project.mkdir()
        shutil.copyfile(package.root / RPDK_CONFIG, project / RPDK_CONFIG)
        shutil.copyfile(package.root / SCHEMA, project / schema_file_name(package.type_name))
        (project / "src").symlink_to(package.code, target_is_directory=True)
        for shared in SHARED:
            if (package.root / shared).exists():
                (project / shared).symlink_to(package.root / shared, target_is_directory=(package.root / shared).is_dir())
    return project


async def run_type_tests(version: TypeVersion, aws_endpoint: Optional[str]) -> Tuple[bool, str, bytes]:
    """Whether the suite passed, the TypeTestsStatusDescription, and the suite's output with the handlers' log."""
    project = await asyncio.to_thread(test_project, version)
    command = [sys.executable, "-m", "cfnrun", "test", "--virtual-clock"]
    if aws_endpoint:
        command += ["--aws-endpoint", aws_endpoint]
    process = await asyncio.create_subprocess_exec(
        *command, cwd=str(project), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env={**os.environ, "NO_COLOR": "1"}
    )
    try:
        output, _ = await process.communicate()
    except asyncio.CancelledError:  # serve stops: so does the suite
        process.kill()
        await process.wait()
        raise
    handlers_log = project / ".cfnrun" / "test.log"
    log = output + (handlers_log.read_bytes() if handlers_log.is_file() else b"")
    failed = [line.split()[0] for line in failed_tests(project / ".cfnrun" / RESULTS_FILE)[1:] if line.startswith("  ") and "(" in line]
    if process.returncode == 0:
        return True, "All contract tests passed.", log
    if failed:
        return False, f"{len(failed)} contract test(s) failed: {', '.join(failed)}", log
    last = output.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
    return False, f"The contract tests did not run to the end: {last[0]}", log
