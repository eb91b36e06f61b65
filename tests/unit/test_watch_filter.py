"""What the reload watch looks at: the folders of the code and of the named files, each for its own entries; cfnrun's
own folder (the history serve writes with every call), a provider's state and the other ignored folders not at all."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import watchfiles

from cfnrun.app.watcher import ProjectFilter, folders_to_watch
from cfnrun.model.project import load_project

NOOP = Path(__file__).resolve().parents[2] / "bench" / "noop_project"


def noop_copy(tmp_path: Path) -> Path:
    shutil.copytree(NOOP, tmp_path / "noop", ignore=shutil.ignore_patterns(".cfnrun", "__pycache__"))  # not what a bench run left
    return tmp_path / "noop"


def test_the_ignored_folders_are_not_watched_and_their_writes_are_turned_away(tmp_path: Path) -> None:
    root = noop_copy(tmp_path)
    for folder in (".cfnrun", ".state/clusters", ".git/objects", ".venv/lib/python3.11/site-packages/x", "src/pkg/sub", "src/pkg/__pycache__"):
        (root / folder).mkdir(parents=True)
    project = load_project(root)
    assert folders_to_watch(project) == [root, root / "src", root / "src" / "pkg", root / "src" / "pkg" / "sub"]
    watched = ProjectFilter(project)
    for state in (".cfnrun/history.sqlite3", ".cfnrun/history.sqlite3-wal", ".state/clusters/cl-1.json", ".git/index"):
        assert not watched(watchfiles.Change.modified, str(root / state))
    assert watched(watchfiles.Change.modified, str(root / "src" / "noop_provider.py"))  # code is seen
    assert watched(watchfiles.Change.modified, str(root / "cfnrun-bench-noop.json"))  # the schema too
    assert not watched(watchfiles.Change.modified, str(root / "src" / ".state" / "x.py"))  # an ignored folder deeper down


def test_a_file_named_for_the_watch_inside_cfnruns_folder_is_still_seen(tmp_path: Path) -> None:
    project = load_project(noop_copy(tmp_path))
    request = project.root / ".cfnrun" / "request.json"
    assert project.root / ".cfnrun" in folders_to_watch(project, [request])
    assert ProjectFilter(project, extra_files=[request])(watchfiles.Change.modified, str(request))


def test_a_link_back_up_the_code_tree_is_walked_once(tmp_path: Path) -> None:
    root = noop_copy(tmp_path)
    (root / "src" / "pkg").mkdir()
    os.symlink(root / "src", root / "src" / "pkg" / "up")
    assert folders_to_watch(load_project(root)) == [root, root / "src", root / "src" / "pkg"]
