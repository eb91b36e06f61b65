"""A MODULE project's template fragment (``fragments/``), read and checked as cloudformation-cli checks it.

``cfn init --artifact-type MODULE`` makes a project whose one template fragment, under
``fragments/`` (``.json``, ``.yaml``, ``.yml`` or ``.template``), is what a ``...::MODULE``
resource expands into. The rules are cloudformation-cli's (``rpdk/core/fragment/``, read
2026-11-26) and the service's for registration: one fragment file of at most 1,500,000 bytes,
a Resources section, a Type for every parameter, at most 500 resources, 200 outputs, 200
mappings of 200 attributes each, and none of: a Transform section, ``Fn::Transform``/
``AWS::Include``, ``Fn::ImportValue``, an output ``Export``, a nested stack
(``AWS::CloudFormation::Stack``) or a macro (``AWS::CloudFormation::Macro``). Every refusal
names the rule broken and where (the file, and the section and name in it).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

from cfnrun.model.errors import ProjectError
from cfnrun.model.template_text import TemplateDecodeError, decode_template

RPDK_CONFIG = ".rpdk-config"
MODULE = "MODULE"
FRAGMENT_DIR = "fragments"
FRAGMENT_EXTENSIONS = (".json", ".yaml", ".yml", ".template")
FRAGMENT_SIZE_LIMIT = 1_500_000  # bytes: cloudformation-cli's TEMPLATE_FILE_SIZE_IN_BYTES_LIMIT
RESOURCE_LIMIT = 500
OUTPUT_LIMIT = MAPPING_LIMIT = MAPPING_ATTRIBUTE_LIMIT = 200
REFUSED_TYPES = {"AWS::CloudFormation::Stack": "a nested stack", "AWS::CloudFormation::Macro": "a macro"}
REFUSED_FUNCTIONS = {"Fn::ImportValue": "Fn::ImportValue", "Fn::Transform": "a transform (Fn::Transform, AWS::Include)"}


@dataclass(frozen=True)
class ModuleFragment:
    """The fragment a module expands into, the file it came from and the module's type name."""

    path: Path
    document: Dict[str, Any]
    type_name: str = ""


def fragment_file(root: Path) -> Path:
    """The one fragment file of the project at ``root``; ProjectError when there is none, or more than one."""
    folder = root / FRAGMENT_DIR
    found = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in FRAGMENT_EXTENSIONS) if folder.is_dir() else []
    if not found:
        raise ProjectError(folder, f"a module needs one template fragment here, a file ending in {', '.join(FRAGMENT_EXTENSIONS)}")
    if len(found) > 1:
        names = ", ".join(str(p.relative_to(root)) for p in found)
        raise ProjectError(folder, f"a module has exactly one template fragment; found {len(found)}: {names}")
    return found[0]


def is_module_project(root: Path) -> bool:
    """True when ``root``'s .rpdk-config says ``artifact_type: MODULE`` (what ``cfn init`` writes for a module)."""
    try:
        config = json.loads((root / RPDK_CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get("artifact_type") == MODULE


def module_type_name(root: Path) -> str:
    """The ``...::MODULE`` type name of a module project (its .rpdk-config ``typeName``)."""
    try:
        config = json.loads((root / RPDK_CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ProjectError(root / RPDK_CONFIG, f"a module project's .rpdk-config cannot be read: {error}") from None
    type_name = config.get("typeName") if isinstance(config, dict) else None
    if not isinstance(type_name, str) or not type_name.endswith("::MODULE"):
        raise ProjectError(root / RPDK_CONFIG, f"a module's typeName ends in ::MODULE (Org::Service::Name::MODULE); found {type_name!r}")
    return type_name


def check_module_fragment(root: Path) -> Tuple[Path, Dict[str, Any], List[str]]:
    """The fragment file, its document and every rule it breaks (``where: rule``); ProjectError when it cannot be read."""
    path = fragment_file(root)
    size = path.stat().st_size
    if size > FRAGMENT_SIZE_LIMIT:
        raise ProjectError(path, f"the fragment is {size:,} bytes; a module's fragment is at most {FRAGMENT_SIZE_LIMIT:,} bytes")
    try:
        document = decode_template(path.read_text(encoding="utf-8"))
    except TemplateDecodeError as error:
        where = f" (line {error.line}, column {error.column})" if error.line is not None else ""
        raise ProjectError(path, f"the fragment is not {error.syntax}: {error.problem}{where}") from None
    if not isinstance(document, dict):
        raise ProjectError(path, "the fragment must be a template: a JSON object or a YAML mapping")
    return path, document, list(fragment_problems(document))


def read_module_fragment(root: Path) -> ModuleFragment:
    """The project's fragment, checked; ProjectError naming the rule broken and where."""
    type_name = module_type_name(root)
    path, document, problems = check_module_fragment(root)
    if problems:
        raise ProjectError(path, "; ".join(problems))
    return ModuleFragment(path, document, type_name)


def fragment_problems(document: Dict[str, Any]) -> Iterator[str]:
    """What breaks the fragment rules, each with the rule and where."""
    if "Transform" in document or "transform" in document:
        yield "Transform: a module's fragment cannot declare transforms"
    resources = document.get("Resources")
    if not isinstance(resources, dict) or not resources:
        yield "Resources: a module's fragment must have a Resources section with at least one resource"
        resources = {}
    yield from _over_limit("Resources", resources, RESOURCE_LIMIT)
    for logical_id, resource in resources.items():
        type_name = resource.get("Type") if isinstance(resource, dict) else None
        if not isinstance(type_name, str):
            yield f"Resources.{logical_id}: every resource needs a Type"
        elif type_name in REFUSED_TYPES:
            yield f"Resources.{logical_id}: a module's fragment cannot contain {REFUSED_TYPES[type_name]} ({type_name})"
    parameters = document.get("Parameters")
    for name, declared in (parameters or {}).items() if isinstance(parameters, dict) else ():
        if not isinstance(declared, dict) or "Type" not in declared:
            yield f"Parameters.{name}: every parameter of a module's fragment needs a Type"
    outputs = document.get("Outputs")
    if isinstance(outputs, dict):
        yield from _over_limit("Outputs", outputs, OUTPUT_LIMIT)
        for name, output in outputs.items():
            if isinstance(output, dict) and "Export" in output:
                yield f"Outputs.{name}.Export: a module's fragment cannot export values"
    mappings = document.get("Mappings")
    if isinstance(mappings, dict):
        yield from _over_limit("Mappings", mappings, MAPPING_LIMIT)
        for name, mapping in mappings.items():
            if isinstance(mapping, dict):
                yield from _over_limit(f"Mappings.{name}", mapping, MAPPING_ATTRIBUTE_LIMIT)
    for where, function in _functions(document, ""):
        yield f"{where}: a module's fragment cannot use {REFUSED_FUNCTIONS[function]}"


def _over_limit(where: str, block: Dict[str, Any], limit: int) -> List[str]:
    return [f"{where}: {len(block)} entries; a module's fragment has at most {limit}"] if len(block) > limit else []


def _functions(value: Any, where: str) -> Iterator[Tuple[str, str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{where}.{key}" if where else str(key)
            if key in REFUSED_FUNCTIONS:
                yield here, key
            else:
                yield from _functions(item, here)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _functions(item, f"{where}[{index}]")
