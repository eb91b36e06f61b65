"""The note provider's lifecycle, driven through cfnrun's pytest plugin (the `cfnrun` fixture).

Run from the sample's folder:  pytest tests/
Each operation runs like `cfnrun invoke`: IN_PROGRESS replayed, budgets enforced, the handler
contract checked; warm workers are shared by every test of the session.
"""
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def test_create_read_update_delete(cfnrun):
    note = cfnrun.provider(PROJECT, contract="strict")
    created = note.invoke("CREATE", {"Title": "Shopping", "Folder": "home", "AccessPassword": "hunter2hunter2"})
    assert created.status == "SUCCESS" and not created.violations
    assert "AccessPassword" not in created.model  # writeOnly: never returned
    note_id = created.model["NoteId"]

    read = note.invoke("READ", {"NoteId": note_id})
    assert read.model["Title"] == "Shopping"

    updated = note.invoke("UPDATE", {"NoteId": note_id, "Title": "Groceries", "Folder": "home"}, previous=read.model)
    assert updated.status == "SUCCESS" and updated.model["Title"] == "Groceries"

    assert note_id in [model["NoteId"] for model in note.invoke("LIST").models]
    assert note.invoke("DELETE", {"NoteId": note_id}).status == "SUCCESS"

    gone = note.invoke("READ", {"NoteId": note_id})
    assert gone.status == "FAILED" and gone.error_code == "NotFound"


def test_a_create_without_title_is_an_invalid_request(cfnrun):
    r = cfnrun.provider(PROJECT).invoke("CREATE", {"Folder": "home"})
    assert (r.status, r.error_code) == ("FAILED", "InvalidRequest")
    assert any(v.rule == "request-valid" for v in r.violations)  # the request breaks the schema: Title is required
