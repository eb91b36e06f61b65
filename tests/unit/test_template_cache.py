"""``model/template_cache.py``: the early start's copy of a template's functions, right or a miss."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from cfnrun.model import template_cache
from cfnrun.model.errors import ProjectError
from cfnrun.model.template import load_template

TEMPLATE = """\
Globals:
  Function:
    Timeout: 60
    Environment:
      Variables:
        SHARED: one
Resources:
  TypeFunction:
    Type: AWS::Serverless::Function
    Properties:
      Handler: pkg.handlers.resource
      MemorySize: 256
      Runtime: python3.11
      Environment:
        Variables:
          ONLY_HERE: !Ref Something
          PLAIN: two
"""


@pytest.fixture
def template(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(template_cache.CACHE_ENV, str(tmp_path / "cache"))
    path = tmp_path / "project" / "template.yml"
    path.parent.mkdir()
    path.write_text(TEMPLATE)
    return path


def entries() -> list:
    folder = template_cache.cache_folder()
    return sorted(folder.glob("*.json")) if folder is not None and folder.is_dir() else []


def test_a_miss_reads_the_template_and_a_hit_returns_the_same_functions(template: Path) -> None:
    first = template_cache.cached_functions(template)
    assert first == load_template(template)
    [entry] = entries()
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600 and stat.S_IMODE(entry.parent.stat().st_mode) == 0o700
    assert template_cache.cached_functions(template) == first


def test_a_hit_does_not_read_the_template(template: Path) -> None:
    template_cache.cached_functions(template)
    [entry] = entries()
    data = json.loads(entry.read_text())
    data["functions"][0]["handler"] = "from.the.cache"  # what only the cache says
    entry.write_text(json.dumps(data))
    assert template_cache.cached_functions(template)["TypeFunction"].handler == "from.the.cache"


def test_an_edit_is_a_miss_even_within_the_same_size(template: Path) -> None:
    template_cache.cached_functions(template)
    before = template.stat().st_mtime_ns
    template.write_text(TEMPLATE.replace("Timeout: 60", "Timeout: 90"))  # same size, new content
    # Two writes within one tick of the kernel's file clock keep the times: the guess is then stale,
    # which costs a process, never a different run (tests/test_fast_start.py). Here the clock moved on.
    os.utime(template, ns=(before + 1_000_000, before + 1_000_000))
    assert template_cache.cached_functions(template)["TypeFunction"].timeout_s == 90.0


def test_an_editor_save_that_replaces_the_file_is_a_miss(template: Path) -> None:
    template_cache.cached_functions(template)
    replacement = template.with_name("template.yml.new")
    replacement.write_text(TEMPLATE.replace("Timeout: 60", "Timeout: 90"))
    os.utime(replacement, ns=(template.stat().st_atime_ns, template.stat().st_mtime_ns))  # even with the old times
    os.replace(replacement, template)
    assert template_cache.cached_functions(template)["TypeFunction"].timeout_s == 90.0


@pytest.mark.parametrize("content", ["not json", "{}", '{"path": 1}', "[]", "another format"])
def test_a_broken_or_foreign_entry_is_a_miss(template: Path, content: str) -> None:
    template_cache.cached_functions(template)
    [entry] = entries()
    if content == "another format":
        data = json.loads(entry.read_text())
        data["format"] = template_cache.FORMAT + 1
        data["functions"][0]["handler"] = "from.the.cache"
        content = json.dumps(data)
    entry.write_text(content)
    assert template_cache.cached_functions(template) == load_template(template)


def test_an_unwritable_cache_is_no_error(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a file, not a folder"
    blocker.write_text("")
    monkeypatch.setenv(template_cache.CACHE_ENV, str(blocker))
    assert template_cache.cached_functions(template) == load_template(template)


def test_a_template_that_is_not_there_or_broken_says_so_as_without_the_cache(template: Path) -> None:
    with pytest.raises(ProjectError, match="template not found"):
        template_cache.cached_functions(template.with_name("missing.yml"))
    template.write_text("Resources: [")
    with pytest.raises(ProjectError, match="not valid YAML at line"):
        template_cache.cached_functions(template)


def test_the_early_guess_loads_no_yaml_once_the_template_is_cached(template: Path) -> None:
    project = template.parent
    (project / ".rpdk-config").write_text(json.dumps({"typeName": "Org::Svc::Thing", "language": "python39", "entrypoint": "pkg.handlers.resource"}))
    (project / "org-svc-thing.json").write_text(json.dumps({
        "typeName": "Org::Svc::Thing", "description": "d", "additionalProperties": False,
        "properties": {"Id": {"type": "string"}}, "primaryIdentifier": ["/properties/Id"], "readOnlyProperties": ["/properties/Id"],
    }))
    guess = (
        "import sys; from cfnrun.app import early_start; "
        "spec = early_start.early_spec(['LIST', '--region', 'us-east-1', '-p', sys.argv[1]]); "
        "print(spec.handler, 'yaml' in sys.modules)"
    )
    runs = [subprocess.run([sys.executable, "-c", guess, str(project)], capture_output=True, text=True, env=os.environ, check=True) for _ in range(2)]
    assert [run.stdout.split() for run in runs] == [["pkg.handlers.resource", "True"], ["pkg.handlers.resource", "False"]]


@pytest.mark.parametrize("cache_home", ["relative/cache", ""])
def test_a_relative_or_empty_cache_home_is_ignored_as_xdg_says(
    template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache_home: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(template_cache.CACHE_ENV, cache_home)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert template_cache.cache_folder() == tmp_path / "home" / ".cache" / "cfnrun" / "templates"
    template_cache.cached_functions(template)
    assert not (tmp_path / "relative").exists() and len(entries()) == 1


def test_no_home_folder_means_no_cache(template: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(template_cache.CACHE_ENV)
    monkeypatch.setenv("HOME", "")
    assert template_cache.cached_functions(template) == load_template(template)  # read, nothing written


def test_a_project_path_that_is_not_utf8_is_cached_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(template_cache.CACHE_ENV, str(tmp_path / "cache"))
    folder = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/proj\xff"))
    folder.mkdir()
    (folder / "template.yml").write_text(TEMPLATE)
    first = template_cache.cached_functions(folder / "template.yml")
    assert len(entries()) == 1 and template_cache.cached_functions(folder / "template.yml") == first
