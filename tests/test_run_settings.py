"""Flags reach what runs, as a user gives them (#30 item 11); the unit side is tests/unit/test_declared_flags_reach_what_runs.py."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest

from conftest import cfnrun

# How long the run below may take, in seconds: far less than the real clock's waits (about 10 minutes).
BUDGET_S = float(os.environ.get("CFNRUN_TEST_VIRTUAL_STACK_BUDGET_S", "300"))
NO_AWS = {"AWS_PROFILE": None, "AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None, "AWS_SESSION_TOKEN": None}


@pytest.mark.timeout(BUDGET_S + 60)
def test_cfnrun_test_virtual_clock_also_skips_the_waits_of_its_stack(sample: Callable[[str], Path]) -> None:
    """``cfnrun test --virtual-clock --stack T``: T's resources wait on the virtual clock too.

    The cluster's handlers ask for 140 s between status checks, two checks a change: on the real clock T's create and
    delete alone would take over nine minutes; on the virtual clock the command ends within the budget.
    """
    pytest.importorskip("rpdk.core")
    project = sample("cluster")
    template = project / "template.yml"
    template.write_text(template.read_text().replace('CALLBACK_DELAY_SECONDS: "2"', 'CALLBACK_DELAY_SECONDS: "140"'))
    stack = project / "clusters.yaml"
    stack.write_text("Resources:\n  Cluster:\n    Type: Cfnrun::Sample::Cluster\n    Properties:\n      Name: waiting\n      NodeCount: 1\n")
    run = cfnrun(
        "test", str(project), "--virtual-clock", "--stack", str(stack), "--", "-k", "contract_create_delete",
        env=NO_AWS, timeout=BUDGET_S,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "stack cfnrun-test-clusters from" in run.stdout, run.stdout
    assert not (project / ".hypothesis").exists()  # the suite's example database is kept in .cfnrun/ (#30 item 13)
