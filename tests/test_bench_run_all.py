"""bench/run_all.py, the table of what users run, runs end to end and prints its rows (no duration is asserted)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quick_run_prints_a_row_with_its_baseline_goal_and_verdict(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run_all.py"), "--quick", "--rows", "invoke"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    assert run.returncode in (0, 1), run.stderr  # 1: a goal missed, which says nothing about the harness
    rows = [line for line in run.stdout.splitlines() if line.startswith("| invoke |")]
    assert len(rows) == 1, run.stdout
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    name, what, now, baseline, goal, verdict = cells
    assert "cfnrun invoke LIST" in what
    assert now.endswith(")") and "×" in now and "ms" in now
    assert baseline.startswith("bare import ") and baseline.endswith(" ms")
    assert goal == "≤ 1.3×"
    assert verdict in ("met", "MISSED")
    assert run.returncode == (0 if verdict == "met" else 1)


def test_an_unknown_row_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run_all.py"), "--rows", "invoke,nope"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    assert run.returncode == 2
    assert "unknown rows: nope" in run.stderr and "serve-latency" in run.stderr
    assert "| invoke |" not in run.stdout
