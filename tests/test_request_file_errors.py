"""A JSON typo in a request file is reported as JSON, with line and column (#30.6), not as "this is YAML"."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import pytest

from conftest import cfnrun


@pytest.mark.parametrize(
    ("text", "said", "line"),
    [
        ('{\n    "desiredResourceState": {\n        "Title": "x",\n    }\n}\n',
         "not valid JSON: Expecting property name enclosed in double quotes at line 4 column 5 (a trailing comma before it", "    }")
        if sys.version_info < (3, 13)  # Python 3.13's json names the comma itself
        else ('{\n    "desiredResourceState": {\n        "Title": "x",\n    }\n}\n',
              "not valid JSON: Illegal trailing comma before end of object at line 3 column 21", '        "Title": "x",'),
        ('{\n    "desiredResourceState": {\n        "Title": hello\n    }\n}\n', "not valid JSON: Expecting value at line 3 column 18",
         '        "Title": hello'),
    ],
    ids=["trailing-comma", "unquoted-value"],
)
def test_a_json_typo_is_reported_where_it_is(sample: Callable[[str], Path], tmp_path: Path, text: str, said: str, line: str) -> None:
    project = sample("note")
    request = tmp_path / "create.json"
    request.write_text(text)
    run = cfnrun("invoke", "CREATE", str(request), cwd=project)
    assert run.returncode == 2, run.stdout + run.stderr
    assert said in run.stderr and "YAML" not in run.stderr, run.stderr
    shown = run.stderr.splitlines()
    at = shown.index(f"  {line}")
    caret = shown[at + 1]
    assert caret.endswith("^") and len(caret) - 2 == int(said.split("column ")[1].split()[0])  # under the column named


def test_a_yaml_request_file_is_still_told_to_become_json(sample: Callable[[str], Path], tmp_path: Path) -> None:
    request = tmp_path / "create.yaml"
    request.write_text("desiredResourceState:\n  Title: x\n")
    run = cfnrun("invoke", "CREATE", str(request), cwd=sample("note"))
    assert run.returncode == 2 and "this is YAML" in run.stderr, run.stderr
