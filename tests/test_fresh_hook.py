"""A fresh ``cfn init`` hook project is tested offline (#30.5): its AWS::S3::Bucket target's schema comes from what
cloudformation-cli and cfn-lint ship, not from the registry (no describe-type, no --aws)."""
from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from conftest import cfnrun
from test_aws_calls import NO_LOCAL_CREDENTIALS


@pytest.fixture
def fresh_hook(tmp_path: Path) -> Path:
    pytest.importorskip("rpdk.core")
    root = tmp_path / "hook"
    root.mkdir()
    cfn = [sys.executable, "-c", "import sys; from rpdk.core.cli import main; sys.exit(main())"]
    init = ["init", "--type-name", "Org::Svc::Guard", "--artifact-type", "HOOK", "python311", "--no-docker"]
    run = subprocess.run(cfn + init, cwd=root, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert not (root / "target-schemas").exists()  # nothing describes AWS::S3::Bucket in the project
    return root


def test_a_fresh_hook_project_runs_the_hook_suite_offline(fresh_hook: Path) -> None:
    run = cfnrun("test", "--virtual-clock", cwd=fresh_hook, env=NO_LOCAL_CREDENTIALS, timeout=600)
    assert "no schema in target-schemas/" not in run.stderr, run.stderr
    assert "Unhandled exception" not in run.stdout + run.stderr, run.stdout[-3000:] + run.stderr[-3000:]
    report = ElementTree.parse(fresh_hook / ".cfnrun" / "test-results.xml").getroot()
    outcomes = {case.get("name"): [child.tag for child in case] for case in report.iter("testcase")}
    assert outcomes.get("contract_pre_create_success") == [], outcomes  # ran against the target's schema, and passed
    assert all("KeyError" not in line for line in run.stdout.splitlines() if "(failed)" in line), run.stdout[-3000:]
