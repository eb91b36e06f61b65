"""The plain Lambda functions of a SAM or CloudFormation template, which ``cfnrun serve --functions`` serves.

Custom resources (their ServiceToken is a function's ARN) and Lambda hooks call such functions
with ``(event, context)``, as a resource type's TypeFunction is called: they run on the same warm
workers. Each function runs from its own code folder (SAM's ``CodeUri``, or the local path in an
``AWS::Lambda::Function``'s ``Code`` before ``aws cloudformation package``), relative to the
template. Only Python functions run; anything else is refused when serve starts, naming the
function and the template.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Set

from cfnrun.model.errors import ProjectError
from cfnrun.model.template import SERVERLESS_FUNCTION, FunctionSpec, function_named, load_template


@dataclass(frozen=True)
class FunctionTemplate:
    """A template's plain functions, keyed by logical id; a ``FunctionSource`` for their registry."""

    path: Path
    functions: Dict[str, FunctionSpec]

    @property
    def root(self) -> Path:
        """The template's folder: the functions run there, as ``sam local`` runs them."""
        return self.path.parent

    @property
    def code_dir(self) -> Path:
        return self.root  # each function names its own (``FunctionSpec.code_dir``)

    @property
    def config_files(self) -> Set[Path]:
        return {self.path}

    @property
    def code_dirs(self) -> Set[Path]:
        return {spec.code_dir or self.root for spec in self.functions.values()}

    def find_function(self, name: str) -> Optional[FunctionSpec]:
        return function_named(self.functions, name)

    def function_names(self) -> List[str]:
        return [name for spec in self.functions.values() for name in spec.names]

    def read_again(self) -> "FunctionTemplate":
        return load_function_template(self.path)


def load_function_template(path: Path) -> FunctionTemplate:
    """The template's Python functions, each with its code folder; ProjectError naming the function for one cfnrun cannot run."""
    from cfnrun.model.template_text import read_template  # PyYAML loads only when a template is read

    path = path.resolve()
    if not path.is_file():
        raise ProjectError(path, "--functions template not found")
    functions = load_template(path)
    document = read_template(path)
    resources = document["Resources"]
    globals_ = ((document.get("Globals") or {}).get("Function")) or {}
    placed = {}
    for logical_id, spec in functions.items():
        resource = resources[logical_id]
        serverless = resource["Type"] == SERVERLESS_FUNCTION
        properties = {**(globals_ if serverless else {}), **(resource.get("Properties") or {})}
        where = f"Resources.{logical_id}"
        _require_python(properties.get("Runtime"), where, path)
        code = _code_folder(properties.get("CodeUri" if serverless else "Code"), "CodeUri" if serverless else "Code", where, path)
        placed[logical_id] = dataclasses.replace(spec, code_dir=code)
    return FunctionTemplate(path, placed)


def _require_python(runtime: Any, where: str, path: Path) -> None:
    if not isinstance(runtime, str):
        raise ProjectError(path, f"{where}: Runtime is missing; cfnrun serves Python functions (Runtime: python3.x)")
    if not runtime.startswith("python"):
        raise ProjectError(path, f"{where}: Runtime {runtime} is not Python; cfnrun serves Python functions only (Runtime: python3.x)")


def _code_folder(location: Any, key: str, where: str, path: Path) -> Path:
    """The local folder ``location`` names, relative to the template."""
    if location is None:
        raise ProjectError(path, f"{where}: {key} is missing; cfnrun runs a function from a local folder ({key}: src/)")
    if not isinstance(location, str):
        raise ProjectError(
            path, f"{where}: {key} is not a local folder ({type(location).__name__}); cfnrun runs a function from a local folder ({key}: src/)"
        )
    folder = (path.parent / location).resolve()
    if not folder.is_dir():
        raise ProjectError(path, f"{where}: {key} {location} is not a folder (looked for {folder})")
    return folder
