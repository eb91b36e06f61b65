"""A one-shot ``cfnrun invoke`` readies what its first call needs while the worker imports the provider, not after."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

from conftest import PATIENCE_S

# Runs `cfnrun invoke ARGS` as the console script does, and records, when the worker's "loaded" reply is
# read, whether the contract checker is imported and the answer's wire model is built.
RECORD_READY = '''
import json, sys
from cfnrun.model import protocol
from cfnrun.runtime import process

seen = []
startup_reply = process.WorkerProcess._startup_reply

async def recording_reply(self, doing):
    reply = await startup_reply(self, doing)
    seen.append({
        "checker": "cfnrun.contract.checker" in sys.modules,
        "answer model": protocol.ProgressEvent.__pydantic_complete__,
    })
    return reply

process.WorkerProcess._startup_reply = recording_reply
sys.argv = ["cfnrun"] + sys.argv[1:]
from cfnrun.__main__ import _command as main
code = 0
try:
    main()
except SystemExit as exit:
    code = exit.code
print("READY", json.dumps(seen), code, flush=True)
'''


def test_the_checker_and_the_wire_models_are_ready_when_the_worker_has_loaded(sample: Callable[[str], Path], tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({"HOME": str(tmp_path), "AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1", "NO_COLOR": "1"})
    run = subprocess.run(
        [sys.executable, "-c", RECORD_READY, "invoke", "LIST"], cwd=str(sample("note")), capture_output=True, text=True,
        timeout=PATIENCE_S, env=env,
    )
    marker = [line for line in run.stdout.splitlines() if line.startswith("READY ")]
    assert marker, run.stdout + run.stderr
    seen, code = marker[-1][len("READY "):].rsplit(" ", 1)
    assert int(code) == 0 and "SUCCESS LIST" in run.stdout, run.stdout + run.stderr
    assert json.loads(seen) == [{"checker": True, "answer model": True}]
