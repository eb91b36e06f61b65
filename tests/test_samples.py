"""The bundled samples are what users copy: they hold up under concurrent workers and rerun cleanly."""
from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, List

from conftest import LOCAL_STATE, ROOT, SAMPLES, ServerProcess, cfnrun, result_of, violations_of
from test_cloudcontrol import FAST, NOTE, cloudcontrol

CONCURRENT_CREATES = 200


def _created(client: Any, title: str) -> Dict[str, Any]:
    token = client.create_resource(TypeName=NOTE, DesiredState=json.dumps({"Title": title}))["ProgressEvent"]["RequestToken"]
    client.get_waiter("resource_request_success").wait(RequestToken=token, WaiterConfig=FAST)
    return dict(client.get_resource_request_status(RequestToken=token)["ProgressEvent"])


def test_note_store_loses_no_create_from_concurrent_workers(sample: Callable[[str], Path], serve: Callable[..., ServerProcess]) -> None:
    project = sample("note")
    client = cloudcontrol(serve(project, "--no-reload", "--workers", "4"))
    with ThreadPoolExecutor(max_workers=32) as pool:
        created = list(pool.map(lambda n: _created(client, f"note {n}"), range(CONCURRENT_CREATES)))
    assert {event["OperationStatus"] for event in created} == {"SUCCESS"}
    identifiers = {event["Identifier"] for event in created}
    assert len(identifiers) == CONCURRENT_CREATES
    store = json.loads((project / ".state" / "notes.json").read_text())  # whole, valid JSON
    assert set(store["notes"]) == identifiers
    pages = client.get_paginator("list_resources").paginate(TypeName=NOTE)
    assert {description["Identifier"] for page in pages for description in page["ResourceDescriptions"]} == identifiers


def _quick_start() -> List[List[str]]:
    """The cfnrun commands of README's first command, after its install steps."""
    readme = (ROOT / "README.md").read_text()
    first = next(line for line in readme.splitlines() if line.startswith("python3 -m venv") and "cfnrun invoke" in line)
    commands = [part.strip().split() for part in first.split("&&")]
    return [command[1:] for command in commands if command[0] == "cfnrun"]


def test_the_readme_quick_start_runs_again_and_again(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "cluster", tmp_path / "samples" / "cluster", ignore=LOCAL_STATE)
    commands = _quick_start()
    assert [command[:2] for command in commands] == [["invoke", "CREATE"], ["invoke", "DELETE"]]
    for _ in range(2):  # the DELETE leaves the sample's store as the CREATE found it
        for command in commands:
            run = cfnrun(*command, "--json", "--virtual-clock", cwd=tmp_path)
            assert run.returncode == 0, run.stdout + run.stderr
            assert result_of(run)["status"] == "SUCCESS" and not violations_of(run)
