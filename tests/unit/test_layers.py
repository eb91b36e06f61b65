"""The import contract (lint-imports, in CI) places every part of cfnrun: a new package must take its layer."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import cfnrun

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.9/3.10 runs
    tomllib = None


def _contracts() -> list:
    root = Path(cfnrun.__file__).parent
    return [c for c in tomllib.loads((root.parent / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]


def _placed(contract: dict) -> set:
    return {name.strip() for layer in contract["layers"] for name in re.split(r"[|:]", layer.split("#")[0])}


def _parts(folder: Path, prefix: str) -> set:
    parts = {f"{prefix}{p.name}" for p in folder.iterdir() if (p / "__init__.py").exists()}
    return parts | {f"{prefix}{p.stem}" for p in folder.glob("*.py") if p.stem != "__init__"}


def test_every_package_and_top_module_has_a_layer() -> None:
    if tomllib is None:
        return
    [top] = [c for c in _contracts() if not c.get("containers")]
    assert _parts(Path(cfnrun.__file__).parent, "cfnrun.") - _placed(top) == set(), "place these in pyproject.toml's layers contract"


def test_every_part_of_app_has_a_layer_inside_app() -> None:
    if tomllib is None:
        return
    [app] = [c for c in _contracts() if c.get("containers") == ["cfnrun.app"]]
    assert _parts(Path(cfnrun.__file__).parent / "app", "") - _placed(app) == set(), "place these in the app/ layers contract"
