"""One serve per --state folder: the lock, its holder's description, its release."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from cfnrun.app.state_lock import state_held
from cfnrun.model.errors import CfnrunError


def test_a_held_state_folder_is_refused_naming_the_holder_until_it_is_released(tmp_path: Path) -> None:
    folder = tmp_path / "kept" / "deeper"  # made when missing
    with state_held(folder) as hold:
        with pytest.raises(CfnrunError, match=rf"--state {folder}: another cfnrun holds it \(pid {os.getpid()} \(not listening yet\)\)"):
            with state_held(folder):
                pass
        hold.tell("http://127.0.0.1:3999")
        with pytest.raises(CfnrunError, match=rf"\(pid {os.getpid()} at http://127.0.0.1:3999\); stop that serve first"):
            with state_held(folder):
                pass
    with state_held(folder) as again:  # released: the next serve takes it, the old lock file notwithstanding
        assert again.folder == folder
    with state_held(None) as none:
        none.tell("http://127.0.0.1:1")  # without --state: nothing to hold


def test_a_state_folder_that_cannot_be_made_is_a_one_line_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(CfnrunError, match=rf"--state {blocker / 'kept'}: cannot use this folder: "):
        with state_held(blocker / "kept"):
            pass
