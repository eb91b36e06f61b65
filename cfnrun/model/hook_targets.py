"""A hook's targets: the ``targetNames`` its schema declares, and the target schemas in the project.

Target schemas come from where cloudformation-cli keeps them in a hook project, never
from the registry: ``target-schemas/*.json`` (each names its ``typeName``) and the
``Schema`` entries of ``target-info.json``. For ``cfnrun test``, an AWS::* target the project
holds no schema for takes the one cloudformation-cli or cfn-lint ships
(``bundled_target_schemas``), so a fresh ``cfn init`` hook runs the suite offline; the contract
checker checks target models against the project's own schemas only.
"""
from __future__ import annotations

import copy
import fnmatch
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

from cfnrun.model.aws_type_schemas import AwsTypeSchemas
from cfnrun.model.action import Action
from cfnrun.model.schema import ResourceSchema

TARGET_SCHEMAS_FOLDER = "target-schemas"
TARGET_INFO_FILE = "target-info.json"
STACK_LEVEL_TARGETS = ("STACK", "CHANGE_SET")  # not resource types: no schema to find
_BUNDLED = AwsTypeSchemas()


@dataclass(frozen=True)
class HookTarget:
    """The target one hook invocation is about, as the contract checker sees it."""

    name: str  # e.g. AWS::S3::Bucket
    declared: List[str]  # the handler's targetNames (wildcards allowed)
    schema: Optional[Dict[str, Any]]  # the target type's schema, when the project has it

    @property
    def supported(self) -> bool:
        return any(fnmatch.fnmatchcase(self.name, pattern) for pattern in self.declared)


def target_names(schema: ResourceSchema, point: Action) -> List[str]:
    entry = schema.handler(point) or {}
    names = entry.get("targetNames")
    return [name for name in names if isinstance(name, str)] if isinstance(names, list) else []


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # cfn generate and cfn test report a broken target file; the checker just goes without it


def target_schemas(root: Path) -> Dict[str, Dict[str, Any]]:
    """Target type name → schema, from target-schemas/ and target-info.json."""
    found: Dict[str, Dict[str, Any]] = {}
    info = _read_json(root / TARGET_INFO_FILE)
    if isinstance(info, dict):
        for name, entry in info.items():
            if isinstance(entry, dict) and isinstance(entry.get("Schema"), dict):
                found[name] = entry["Schema"]
    folder = root / TARGET_SCHEMAS_FOLDER
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        document = _read_json(path)
        if isinstance(document, dict) and isinstance(document.get("typeName"), str):
            found[document["typeName"]] = document
    return found


def _listed(root: Path) -> List[str]:
    """The target types target-info.json names."""
    info = _read_json(root / TARGET_INFO_FILE)
    return sorted(info) if isinstance(info, dict) else []


def hook_target(root: Path, schema: ResourceSchema, point: Action, name: str) -> HookTarget:
    return HookTarget(name, target_names(schema, point), target_schemas(root).get(name))


def known_target_schemas(root: Path, schema: ResourceSchema) -> Dict[str, Dict[str, Any]]:
    """The project's target schemas, and cfn-lint's for the declared AWS targets it holds none for."""
    return {**bundled_target_schemas(root, schema), **target_schemas(root)}


def bundled_target_schemas(root: Path, schema: ResourceSchema) -> Dict[str, Dict[str, Any]]:
    """The shipped schemas of the declared targets the project holds none for (a wildcard: the types target-info.json lists
    for it, as cfn test expands it from there)."""
    own = target_schemas(root)
    wanted = []
    for name in _declared_anywhere(schema):
        wanted += fnmatch.filter(_listed(root), name) if "*" in name or "?" in name else [name]
    found = {name: _shipped_schema(name) for name in wanted if name not in own}
    return {name: document for name, document in found.items() if document is not None}


def _shipped_schema(name: str) -> Optional[Dict[str, Any]]:
    """cloudformation-cli's own example schema for the type (it ships AWS::S3::Bucket's), else cfn-lint's.

    cfn-lint adds relationship formats ("format": "AWS::KMS::Key.Arn") that are not JSON Schema formats, and cfn
    test's input generator stops on a format it does not know (KeyError): they are left out of the copy used here.
    """
    try:
        from importlib import resources

        shipped = resources.files("rpdk.core") / "data" / "examples" / "hook" / "targets" / f"{name.lower().replace('::', '-')}.json"
        document = json.loads(shipped.read_text(encoding="utf-8"))
        if isinstance(document, dict) and document.get("typeName") == name:
            return document
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError, ValueError):
        pass
    bundled = _BUNDLED.document(name)
    return _without_lint_formats(copy.deepcopy(bundled)) if bundled is not None else None


def _without_lint_formats(value: Any) -> Any:
    if isinstance(value, dict):
        if isinstance(value.get("format"), str) and value["format"].startswith("AWS::"):
            del value["format"]
        for child in value.values():
            _without_lint_formats(child)
    elif isinstance(value, list):
        for child in value:
            _without_lint_formats(child)
    return value


def _declared_anywhere(schema: ResourceSchema) -> List[str]:
    handlers = schema.document.get("handlers")
    names = {
        name
        for entry in (handlers.values() if isinstance(handlers, dict) else [])
        if isinstance(entry, dict) and isinstance(entry.get("targetNames"), list)
        for name in entry["targetNames"]
        if isinstance(name, str) and name not in STACK_LEVEL_TARGETS
    }
    return sorted(names)


def undescribed_targets(root: Path, schema: ResourceSchema) -> List[str]:
    """What the project lacks for cfn test to find every target without the registry, one line each."""
    schemas = known_target_schemas(root, schema)
    listed = _listed(root)
    problems = []
    for name in _declared_anywhere(schema):
        if "*" in name or "?" in name:
            matched = fnmatch.filter(listed, name)
            if not matched:
                problems.append(f"{name}: no type in {TARGET_INFO_FILE} matches it (list the target types it stands for there)")
            problems += [f"{match}: no schema in {TARGET_SCHEMAS_FOLDER}/ or {TARGET_INFO_FILE}" for match in matched if match not in schemas]
        elif name not in schemas:
            problems.append(f"{name}: no schema in {TARGET_SCHEMAS_FOLDER}/ or {TARGET_INFO_FILE}")
    return problems
