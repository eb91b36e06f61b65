"""``--state`` that loses nothing (issue 31 items 1, 6, 13): real serve processes, real clients."""
from __future__ import annotations

import shutil
from pathlib import Path

from conftest import LOCAL_STATE, SAMPLES, cfnrun


def test_a_damaged_state_store_stops_serve_with_one_line(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "cluster", tmp_path / "cluster", ignore=LOCAL_STATE)
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "stacks.sqlite3").write_bytes(b"not SQLite at all " * 200)
    run = cfnrun("serve", "cluster", "--port", "0", "--no-reload", "--state", "kept", cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "kept/stacks.sqlite3: cannot use the stacks kept there: file is not a database; move it aside" in run.stderr
    assert "Traceback" not in run.stdout + run.stderr
