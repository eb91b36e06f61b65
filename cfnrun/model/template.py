"""The provider's SAM template: which functions exist and how each one is configured."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Protocol, Set

from cfnrun.model.errors import ProjectError

SERVERLESS_FUNCTION = "AWS::Serverless::Function"
FUNCTION_TYPES = (SERVERLESS_FUNCTION, "AWS::Lambda::Function")
DEFAULT_MEMORY_MB = 128
SAM_DEFAULT_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class FunctionSpec:
    """One Lambda function of the provider, by its template logical id."""

    logical_id: str
    handler: str
    timeout_s: Optional[float] = None
    memory_mb: int = DEFAULT_MEMORY_MB
    environment: Dict[str, str] = field(default_factory=dict)
    function_name: Optional[str] = None
    runtime: Optional[str] = None
    code_dir: Optional[Path] = None  # a plain function's own code folder (its CodeUri); None: its project's

    @property
    def names(self) -> List[str]:
        """Every name an Invoke call may use for this function."""
        names = [self.logical_id]
        if self.function_name and self.function_name != self.logical_id:
            names.append(self.function_name)
        return names


def called_name(name: str) -> str:
    """The function name an Invoke call means: from a name, a qualified name (``NAME:QUALIFIER``) or an ARN."""
    parts = name.split(":")
    if name.startswith("arn:"):  # arn:aws:lambda:REGION:ACCOUNT:function:NAME[:QUALIFIER]
        name = parts[6] if len(parts) > 6 else name
    elif len(parts) > 2 and parts[1] == "function":  # partial ARN ACCOUNT:function:NAME[:QUALIFIER]
        name = parts[2]
    return name.split(":", 1)[0]


def function_named(functions: Dict[str, FunctionSpec], name: str) -> Optional[FunctionSpec]:
    """The function of ``functions`` an Invoke call names (by logical id or FunctionName, as a qualified name or ARN too)."""
    bare = called_name(name)
    return next((spec for spec in functions.values() if bare in spec.names), None)


class FunctionSource(Protocol):
    """Where served functions come from, each with a pool of warm workers: a provider project, or a template of plain functions.

    It says what runs the functions (``code_dir``, the folder they run in), which files a reload
    watches, and how to read itself again after one of its configuration files changed.
    """

    @property
    def root(self) -> Path: ...

    @property
    def code_dir(self) -> Path: ...

    @property
    def functions(self) -> Dict[str, FunctionSpec]: ...

    @property
    def config_files(self) -> Set[Path]: ...

    @property
    def code_dirs(self) -> Set[Path]: ...

    def find_function(self, name: str) -> Optional[FunctionSpec]: ...

    def function_names(self) -> List[str]: ...

    def read_again(self) -> "FunctionSource": ...


def _environment(properties: Dict[str, Any], where: str, path: Path) -> Dict[str, str]:
    variables = ((properties.get("Environment") or {}).get("Variables")) or {}
    if not isinstance(variables, dict):
        raise ProjectError(path, f"{where}.Environment.Variables must be a mapping")
    env: Dict[str, str] = {}
    for key, value in variables.items():
        if isinstance(value, (dict, list)):
            continue  # an intrinsic function: only CloudFormation can resolve it
        env[str(key)] = "" if value is None else (str(value).lower() if isinstance(value, bool) else str(value))
    return env


def _number(value: Any, where: str, path: Path) -> Optional[float]:
    if value is None or isinstance(value, dict):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ProjectError(path, f"{where} must be a number, got {value!r}") from None


def load_template(path: Path) -> Dict[str, FunctionSpec]:
    """Functions declared in a SAM template, keyed by logical id, with Globals applied."""
    from cfnrun.model.template_text import read_template  # PyYAML loads only when a template is read

    document = read_template(path)
    if not isinstance(document, dict) or not isinstance(document.get("Resources"), dict):
        raise ProjectError(path, "the template has no Resources section")
    globals_ = ((document.get("Globals") or {}).get("Function")) or {}
    functions: Dict[str, FunctionSpec] = {}
    for logical_id, resource in document["Resources"].items():
        if not isinstance(resource, dict) or resource.get("Type") not in FUNCTION_TYPES:
            continue
        applied = globals_ if resource["Type"] == SERVERLESS_FUNCTION else {}  # SAM's Globals: its own functions only
        properties = {**applied, **(resource.get("Properties") or {})}
        if "Environment" in applied and "Environment" in (resource.get("Properties") or {}):
            properties["Environment"] = {
                "Variables": {
                    **_environment(applied, "Globals.Function", path),
                    **_environment(resource["Properties"], f"Resources.{logical_id}.Properties", path),
                }
            }
        where = f"Resources.{logical_id}.Properties"
        handler = properties.get("Handler")
        if not isinstance(handler, str) or not handler:
            raise ProjectError(path, f"{where}.Handler is missing")
        timeout = _number(properties.get("Timeout"), f"{where}.Timeout", path)
        memory = _number(properties.get("MemorySize"), f"{where}.MemorySize", path)
        function_name = properties.get("FunctionName")
        functions[logical_id] = FunctionSpec(
            logical_id=logical_id,
            handler=handler,
            timeout_s=SAM_DEFAULT_TIMEOUT_S if timeout is None else timeout,
            memory_mb=int(memory) if memory else DEFAULT_MEMORY_MB,
            environment=_environment(properties, where, path),
            function_name=function_name if isinstance(function_name, str) else None,
            runtime=properties.get("Runtime") if isinstance(properties.get("Runtime"), str) else None,
        )
    if not functions:
        raise ProjectError(path, "the template declares no AWS::Serverless::Function")
    return functions
