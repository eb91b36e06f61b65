"""Stack refactors kept in ``--state``: one whose stacks' NoEcho values were not kept is shown after a restart, and
refused by ExecuteStackRefactor saying why; the value is on no disk."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Dict

import pytest

from cfnrun.stacks.store import StackError
from kept_state import kept_text
from test_stack_engine import Memory, _template
from test_stack_persistence import _store

PIN = {"Parameters": {"Pin": {"Type": "String", "NoEcho": True}}}


def _solo(logical_id: str) -> str:
    return _template({logical_id: {"Type": "Test::Thing::Resource", "Properties": {"Name": "solo", "Tag": {"Ref": "Pin"}}}}, **PIN)


RENAMED = [{"Source": {"StackName": "kept", "LogicalResourceId": "Solo"}, "Destination": {"StackName": "kept", "LogicalResourceId": "Alone"}}]


def test_a_refactor_of_a_stack_whose_noecho_value_was_not_kept_is_shown_but_refused(tmp_path: Path) -> None:
    memory = Memory()

    async def first_life() -> Dict[str, Any]:
        store = _store(memory, tmp_path)
        store.create_stack("kept", _solo("Solo"), {"Pin": "pin-4711"}, {})
        await store.settled("kept")
        refactor = store.create_refactor([("kept", _solo("Alone"))], RENAMED, False, "rename")
        assert (refactor.status, refactor.execution_status) == ("CREATE_COMPLETE", "AVAILABLE"), refactor.status_reason
        return {"id": refactor.refactor_id, "moves": refactor.moves, "stack_ids": refactor.stack_ids}

    before = asyncio.run(first_life())
    assert "pin-4711" not in kept_text(tmp_path)
    store = _store(memory, tmp_path)
    refactor = store.refactor(before["id"])
    assert (refactor.moves, refactor.stack_ids, refactor.description) == (before["moves"], before["stack_ids"], "rename")
    with pytest.raises(StackError, match="without what stack kept needs: the value of NoEcho parameter Pin \\(never written to --state\\)"):
        store.execute_refactor(before["id"])
