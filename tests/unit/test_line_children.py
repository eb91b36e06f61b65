"""``runtime/line_children.py`` with real child processes: an answer cut short by the child's end."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cfnrun.runtime.line_children import ChildEnded, LineChildren

CUT_SHORT = """\
import sys

sys.stdin.readline()
sys.stdout.write('{"warnings": [')  # and ends before the rest of its answer line
sys.stdout.flush()
"""


def test_an_answer_cut_short_by_the_childs_end_is_a_child_ended_not_a_json_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cut_short_child.py").write_text(CUT_SHORT)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    children = LineChildren("cut_short_child", idle=1)

    async def run() -> None:
        for _ in range(2):  # the dead child is not kept for the next request: that one starts a child of its own
            # The status is the child's (0), or 255 where something else in this process reaped it first (asyncio's
            # word for a child it cannot wait for; seen once in CI): the message says how far the answer got either way.
            with pytest.raises(ChildEnded, match=r"exit status (0|255), after 14 bytes of its answer"):
                await children.ask({"body": "x"}, 60)

    asyncio.run(run())
