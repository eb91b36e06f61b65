"""serve's history while a client calls one call after another: the records of calls a few milliseconds apart
share a batch (``history/writer.py``), and still every call is recorded and its console line follows its record."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Callable

import pytest

from cfnrun.history.store import HistoryStore
from conftest import ServerProcess

CALLS = 12


def list_request(token: str) -> bytes:
    return json.dumps({
        "action": "LIST", "awsAccountId": "123456789012", "bearerToken": token, "region": "us-east-1",
        "resourceType": "Cfnrun::Sample::Note", "requestData": {"resourceProperties": {}},
    }).encode()


def test_calls_one_after_another_are_each_recorded_before_their_console_line(
    sample: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = sample("note")
    monkeypatch.setenv("CFNRUN_HISTORY", "on")
    server = ServerProcess(project)
    try:
        client = server.client()
        answered = []
        for number in range(CALLS):  # one after another, each sent as soon as the last is answered
            response = client.invoke(FunctionName="TypeFunction", Payload=list_request(f"token-{number}"))
            assert json.loads(response["Payload"].read())["status"] == "SUCCESS"
            answered.append(response["ResponseMetadata"]["RequestId"])
        lines = [server.has_printed(rf"TypeFunction LIST → SUCCESS .*\[{request_id[:8]}\]") for request_id in answered]
        assert len(lines) == CALLS
        # the last call's line is on the console: its record, and every one before it, is committed
        recorded = HistoryStore(project).operations()
        assert len(recorded) == CALLS
    finally:
        server.stop_cleanly()
    store = HistoryStore(project)
    request_ids = [store.events(operation.id)[-1]["requestId"] for operation in reversed(store.operations())]
    assert request_ids == answered
    assert [operation.request["payload"]["bearerToken"] for operation in reversed(store.operations())] == [f"token-{n}" for n in range(CALLS)]


def test_serve_answers_while_another_process_holds_the_history_and_records_every_call_once_it_lets_go(
    sample: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SQLite shell with a transaction open on the history (``BEGIN IMMEDIATE``) never holds up serve's answers: the
    records wait, untouched, and are written, with their console lines, once the lock is let go."""
    project = sample("note")
    monkeypatch.setenv("CFNRUN_HISTORY", "on")
    server = ServerProcess(project)
    try:
        client = server.client()
        first = client.invoke(FunctionName="TypeFunction", Payload=list_request("before"))
        server.has_printed(rf"TypeFunction LIST → SUCCESS .*\[{first['ResponseMetadata']['RequestId'][:8]}\]")  # the file exists
        shell = sqlite3.connect(str(HistoryStore(project).path), isolation_level=None)
        shell.execute("BEGIN IMMEDIATE")
        try:
            answered = []
            for number in range(CALLS):
                response = client.invoke(FunctionName="TypeFunction", Payload=list_request(f"locked-{number}"))
                assert json.loads(response["Payload"].read())["status"] == "SUCCESS"
                answered.append(response["ResponseMetadata"]["RequestId"])
            assert len(HistoryStore(project).operations()) == 1  # answered, not yet recorded: the lock is held
        finally:
            shell.execute("COMMIT")
            shell.close()
        server.has_printed(rf"TypeFunction LIST → SUCCESS .*\[{answered[-1][:8]}\]")  # its line follows its record
        tokens = [operation.request["payload"]["bearerToken"] for operation in reversed(HistoryStore(project).operations())]
        assert tokens == ["before"] + [f"locked-{n}" for n in range(CALLS)]
    finally:
        server.stop_cleanly()
    assert "not recorded" not in "\n".join(server.output)
