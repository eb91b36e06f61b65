"""The cluster sample's store costs little per call however many clusters it holds.

Every call of a stack's create reads and writes the whole store (one JSON file, as tests and
users read it), so what each change does with that file is what a stack of hundreds pays per call.
"""
from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator, List

import pytest

STORE = Path(__file__).resolve().parents[2] / "samples" / "cluster" / "src" / "cfnrun_sample_cluster" / "store.py"


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.setenv("CLUSTER_STATE_DIR", str(tmp_path))
    spec = importlib.util.spec_from_file_location("cluster_sample_store", STORE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module


def _record(index: int) -> dict:
    return {"ClusterId": f"cl-{index}", "Name": f"c{index}", "NodeCount": 1, "Status": "CREATING"}


def test_a_change_that_changes_nothing_leaves_the_file_as_it_was(store: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with store.change() as clusters:
        clusters.update({f"cl-{i}": _record(i) for i in range(3)})
    renamed: List[str] = []
    replace = os.replace

    def counted_replace(source: str, target: str) -> None:
        renamed.append(str(target))
        replace(source, target)

    monkeypatch.setattr(os, "replace", counted_replace)

    with store.change() as clusters:  # a status check: the cluster is still CREATING
        assert clusters["cl-1"]["Status"] == "CREATING"
    assert renamed == []
    with store.change() as clusters:
        clusters["cl-1"]["Status"] = "ACTIVE"
    assert renamed == [str(tmp_path / "clusters.json")]
    assert store.load()["cl-1"]["Status"] == "ACTIVE"
    assert json.loads((tmp_path / "clusters.json").read_text())["clusters"]["cl-1"]["Status"] == "ACTIVE"
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


def test_a_change_is_encoded_by_the_json_modules_c_encoder(store: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    import json.encoder

    python_encodings: List[object] = []
    make = json.encoder._make_iterencode  # type: ignore[attr-defined]

    def counted_make(*args: Any, **kwargs: Any) -> Any:
        python_encodings.append(args)
        return make(*args, **kwargs)

    monkeypatch.setattr(json.encoder, "_make_iterencode", counted_make)

    with store.change() as clusters:
        clusters.update({f"cl-{i}": _record(i) for i in range(50)})
    assert python_encodings == []
    assert len(store.load()) == 50


def test_a_failed_change_is_not_saved(store: ModuleType) -> None:
    with store.change() as clusters:
        clusters["cl-0"] = _record(0)
    with pytest.raises(RuntimeError), store.change() as clusters:
        clusters["cl-0"]["Status"] = "ACTIVE"
        raise RuntimeError("the handler failed")
    assert store.load() == {"cl-0": _record(0)}
