"""A ``--functions`` template read into plain functions: each with its own code folder, or one clear error naming it."""
from __future__ import annotations

from pathlib import Path

import pytest

from cfnrun.model.errors import ProjectError
from cfnrun.model.function_template import load_function_template

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "functions" / "template.yaml"


def test_each_function_runs_from_its_own_folder_with_its_settings() -> None:
    template = load_function_template(FIXTURE)
    echo, plain = template.functions["EchoFunction"], template.functions["PlainFunction"]
    assert (echo.code_dir, echo.function_name, echo.memory_mb, echo.timeout_s) == (FIXTURE.parent / "src", "cfnrun-echo", 256, 5.0)
    assert echo.environment == {"GREETING": "bonjour"}
    assert (plain.code_dir, plain.timeout_s, plain.environment) == (FIXTURE.parent / "src", 3.0, {})  # SAM's Globals are not its
    assert template.config_files == {FIXTURE} and template.code_dirs == {FIXTURE.parent / "src"}


@pytest.mark.parametrize(
    "resource, problem",
    [
        ("Type: AWS::Serverless::Function\n    Properties: {Handler: a.b, Runtime: python3.11, CodeUri: {Bucket: b, Key: k}}",
         "Resources.Fn: CodeUri is not a local folder (dict)"),
        ("Type: AWS::Lambda::Function\n    Properties: {Handler: a.b, Runtime: python3.11, Code: {ZipFile: 'def h(e, c): pass'}}",
         "Resources.Fn: Code is not a local folder (dict)"),
        ("Type: AWS::Lambda::Function\n    Properties: {Handler: a.b, Runtime: python3.11, Code: gone/}",
         "Resources.Fn: Code gone/ is not a folder"),
        ("Type: AWS::Serverless::Function\n    Properties: {Handler: a.b, CodeUri: .}", "Resources.Fn: Runtime is missing"),
        ("Type: AWS::Serverless::Function\n    Properties: {Handler: a.b, Runtime: java17, CodeUri: .}", "Resources.Fn: Runtime java17 is not Python"),
    ],
)
def test_a_function_cfnrun_cannot_run_is_named_with_its_template(tmp_path: Path, resource: str, problem: str) -> None:
    path = tmp_path / "template.yaml"
    path.write_text(f"Resources:\n  Fn:\n    {resource}\n")
    with pytest.raises(ProjectError) as error:
        load_function_template(path)
    assert str(error.value).startswith(f"{path}: {problem}")
