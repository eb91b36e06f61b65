"""``model/usable_schemas.py``: a schema found usable is not checked again while it, jsonschema and the check are unchanged."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

from cfnrun.model import usable_schemas
from cfnrun.model.errors import ProjectError
from cfnrun.model.schema import ResourceSchema
from cfnrun.model.template_cache import CACHE_ENV

DOCUMENT: Dict[str, Any] = {
    "typeName": "Org::Svc::Thing",
    "description": "d",
    "additionalProperties": False,
    "properties": {"Id": {"type": "string"}, "Size": {"$ref": "#/definitions/Size"}},
    "definitions": {"Size": {"type": "integer"}},
    "primaryIdentifier": ["/properties/Id"],
}


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def verdicts(cache_home: Path) -> list:
    folder = cache_home / "cfnrun" / usable_schemas.KIND
    return sorted(folder.iterdir()) if folder.is_dir() else []


def checks_counted(monkeypatch: pytest.MonkeyPatch) -> list:
    ran: list = []
    check = ResourceSchema.require_usable
    monkeypatch.setattr(ResourceSchema, "require_usable", lambda self: (ran.append(self.type_name), check(self))[1])
    return ran


def test_a_usable_schema_is_checked_once_then_passes_on_its_verdict(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran = checks_counted(monkeypatch)
    usable_schemas.require_usable(ResourceSchema(json.loads(json.dumps(DOCUMENT))))
    usable_schemas.require_usable(ResourceSchema(json.loads(json.dumps(DOCUMENT))))
    assert ran == ["Org::Svc::Thing"] and len(verdicts(cache_home)) == 1


def test_a_changed_schema_is_checked_again(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran = checks_counted(monkeypatch)
    usable_schemas.require_usable(ResourceSchema(DOCUMENT))
    changed = {**DOCUMENT, "definitions": {"Size": {"type": "strng"}}}
    with pytest.raises(ProjectError, match="'strng' is not a JSON Schema type"):
        usable_schemas.require_usable(ResourceSchema(changed))
    with pytest.raises(ProjectError, match="'strng' is not a JSON Schema type"):  # a failure leaves no verdict: said every time
        usable_schemas.require_usable(ResourceSchema(changed))
    assert len(ran) == 3 and len(verdicts(cache_home)) == 1


def test_a_dangling_ref_is_refused_every_time(cache_home: Path) -> None:
    dangling = {**DOCUMENT, "definitions": {}}
    for _ in range(2):
        with pytest.raises(ProjectError, match="points to nothing"):
            usable_schemas.require_usable(ResourceSchema(dangling))
    assert verdicts(cache_home) == []


def test_another_jsonschema_is_another_verdict(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran = checks_counted(monkeypatch)
    usable_schemas.require_usable(ResourceSchema(DOCUMENT))
    monkeypatch.setattr(usable_schemas, "_stamp", lambda path: f"{path}:upgraded")
    usable_schemas.require_usable(ResourceSchema(DOCUMENT))
    assert len(ran) == 2 and len(verdicts(cache_home)) == 2


def test_an_unwritable_cache_is_no_error_the_check_runs_every_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a file, not a folder"
    blocker.write_text("")
    monkeypatch.setenv(CACHE_ENV, str(blocker))
    ran = checks_counted(monkeypatch)
    for _ in range(2):
        usable_schemas.require_usable(ResourceSchema(DOCUMENT))
    assert len(ran) == 2


def test_a_passed_schema_loads_no_jsonschema(tmp_path: Path) -> None:
    path = tmp_path / "org-svc-thing.json"
    path.write_text(json.dumps(DOCUMENT))
    check = (
        "import sys; from pathlib import Path; from cfnrun.model.schema import ResourceSchema; "
        "from cfnrun.model.usable_schemas import require_usable; "
        "require_usable(ResourceSchema.load(Path(sys.argv[1]))); print('jsonschema' in sys.modules)"
    )
    runs = [subprocess.run([sys.executable, "-c", check, str(path)], capture_output=True, text=True, check=True) for _ in range(2)]
    assert [run.stdout.split() for run in runs] == [["True"], ["False"]]
