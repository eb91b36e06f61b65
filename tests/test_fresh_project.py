"""A brand-new ``cfn init`` Python project, as a new user meets cfnrun in the first hour (issue #10).

The project is made once per session by cloudformation-cli itself (``cfn init`` + ``cfn generate``,
the ``fresh`` fixture in conftest); each test works on its own copy.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import List


from conftest import cfnrun, events, result_of


# -- 1. the stock DELETE handler answers IN_PROGRESS, with no delay, forever ------------------


def test_stock_delete_handler_is_stopped_with_an_explanation(fresh: Path) -> None:
    run = cfnrun("invoke", "DELETE", cwd=fresh, timeout=60)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "IN_PROGRESS DELETE after 20 invocation(s)" in run.stdout
    assert "the same IN_PROGRESS 20 times in a row" in run.stdout
    assert "--keep-polling" in run.stdout
    invocation_lines = [line for line in run.stdout.splitlines() if line.startswith("#")]
    assert invocation_lines == [invocation_lines[0]] and invocation_lines[0].split()[:2] == ["#1", "IN_PROGRESS"]
    assert "#2–#20: the same answer again (19 more invocation(s)" in run.stdout


def test_stock_delete_under_a_virtual_clock_stops_too_and_ndjson_keeps_every_call(fresh: Path) -> None:
    run = cfnrun("invoke", "DELETE", "--virtual-clock", "--json", cwd=fresh, timeout=60)
    assert run.returncode == 1, run.stdout + run.stderr
    result = result_of(run)
    assert result["reason"] == "no-progress" and result["status"] == "IN_PROGRESS" and result["invocations"] == 20
    assert [e["n"] for e in events(run) if e["event"] == "invocation"] == list(range(1, 21))


def test_keep_polling_runs_to_the_operation_timeout(fresh: Path) -> None:
    # 3 s of wall time: far more than the 20 calls the no-progress stop would allow, even on a loaded CI machine.
    run = cfnrun("invoke", "DELETE", "--keep-polling", "--operation-timeout", "3", "--json", cwd=fresh, timeout=60)
    assert run.returncode == 1, run.stdout + run.stderr
    result = result_of(run)
    assert result["reason"] == "operation-timeout"
    assert result["invocations"] > 20, result


def test_in_progress_that_makes_progress_is_not_stopped(tmp_path: Path) -> None:
    """A handler answering IN_PROGRESS with no delay but a growing callbackContext is working, not stuck."""
    (tmp_path / "counting.py").write_text(
        "def handler(event, context):\n"
        "    n = (event.get('callbackContext') or {}).get('n', 0) + 1\n"
        "    if n < 30:\n"
        "        return {'status': 'IN_PROGRESS', 'callbackContext': {'n': n}, 'callbackDelaySeconds': 0}\n"
        "    return {'status': 'SUCCESS', 'resourceModel': {'Id': 'x'}}\n"
    )
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({
        "typeName": "Org::Svc::Count", "description": "d", "additionalProperties": False,
        "properties": {"Id": {"type": "string"}}, "primaryIdentifier": ["/properties/Id"],
    }))
    run = cfnrun("invoke", "CREATE", "--handler", "counting.handler", "--schema", str(schema), "--code-dir", str(tmp_path),
                 "--no-credentials", "--json", cwd=tmp_path, timeout=60)
    result = result_of(run)
    assert result["status"] == "SUCCESS" and result["invocations"] == 30, run.stdout + run.stderr


# -- hints for the pitfalls of a generated project ------------------------------------------------


def test_unique_items_array_of_objects_gets_a_hint(fresh: Path) -> None:
    model = {"TPSCode": "ABC123456", "Title": "a title that is long enough", "TestCode": "NOT_STARTED", "Tags": [{"Key": "a", "Value": "b"}]}
    (fresh / "req.json").write_text(json.dumps({"desiredResourceState": model}))
    run = cfnrun("invoke", "CREATE", "req.json", "--json", cwd=fresh)
    result = result_of(run)
    assert result["status"] == "FAILED" and "unhashable type: 'dict'" in result["message"]
    assert "set_or_none" in result["hint"] and "uniqueItems" in result["hint"]


def test_type_configuration_the_stock_resource_never_reads_gets_a_note(fresh: Path) -> None:
    (fresh / "req.json").write_text(json.dumps({"desiredResourceState": {"TPSCode": "ABC123456"}, "typeConfiguration": {"Key": "v"}}))
    run = cfnrun("invoke", "READ", "req.json", cwd=fresh)
    assert "built without a TypeConfigurationModel" in run.stderr, run.stderr
    handlers = fresh / "src" / "org_svc_thing" / "handlers.py"
    handlers.write_text(handlers.read_text().replace(
        "Resource(TYPE_NAME, ResourceModel)", "Resource(TYPE_NAME, ResourceModel, TypeConfigurationModel)"
    ).replace("import ResourceHandlerRequest, ResourceModel", "import ResourceHandlerRequest, ResourceModel, TypeConfigurationModel"))
    fixed = cfnrun("invoke", "READ", "req.json", cwd=fresh)
    assert fixed.returncode == 0 and "TypeConfigurationModel" not in fixed.stderr, fixed.stdout + fixed.stderr


def test_validate_gives_the_warnings_cfn_validate_gives(fresh: Path) -> None:
    run = cfnrun("validate", "--json", cwd=fresh)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    warnings = {(p["pointer"], p["severity"]) for p in report["problems"]}
    assert warnings >= {("/properties/Authors", "warning"), ("/tagging", "warning")}  # as cfn validate warns on this schema
    # and what cfn validate leaves unsaid: the stock Tags (uniqueItems, of objects) break models.py's set_or_none
    assert warnings == {("/properties/Authors", "warning"), ("/tagging", "warning"), ("/properties/Tags", "warning")}
    [tags] = [p["message"] for p in report["problems"] if p["pointer"] == "/properties/Tags"]
    assert "set_or_none" in tags and "unhashable type: 'dict'" in tags
    assert report["errors"] == 0 and report["warnings"] == 3


# -- progress ------------------------------------------------------------------------------------


def _run_in_terminal(args: List[str], cwd: Path, timeout: float = 60) -> str:
    """The CLI with a pseudo-terminal as its output, as in a user's shell; everything it wrote."""
    import os
    import pty
    import select
    import subprocess
    import sys
    import time

    main, secondary = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "cfnrun", *args], cwd=cwd, stdout=secondary, stderr=secondary,
                               stdin=subprocess.DEVNULL, env={**os.environ, "NO_COLOR": "1"})
    os.close(secondary)
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.5)
        if ready:
            try:
                data = os.read(main, 65536)
            except OSError:  # the terminal closed: the process is gone
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    process.wait(timeout=10)
    os.close(main)
    return b"".join(chunks).decode(errors="replace")


def test_a_long_call_shows_a_live_running_line(tmp_path: Path) -> None:
    from conftest import MISBEHAVING

    request = tmp_path / "sleep.json"
    request.write_text(json.dumps({"desiredResourceState": {"do": "sleep", "seconds": 2.5}}))
    args = ["invoke", "CREATE", str(request), "--handler", "behaviours.handler", "--schema",
            str(MISBEHAVING / "cfnrun-test-misbehaving.json"), "--code-dir", str(MISBEHAVING), "--no-credentials"]
    screen = _run_in_terminal(args, cwd=tmp_path)
    assert "… running #1  1 s / 60 s" in screen and "… running #1  2 s / 60 s" in screen, screen


def test_virtual_elapsed_time_is_labelled_virtual(fresh: Path) -> None:
    run = cfnrun("invoke", "DELETE", "--virtual-clock", cwd=fresh)
    assert "(virtual clock: skipped waits included)" in run.stdout, run.stdout


def test_watch_says_it_waits_and_reruns_when_the_request_file_changes(fresh: Path, tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    request = tmp_path / "req.json"  # outside the project, as a user's scratch file often is
    request.write_text(json.dumps({"desiredResourceState": {"TPSCode": "FIRST0001"}}))
    process = subprocess.Popen([sys.executable, "-m", "cfnrun", "invoke", "READ", str(request), "--json", "--watch", "--no-credentials"],
                               cwd=fresh, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def next_result() -> dict:
            for line in process.stdout:  # type: ignore[union-attr]
                record = json.loads(line)
                if record["event"] == "result":
                    return record
            raise AssertionError("cfnrun exited before another result")

        assert next_result()["resourceModel"] == {"TPSCode": "FIRST0001"}
        request.write_text(json.dumps({"desiredResourceState": {"TPSCode": "SECOND002"}}))
        assert next_result()["resourceModel"] == {"TPSCode": "SECOND002"}
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 130
        stderr = process.stderr.read() if process.stderr else ""
        assert f"watching {fresh.resolve()} and {request} for saves" in stderr, stderr
        assert f"{request} changed: running READ again" in stderr, stderr
    finally:
        if process.poll() is None:
            process.kill()


def test_a_long_call_streams_the_handler_output_as_it_is_written(tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    from conftest import MISBEHAVING

    release = tmp_path / "release"
    request = tmp_path / "wait.json"
    request.write_text(json.dumps({"desiredResourceState": {"do": "wait_for", "release": str(release)}}))
    args = ["invoke", "CREATE", str(request), "--handler", "behaviours.handler", "--schema",
            str(MISBEHAVING / "cfnrun-test-misbehaving.json"), "--code-dir", str(MISBEHAVING), "--no-credentials"]
    process = subprocess.Popen([sys.executable, "-m", "cfnrun", *args], cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env={**os.environ, "NO_COLOR": "1"})
    try:
        assert process.stdout is not None
        seen = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the call is still blocked: what shows up now was streamed
            line = process.stdout.readline()
            assert line, "".join(seen)
            seen.append(line)
            if "step 1 of 2" in line:
                break
        assert process.poll() is None and not release.exists()
        assert "#1   running, its output so far:" in "".join(seen)
        release.touch()
        rest = process.stdout.read()
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
        process.wait()
    screen = "".join(seen) + rest
    assert screen.count("step 1 of 2") == 1, screen  # shown live, not again with the answer
    assert screen.index("step 2 of 2") < screen.index("#1   SUCCESS"), screen
