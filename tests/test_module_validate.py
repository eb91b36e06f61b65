"""``cfnrun validate`` on a MODULE project: the fragment's rules, each problem with where it is (a real subprocess)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import SAMPLES


def validate(folder: Path, *args: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "cfnrun", "validate", str(folder), *args],
                          capture_output=True, text=True, timeout=120)


def test_validate_accepts_the_sample_module_and_names_each_broken_rule(tmp_path: Path) -> None:
    project = tmp_path / "module"
    shutil.copytree(SAMPLES / "module", project)
    accepted = validate(project)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "fragments/bucket.json: 0 error(s), 0 warning(s)" in accepted.stdout

    fragment_path = project / "fragments" / "bucket.json"
    fragment = json.loads(fragment_path.read_text(encoding="utf-8"))
    fragment["Transform"] = "AWS::Serverless-2016-10-31"
    fragment["Outputs"]["Arn"]["Export"] = {"Name": "arn"}
    fragment_path.write_text(json.dumps(fragment), encoding="utf-8")
    refused = validate(project, "--json")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    report = json.loads(refused.stdout)
    assert report["errors"] == 2
    assert {(p["pointer"], p["message"]) for p in report["problems"]} == {
        ("Transform", "a module's fragment cannot declare transforms"),
        ("Outputs.Arn.Export", "a module's fragment cannot export values"),
    }
