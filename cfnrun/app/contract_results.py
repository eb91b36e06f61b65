"""The contract suite's report (pytest's JUnit XML, written by ``cfnrun test``): which tests did not pass, and why.

Read by ``cfnrun test`` for its summary (``app/contract_suite.py``) and by TestType for its status
(``app/type_tests.py``), which runs the suite in a child process.
"""
from __future__ import annotations

from pathlib import Path
from typing import List

RESULTS_FILE = "test-results.xml"  # in the project's .cfnrun/: the suite's JUnit XML report, read for the summary
MAX_SUMMARY_LINES = 20


def failed_tests(results: Path) -> List[str]:
    """Each failed test of the suite with its reason (pytest's JUnit XML report), for the summary; [] if none or no report."""
    import xml.etree.ElementTree as ElementTree  # our own pytest's report, not input from elsewhere

    try:
        cases = ElementTree.parse(results).getroot().iter("testcase")
    except (OSError, ElementTree.ParseError):
        return []
    failed = []
    for case in cases:
        for kind in ("failure", "error"):
            found = case.find(kind)
            if found is not None:
                reason = " ".join((found.get("message") or found.text or "").split())
                shown = reason if len(reason) <= 200 else reason[:199] + "…"
                failed.append(f"  {case.get('name')} ({'failed' if kind == 'failure' else 'error'}): {shown}")
                break
    if not failed:
        return []
    return [f"cfnrun test: {len(failed)} test(s) did not pass:", *failed[:MAX_SUMMARY_LINES]] + (
        [f"  … and {len(failed) - MAX_SUMMARY_LINES} more"] if len(failed) > MAX_SUMMARY_LINES else []
    )
