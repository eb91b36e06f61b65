"""The cluster sample's store costs a call the same however many clusters it holds, and loses none.

It stands in for a cloud API, whose calls do not get slower as more resources exist: a stack of
hundreds of clusters calls it three times per cluster, so a call reads and writes only the
clusters it names (a file each), never the whole store.
"""
from __future__ import annotations

import builtins
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator, List

import pytest
from cluster_store import sample_store


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.setenv("CLUSTER_STATE_DIR", str(tmp_path))
    yield sample_store()


def _record(index: int, status: str = "CREATING") -> dict:
    return {"ClusterId": f"cl-{index}", "Name": f"c{index}", "NodeCount": 1, "Status": status}


def _scratch_files(folder: Path) -> List[str]:
    return [path.name for path in folder.rglob("*.tmp")]


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
    assert renamed == [str(tmp_path / "clusters" / "cl-1.json")]
    assert store.load()["cl-1"]["Status"] == "ACTIVE"
    assert json.loads((tmp_path / "clusters" / "cl-1.json").read_text())["Status"] == "ACTIVE"
    assert _scratch_files(tmp_path) == []


def test_a_call_reads_and_writes_only_the_clusters_it_names(store: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with store.change() as clusters:
        clusters.update({f"cl-{i}": _record(i) for i in range(200)})
    opened: List[str] = []
    real_open = builtins.open

    def counted_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(os.path.basename(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(store, "open", counted_open, raising=False)  # the store's own opens, not the test's
    monkeypatch.setattr(store.os, "listdir", lambda *_: pytest.fail("a call listed the store's folder"))

    with store.change() as clusters:  # a status check by ClusterId, then the cluster made ACTIVE
        store.find(clusters, "cl-7", "c7")["Status"] = "ACTIVE"
    assert store.find(store.current(), "cl-7", None)["Status"] == "ACTIVE"  # a READ
    with store.change() as clusters:  # a CREATE: its Name is free, then the cluster is made
        assert store.find(clusters, None, "fresh") is None
        clusters["cl-fresh"] = {"ClusterId": "cl-fresh", "Name": "fresh", "NodeCount": 2, "Status": "CREATING"}
    assert store.find(store.current(), None, "c9") == _record(9)  # a READ by Name

    clusters_read = sorted({name for name in opened if name.startswith(("cl-", ".cl-"))})
    assert clusters_read == [".cl-7.json.tmp", ".cl-fresh.json.tmp", "cl-7.json", "cl-9.json", "cl-fresh.json"]


def test_a_name_finds_its_cluster_until_it_is_removed_or_taken_over(store: ModuleType) -> None:
    with store.change() as clusters:
        clusters["cl-1"] = _record(1)
        clusters["cl-2"] = _record(2)
    assert store.find(store.current(), None, "c1") == _record(1)
    assert store.find(store.current(), "cl-none", "c2") == _record(2)  # an unknown ClusterId, then its Name

    with store.change() as clusters:  # a CREATE of c1 again, taking over the unfinished cluster
        del clusters["cl-1"]
        clusters["cl-3"] = {**_record(3), "Name": "c1"}
        assert store.find(clusters, None, "c1") == clusters["cl-3"]
    assert store.find(store.current(), None, "c1")["ClusterId"] == "cl-3"
    assert sorted(store.load()) == ["cl-2", "cl-3"]

    with store.change() as clusters:
        del clusters["cl-3"]
    assert store.find(store.current(), None, "c1") is None
    assert store.load() == {"cl-2": _record(2)}
    with store.change() as clusters:
        assert sorted(clusters) == ["cl-2"] and len(clusters) == 1


def test_a_change_stopped_between_its_files_leaves_every_cluster_findable(store: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with store.change() as clusters:
        clusters["cl-1"] = _record(1, "ACTIVE")
    replace = os.replace

    def failing_replace(source: str, target: str) -> None:
        if os.path.dirname(target).endswith("clusters"):
            raise OSError(28, "No space left on device")
        replace(source, target)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError), store.change() as clusters:  # its Name's entry is written, its cluster is not
        clusters["cl-2"] = _record(2)
    monkeypatch.setattr(os, "replace", replace)

    assert store.load() == {"cl-1": _record(1, "ACTIVE")}
    assert store.find(store.current(), None, "c2") is None
    assert _scratch_files(tmp_path) == []
    with store.change() as clusters:  # the CREATE again
        assert store.find(clusters, None, "c2") is None
        clusters["cl-5"] = _record(2)
    assert store.find(store.current(), None, "c2") == _record(2)


def test_a_cluster_id_that_cannot_name_a_file_is_no_cluster(store: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "secret.json").write_text(json.dumps({"ClusterId": "x"}))
    assert store.find(store.current(), "../secret", None) is None
    with pytest.raises(ValueError, match="cannot name a cluster's file"), store.change() as clusters:
        clusters["../secret"] = {"ClusterId": "../secret"}
    assert store.load() == {}


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
