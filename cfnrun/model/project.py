"""Find and load a provider project: .rpdk-config, schema, template.yml, code under src/.

Reads files only; never imports the provider (that happens in worker processes).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Set

from cfnrun.model.errors import ProjectError, not_json
from cfnrun.model.schema import ResourceSchema
from cfnrun.model.template import FunctionSpec, function_named, load_template

RPDK_CONFIG = ".rpdk-config"
TEMPLATE_NAMES = ("template.yml", "template.yaml")
TYPE_FUNCTION = "TypeFunction"
TEST_ENTRYPOINT = "TestEntrypoint"
RESOURCE = "RESOURCE"
HOOK = "HOOK"
ARTIFACT_TYPES = (RESOURCE, HOOK)


@dataclass(frozen=True)
class Project:
    root: Path
    schema: ResourceSchema
    code_dir: Path
    functions: Dict[str, FunctionSpec]
    entrypoint: Optional[str] = None
    test_entrypoint: Optional[str] = None
    artifact_type: str = RESOURCE

    @property
    def is_hook(self) -> bool:
        return self.artifact_type == HOOK

    @property
    def type_name(self) -> str:
        return self.schema.type_name

    def function_names(self) -> List[str]:
        return [name for spec in self.functions.values() for name in spec.names]

    def find_function(self, name: str) -> Optional[FunctionSpec]:
        """A function by logical id or FunctionName, also from a qualified name or ARN."""
        return function_named(self.functions, name)

    @property
    def config_files(self) -> Set[Path]:
        """.rpdk-config, template.yml and the schema: a save of one rereads the project."""
        files = {self.root / RPDK_CONFIG, *(self.root / name for name in TEMPLATE_NAMES)}
        if self.schema.path is not None:
            files.add(self.schema.path)
        return files

    @property
    def code_dirs(self) -> Set[Path]:
        return {self.code_dir}

    def read_again(self) -> "Project":
        """The project as its files are now (after a save of one of ``config_files``)."""
        return load_project(self.root)

    def function(self, name: str) -> FunctionSpec:
        spec = self.find_function(name)
        if spec is None:
            known = ", ".join(self.function_names()) or "none"
            raise ProjectError(None, f"unknown function '{name}' (this project has: {known})")
        return spec

    def _by_handler(self, handler: Optional[str], fallback: str) -> FunctionSpec:
        for spec in self.functions.values():
            if handler and spec.handler == handler:
                return spec
        return self.function(fallback)

    def type_function(self) -> FunctionSpec:
        """The production entrypoint CloudFormation invokes with a HandlerRequest."""
        return self._by_handler(self.entrypoint, TYPE_FUNCTION)

    def test_function(self) -> FunctionSpec:
        """The test entrypoint that takes sam-tests events."""
        return self._by_handler(self.test_entrypoint, TEST_ENTRYPOINT)


def _read_rpdk_config(path: Path) -> Dict[str, Any]:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ProjectError(path, not_json(error)) from None
    if not isinstance(config, dict):
        raise ProjectError(path, "expected a JSON object")
    artifact = config.get("artifact_type", RESOURCE)
    if artifact not in ARTIFACT_TYPES:
        also = (" (a MODULE project is checked with `cfnrun validate DIR` and served to local stacks with --provider DIR)"
                if artifact == "MODULE" else "")
        raise ProjectError(path, f"artifact_type {artifact} is not supported; cfnrun runs resource types and hooks{also}")
    language = config.get("language")
    if isinstance(language, str) and not language.startswith("python"):
        raise ProjectError(
            path, f"language {language}: cfnrun runs Python providers (projects made with 'cfn init' and the python plugin)"
        )
    for key in ("typeName", "entrypoint"):
        if not isinstance(config.get(key), str):
            raise ProjectError(path, f"'{key}' is missing")
    return config


def schema_file_name(type_name: str) -> str:
    """The schema file name cfn init uses: ``Org::Svc::Res`` → ``org-svc-res.json``."""
    return type_name.replace("::", "-").lower() + ".json"


def _default_functions(config: Dict[str, Any]) -> Dict[str, FunctionSpec]:
    functions = {TYPE_FUNCTION: FunctionSpec(TYPE_FUNCTION, config["entrypoint"])}
    if isinstance(config.get("testEntrypoint"), str):
        functions[TEST_ENTRYPOINT] = FunctionSpec(TEST_ENTRYPOINT, config["testEntrypoint"])
    return functions


def find_project_root(start: Path) -> Optional[Path]:
    """The nearest folder at or above ``start`` that holds .rpdk-config, as git finds .git."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / RPDK_CONFIG).is_file():
            return folder
    return None


def load_project(
    root: Path, usable_schema: bool = True, read_template: Callable[[Path], Dict[str, FunctionSpec]] = load_template
) -> Project:
    """Load the provider project in ``root`` (the folder holding .rpdk-config).

    With ``usable_schema`` (the default) a schema cfnrun cannot validate against is a ProjectError;
    ``cfnrun validate`` turns that off to report every problem itself. ``read_template`` reads the
    template's functions (the early start's guess reads them through ``template_cache``).
    """
    root = root.resolve()
    if not root.is_dir():
        raise ProjectError(root, "project folder not found")
    config_path = root / RPDK_CONFIG
    if not config_path.is_file():
        raise ProjectError(
            config_path,
            "not found: is this a provider project made by 'cfn init'? "
            "Run cfnrun inside the project (or a folder below it), or name it with --project DIR "
            "(for invoke, --handler MODULE.ATTR --schema FILE also runs without one)",
        )
    config = _read_rpdk_config(config_path)
    schema_path = root / schema_file_name(config["typeName"])
    schema = ResourceSchema.load(schema_path)
    if schema.type_name != config["typeName"]:
        raise ProjectError(
            schema_path, f"typeName {schema.type_name} does not match {config['typeName']} in {RPDK_CONFIG}"
        )
    if usable_schema:
        from cfnrun.model.usable_schemas import require_usable  # the early start's guess loads no more than it needs

        require_usable(schema)  # once per unchanged schema
    template_path = next((root / name for name in TEMPLATE_NAMES if (root / name).is_file()), None)
    functions = read_template(template_path) if template_path else _default_functions(config)
    code_dir = root / "src" if (root / "src").is_dir() else root
    return Project(
        root=root,
        schema=schema,
        code_dir=code_dir,
        functions=functions,
        entrypoint=config["entrypoint"],
        test_entrypoint=config.get("testEntrypoint"),
        artifact_type=config.get("artifact_type", RESOURCE),
    )


def handler_project(handler: str, schema_path: Path, code_dir: Path) -> Project:
    """A project made from flags alone: one handler, one schema, a code folder."""
    if "." not in handler:
        raise ProjectError(None, f"--handler '{handler}' must be MODULE.ATTRIBUTE, e.g. my_pkg.handlers.resource")
    schema = ResourceSchema.load(schema_path.resolve())
    from cfnrun.model.usable_schemas import require_usable

    require_usable(schema)
    code_dir = code_dir.resolve()
    if not code_dir.is_dir():
        raise ProjectError(code_dir, "code folder not found")
    return Project(
        root=code_dir,
        schema=schema,
        code_dir=code_dir,
        functions={TYPE_FUNCTION: FunctionSpec(TYPE_FUNCTION, handler)},
        entrypoint=handler,
        test_entrypoint=handler,
    )


def find_request_file(given: str, project_root: Path) -> Optional[str]:
    """The request file as named (or '-'), else relative to the project; None when it is in neither place.

    So ``cfnrun invoke preCreate requests/create.json --project samples/hook`` works from anywhere.
    """
    if given == "-" or Path(given).exists():
        return given
    beside = project_root / given
    return str(beside) if beside.exists() else None
