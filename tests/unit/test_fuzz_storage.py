"""Hypothesis's tables go to cfnrun's cache folder while fuzz explores, never to the current folder; as they were after."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import configuration

from cfnrun.fuzz.storage import tables_in_cache
from tests.conftest import FIXTURES, LOCAL_STATE, PATIENCE_S


def test_inside_the_block_the_storage_folder_is_the_cache_and_after_it_what_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    before = vars(configuration).get("__hypothesis_home_directory")
    configuration.set_hypothesis_home_dir(tmp_path / "users")
    try:
        with tables_in_cache():
            assert configuration.storage_directory("x").path == tmp_path / "cache" / "cfnrun" / "hypothesis" / "x"
        assert configuration.storage_directory("x").path == tmp_path / "users" / "x"
        monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "chosen"))
        configuration.set_hypothesis_home_dir(None)
        with tables_in_cache():  # the user's choice wins
            assert configuration.storage_directory("x").path == tmp_path / "chosen" / "x"
    finally:
        configuration.set_hypothesis_home_dir(before)


def test_fuzz_leaves_nothing_in_the_folder_it_runs_in(tmp_path: Path) -> None:
    project = tmp_path / "sizer"
    shutil.copytree(FIXTURES / "sizer", project, ignore=LOCAL_STATE)
    here = tmp_path / "here"
    here.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    env.update({"XDG_CACHE_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"})
    run = subprocess.run(
        [sys.executable, "-m", "cfnrun", "fuzz", str(project), "--max-examples", "3", "--seed", "1"], cwd=here, env=env,
        capture_output=True, text=True, timeout=PATIENCE_S,
    )
    assert run.returncode in (0, 1), run.stdout + run.stderr
    assert list(here.iterdir()) == []  # no .hypothesis/ where it ran
    assert (tmp_path / "cache" / "cfnrun" / "hypothesis" / "unicode_data").is_dir()  # its tables, kept for the next run
