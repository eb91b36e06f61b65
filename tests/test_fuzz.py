"""``cfnrun fuzz`` end to end: the real command line, real workers, a provider that breaks for some inputs.

The sizer fixture keeps ``Size % 90`` when Size is over 90 and answers CREATE with what was asked,
so only a READ after the write shows it, and only for one size in ten.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from conftest import FIXTURES, LOCAL_STATE, cfnrun

SIZER = FIXTURES / "sizer"
BUG = "return size % 90 if size > 90 else size"
SEED = "1"  # one that finds the bug within the budget below; the budget is what the other seeds need too
BUDGET = "1500"
ON = {"CFNRUN_HISTORY": "on"}  # the tests' default is off


def _sizer(tmp_path: Path, fixed: bool = False) -> Path:
    project = tmp_path / "sizer"
    shutil.copytree(SIZER, project, ignore=LOCAL_STATE)
    if fixed:
        _fix(project)
    return project


def _fix(project: Path) -> None:
    source = project / "sizer.py"
    text = source.read_text()
    assert BUG in text
    source.write_text(text.replace(BUG, "return size"))


def test_fuzz_finds_the_bug_names_its_smallest_case_and_replay_reproduces_it_until_fixed(tmp_path: Path) -> None:
    project = _sizer(tmp_path)
    found = cfnrun("fuzz", str(project), "--seed", SEED, "--max-examples", BUDGET, env=ON, timeout=120)
    assert found.returncode == 1, found.stdout + found.stderr
    assert 'CREATE #1 {"Name": "a", "Size": 91}' in found.stdout
    assert "READ #1" in found.stdout and "read-after-write: /Size: requested 91, returned 1" in found.stdout
    case = int(re.search(r"cfnrun replay (\d+)", found.stdout).group(1))

    shown = cfnrun("history", "show", str(case), "-p", str(project), env=ON)
    assert shown.returncode == 0 and 'CREATE #1 {"Name": "a", "Size": 91}' in shown.stdout

    still = cfnrun("replay", str(case), "-p", str(project), env=ON)
    assert still.returncode == 1 and "still failing" in still.stdout, still.stdout + still.stderr
    _fix(project)
    fixed = cfnrun("replay", str(case), "-p", str(project), env=ON)
    assert fixed.returncode == 0 and "passes now" in fixed.stdout, fixed.stdout + fixed.stderr


def test_shrinking_has_a_budget_and_set_pins_a_property(tmp_path: Path) -> None:
    project = _sizer(tmp_path)
    run = cfnrun("fuzz", str(project), "--seed", SEED, "--max-examples", BUDGET, "--shrink-examples", "0", "--set", "Color=red",
                 timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "FAILED: a sequence that breaks the handler, not the smallest: shrinking stopped after 0 sequences (--shrink-examples)" \
        in run.stdout
    creates = [line for line in run.stdout.splitlines() if re.match(r"\s+\d+\. CREATE ", line)]
    assert creates and all('"Color": "red"' in line for line in creates), run.stdout
    unknown = cfnrun("fuzz", str(project), "--set", "Colour=red")
    assert unknown.returncode == 2 and "--set Colour: Cfnrun::Test::Sizer has no property Colour" in unknown.stderr


def test_a_case_found_is_tried_first_by_the_next_run(tmp_path: Path) -> None:
    """The example database under .cfnrun/ (a --seed run is exactly repeatable, so it neither reads nor writes it)."""
    project = _sizer(tmp_path)
    found = cfnrun("fuzz", str(project), "--max-examples", BUDGET, timeout=120)
    assert found.returncode == 1, found.stdout
    assert (project / ".cfnrun" / "hypothesis").is_dir()
    again = cfnrun("fuzz", str(project), "--max-examples", "1")
    assert again.returncode == 1, again.stdout
    # Unseeded, the first run's shrinking may stop short of the smallest Size (95 where 91 fails too): the next run
    # tries that case first and shrinks on from it, to the same steps with a Size no larger.
    first, next_ = _case(found.stdout), _case(again.stdout)
    assert re.sub(r"\d+", "#", next_) == re.sub(r"\d+", "#", first), again.stdout
    assert _sizes(next_) and max(_sizes(next_)) <= max(_sizes(first)), again.stdout


def _sizes(case: str) -> List[int]:
    return [int(size) for size in re.findall(r'"Size": (\d+)', case)]


def _case(output: str) -> str:
    """The smallest case a fuzz run printed: its numbered steps and problems."""
    return "\n".join(line for line in output.splitlines() if re.match(r"\s+(\d+\.|✗) ", line))


def test_a_correct_provider_passes_within_its_budget(tmp_path: Path) -> None:
    project = _sizer(tmp_path, fixed=True)
    passed = cfnrun("fuzz", str(project), "--max-examples", "40", env=ON, timeout=120)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert re.search(r"no failure: \d+ examples, \d+ operations", passed.stdout), passed.stdout
    assert not (project / ".cfnrun" / "history.sqlite3").exists()  # nothing to replay


def test_only_the_declared_handlers_run_and_the_header_says_which(tmp_path: Path) -> None:
    """Seven of eight public providers declare no list handler; their support library answers an undeclared one with a failure."""
    project = _sizer(tmp_path, fixed=True)
    schema_file = project / "cfnrun-test-sizer.json"
    schema = json.loads(schema_file.read_text())
    del schema["handlers"]["list"]
    schema_file.write_text(json.dumps(schema))
    source = project / "sizer.py"
    listing = '    if action == "LIST":\n'
    assert listing in source.read_text()
    source.write_text(source.read_text().replace(listing, listing + '        return _failed("InvalidRequest", "No handler for LIST")\n'))
    run = cfnrun("fuzz", str(project), "--max-examples", "30", "--seed", "1", timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "sequences of CREATE, READ, UPDATE, DELETE (not LIST: the schema declares no handler for it)" in run.stdout


def test_the_note_sample_with_writeonly_createonly_and_unordered_arrays_passes(sample) -> None:
    project = sample("note")
    passed = cfnrun("fuzz", str(project), "--max-examples", "10", "--seed", "3", env={"NOTES_STATE_DIR": str(project / ".state")})
    assert passed.returncode == 0, passed.stdout + passed.stderr


@pytest.mark.timeout(float(os.environ.get("CFNRUN_TEST_PATIENCE_S", "600")) + 60)
def test_a_terminal_shows_live_progress_and_ctrl_c_stops_the_workers(tmp_path: Path) -> None:
    from test_debugging import Terminal
    from test_history import _processes_in

    # Each wait is for an event the run shows, however long a busy machine takes to get there; the patience only
    # bounds a run that never shows it (CFNRUN_TEST_PATIENCE_S, seconds; the whole test gets a minute more).
    patience = float(os.environ.get("CFNRUN_TEST_PATIENCE_S", "600"))
    project = _sizer(tmp_path, fixed=True)
    terminal = Terminal([sys.executable, "-m", "cfnrun", "fuzz", "--max-examples", "100000"], project)
    try:
        terminal.read_until(r"fuzzing \S+: up to", timeout=patience)  # started: the first sequence is on its way
        live = terminal.read_until(r"\d+ examples · \d+ operations · \d+/s · \S+", timeout=patience)  # redrawn in place
        assert "\r\x1b[K" in live
        terminal.process.send_signal(signal.SIGINT)
        terminal.read_until(r"interrupted; workers stopped", timeout=patience)
    finally:
        assert terminal.close() == 130
    assert _processes_in(project) == []


def test_injected_faults_mix_in_and_a_provider_that_answers_them_properly_passes(sample) -> None:
    """The parameter sample calls SSM (here a moto server); throttled calls are retried, or end FAILED with a code."""
    project = sample("parameter")
    run = cfnrun("fuzz", str(project), "--moto", "--inject", "ssm:PutParameter=ThrottlingException%30", "--max-examples", "5",
                 "--seed", "1", "--json", timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    records = [json.loads(line) for line in run.stdout.splitlines()]
    assert records[0]["inject"] == ["ssm:PutParameter=ThrottlingException%30"] and records[-1]["failed"] is False


def test_a_handler_that_reaches_for_aws_without_a_stand_in_shows_why_and_what_to_do(sample) -> None:
    """The parameter sample calls SSM; without --moto the support library answers FAILED InternalFailure with no message."""
    project = sample("parameter")
    run = cfnrun("fuzz", str(project), "--max-examples", "3", "--seed", "1", timeout=180)
    assert run.returncode == 1, run.stdout + run.stderr
    failed = next(line for line in run.stdout.splitlines() if "✗ CREATE failed: InternalFailure:" in line)
    assert "botocore.exceptions." in failed, run.stdout  # the exception the handler raised, not an empty message
    assert "hint: the handler tried to reach AWS: add --moto to cfnrun fuzz" in run.stdout


def test_json_prints_ndjson_events_from_start_to_result(tmp_path: Path) -> None:
    project = _sizer(tmp_path)
    run = cfnrun("fuzz", str(project), "--json", "--seed", SEED, "--max-examples", BUDGET, env=ON, timeout=120)
    assert run.returncode == 1, run.stderr
    records = [json.loads(line) for line in run.stdout.splitlines()]
    assert records[0]["event"] == "fuzzStart" and records[0]["typeName"] == "Cfnrun::Test::Sizer"
    assert {r["event"] for r in records[1:-1]} == {"example"}
    result = records[-1]
    assert result["event"] == "fuzzResult" and result["failed"] is True
    assert result["steps"][result["failingStep"]] == "READ #1" and isinstance(result["historyId"], int)
    assert all("Secret" not in step or "writeOnly" in step for step in result["steps"])  # writeOnly values masked


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    project = _sizer(tmp_path)
    bad_action = cfnrun("fuzz", str(project), "--actions", "READ,FOO")
    assert bad_action.returncode == 2 and "FOO: not a resource action" in bad_action.stderr
    no_create = cfnrun("fuzz", str(project), "--actions", "READ")
    assert no_create.returncode == 2 and "add CREATE" in no_create.stderr
    no_python = cfnrun("fuzz", str(project), "--python", str(tmp_path / "no-such-python"))
    assert no_python.returncode == 2 and "no such interpreter" in no_python.stderr and "Traceback" not in no_python.stderr
    nowhere = cfnrun("fuzz", str(tmp_path / "missing"), "--json")
    assert nowhere.returncode == 2
    assert json.loads(nowhere.stdout.splitlines()[-1])["event"] == "error"


FUZZ_TESTS = '''
import pytest
from cfnrun.pytest_plugin import FuzzFailure


def test_the_broken_sizer_fails_with_its_smallest_case(cfnrun):
    with pytest.raises(FuzzFailure) as failure:
        cfnrun.fuzz("broken", max_examples=1500, seed=1)
    assert '"Size": 91' in str(failure.value) and "cfnrun replay" in str(failure.value)


def test_shrinking_has_a_budget_and_properties_can_be_pinned(cfnrun):
    with pytest.raises(FuzzFailure) as failure:
        cfnrun.fuzz("broken", max_examples=1500, seed=1, shrink_examples=0, pinned={"Color": "red"})
    assert "not the smallest (shrinking stopped after 0 sequences" in str(failure.value)
    assert '"Color": "red"' in str(failure.value)


def test_the_fixed_sizer_passes(cfnrun):
    report = cfnrun.fuzz("fixed", max_examples=30)
    assert not report.failed and report.completed.operations > 0
'''


def test_the_pytest_fixture_fuzzes_with_a_budget(tmp_path: Path) -> None:
    shutil.copytree(SIZER, tmp_path / "broken", ignore=LOCAL_STATE)
    _fix(_sizer(tmp_path / "f"))
    shutil.move(str(tmp_path / "f" / "sizer"), str(tmp_path / "fixed"))
    (tmp_path / "test_fuzzing.py").write_text(FUZZ_TESTS)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_fuzzing.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=180, env={**os.environ, **ON},
    )
    assert run.returncode == 0 and "3 passed" in run.stdout, run.stdout + run.stderr
