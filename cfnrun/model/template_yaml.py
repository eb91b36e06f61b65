"""A SAM template's YAML, CloudFormation's short-form tags (!Ref, !Sub, ...) included."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import yaml

from cfnrun.model.errors import ProjectError


class _TemplateLoader(yaml.SafeLoader):
    """YAML loader that understands CloudFormation's short-form tags."""


def _intrinsic(loader: yaml.Loader, suffix: str, node: yaml.Node) -> Dict[str, Any]:
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    return {name: value}


_TemplateLoader.add_multi_constructor("!", _intrinsic)


def read_template(path: Path) -> Any:
    """The template's document; a ProjectError with the line and column when it is not YAML."""
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_TemplateLoader)
    except FileNotFoundError:
        raise ProjectError(path, "template not found") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise ProjectError(path, f"not valid YAML{where}: {problem}") from None
