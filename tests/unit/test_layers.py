"""The import contract (lint-imports, in CI) places every part of cfnrun: a new package must take its layer."""
from __future__ import annotations

import sys
from pathlib import Path

import cfnrun

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.9/3.10 runs
    tomllib = None


def test_every_package_and_top_module_has_a_layer() -> None:
    if tomllib is None:
        return
    root = Path(cfnrun.__file__).parent
    config = tomllib.loads((root.parent / "pyproject.toml").read_text())
    [layers] = [c["layers"] for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    placed = {name.strip() for layer in layers for name in layer.split("#")[0].split("|")}
    parts = {f"cfnrun.{p.name}" for p in root.iterdir() if (p / "__init__.py").exists()}
    parts |= {f"cfnrun.{p.stem}" for p in root.glob("*.py") if p.stem != "__init__"}
    assert parts - placed == set(), "place these in pyproject.toml's layers contract"
