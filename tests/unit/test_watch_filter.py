"""The reload watch's filter: cfnrun's own folder (the history serve writes with every call) and the other ignored
folders right under the project (a provider's state written with every handler call, .git) are turned away cheaply."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, List

import pytest
import watchfiles

from cfnrun.app import watcher as watcher_module
from cfnrun.app.watcher import ProjectFilter
from cfnrun.model.project import load_project

NOOP = Path(__file__).resolve().parents[2] / "bench" / "noop_project"


def test_a_history_or_state_write_is_turned_away_without_making_a_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(NOOP, tmp_path / "noop", ignore=shutil.ignore_patterns(".cfnrun"))  # not the history a bench run left
    project = load_project(tmp_path / "noop")
    watched = ProjectFilter(project)
    made: List[Any] = []
    real_path = watcher_module.Path

    def counted(*parts: Any) -> Path:
        made.append(parts)
        return real_path(*parts)

    monkeypatch.setattr(watcher_module, "Path", counted)
    for state in ("history.sqlite3", "history.sqlite3-wal", "history.sqlite3-shm"):
        assert not watched(watchfiles.Change.modified, str(project.root / ".cfnrun" / state))
    for written in (".state/clusters/cl-1.json", ".state/clusters/.cl-1.json.tmp", ".git/index", ".venv/lib/x.py"):
        assert not watched(watchfiles.Change.added, str(project.root / written))
    assert made == []
    assert watched(watchfiles.Change.modified, str(project.root / "src" / "noop_provider.py"))  # code is still seen
    assert not watched(watchfiles.Change.modified, str(project.root / ".cfnrunner" / "x.py"))  # only that folder's prefix
    assert not watched(watchfiles.Change.modified, str(project.root / "src" / ".state" / "x.py"))  # deeper: the full check


def test_a_file_named_for_the_watch_inside_cfnruns_folder_is_still_seen(tmp_path: Path) -> None:
    shutil.copytree(NOOP, tmp_path / "noop", ignore=shutil.ignore_patterns(".cfnrun"))  # not the history a bench run left
    project = load_project(tmp_path / "noop")
    request = project.root / ".cfnrun" / "request.json"
    watched = ProjectFilter(project, extra_files=[request])
    assert watched(watchfiles.Change.modified, str(request))
