"""The package ``cfn submit`` builds (RegisterType's SchemaHandlerPackage), checked and unpacked inside one folder.

What the package holds (cloudformation-cli's ``Project.submit`` and its Python plugin, read 2026-11-26):
``.rpdk-config`` (the project's settings: typeName, artifact_type, entrypoint), ``schema.json`` (the
type's schema), for a resource type or a hook ``ResourceProvider.zip`` (the Lambda bundle: the handler
package and its dependencies) and for a hook ``target-info.json``/``target-schemas/``, for a module
``fragments/``; ``configuration-schema.json`` when the type declares a typeConfiguration.

Nothing is written outside the folder it is unpacked into: a member with an absolute name, a ``..``
part or a symbolic link is refused (a "zip slip"), and so is a package that unpacks to more than
Lambda's 250 MB. A refusal is a ``PackageError`` whose text is the registration's FAILED description.
"""
from __future__ import annotations

import io
import json
import shutil
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Dict, Optional

from cfnrun.model.errors import CfnrunError

CONFIG = ".rpdk-config"
SCHEMA = "schema.json"
CONFIGURATION_SCHEMA = "configuration-schema.json"
HANDLER_BUNDLE = "ResourceProvider.zip"
CODE = "code"  # where the handler bundle is unpacked: the workers' code folder
UNPACKED_LIMIT = 250 * 1024 * 1024  # bytes: Lambda's limit on a function's unzipped code
RESOURCE, HOOK, MODULE = "RESOURCE", "HOOK", "MODULE"


class PackageError(CfnrunError):
    """Why a package cannot be registered, in the words of a FAILED registration's Description."""


@dataclass(frozen=True)
class Unpacked:
    """A package unpacked in ``root``: its settings, schema and (with handlers) its code folder."""

    root: Path
    kind: str  # RESOURCE, HOOK or MODULE
    type_name: str
    config: Dict[str, Any]
    schema: Dict[str, Any]
    configuration_schema: Optional[Dict[str, Any]]

    @property
    def code(self) -> Path:
        return self.root / CODE


def unpack(data: bytes, into: Path, kind: str, type_name: str) -> Unpacked:
    """Check ``data`` is a package of ``kind`` ``type_name`` and unpack it into ``into`` (made here; left to the caller to remove)."""
    archive = _zip(data, "The schema handler package")
    into.mkdir(parents=True, exist_ok=False)
    _extract(archive, into, "The schema handler package")
    config = _json_member(into, CONFIG)
    schema = _json_member(into, SCHEMA)
    declared_kind = config.get("artifact_type", RESOURCE)
    if declared_kind != kind:
        raise PackageError(f"The package is a {declared_kind} project ({CONFIG} artifact_type), registered as Type {kind}")
    for where, named in ((CONFIG, config.get("typeName")), (SCHEMA, schema.get("typeName"))):
        if named != type_name:
            raise PackageError(f"The package's {where} names typeName {named!r}, registered as TypeName {type_name}")
    configuration = _json_member(into, CONFIGURATION_SCHEMA) if (into / CONFIGURATION_SCHEMA).is_file() else None
    if kind != MODULE:
        if not isinstance(config.get("entrypoint"), str):
            raise PackageError(f"The package's {CONFIG} names no entrypoint: it has no handlers to run")
        bundle = into / HANDLER_BUNDLE
        if not bundle.is_file():
            raise PackageError(f"The package has no handlers: {HANDLER_BUNDLE} is missing (cfn submit builds it)")
        _extract(_zip(bundle.read_bytes(), HANDLER_BUNDLE), into / CODE, HANDLER_BUNDLE)
    return Unpacked(into, kind, type_name, config, schema, configuration)


def _zip(data: bytes, what: str) -> zipfile.ZipFile:
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise PackageError(f"{what} is not a zip file")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as error:
        raise PackageError(f"{what} is not a readable zip file: {error}") from None
    if sum(member.file_size for member in archive.infolist()) > UNPACKED_LIMIT:
        raise PackageError(f"{what} unpacks to more than {UNPACKED_LIMIT // (1024 * 1024)} MB (Lambda's limit on unzipped code)")
    return archive


def _extract(archive: zipfile.ZipFile, into: Path, what: str) -> None:
    """Every member written below ``into``; a member that would land elsewhere is refused before anything is written."""
    base = into.resolve()
    for member in archive.infolist():
        parts = PurePosixPath(member.filename.replace("\\", "/")).parts
        if member.filename.startswith(("/", "\\")) or ".." in parts or (parts and ":" in parts[0]):
            raise PackageError(f"{what} has a member outside its own folder: {member.filename!r} (refused: nothing is unpacked outside)")
        if stat.S_ISLNK(member.external_attr >> 16):
            raise PackageError(f"{what} has a symbolic link: {member.filename!r} (refused: nothing is unpacked outside)")
    for member in archive.infolist():
        target = base.joinpath(*PurePosixPath(member.filename.replace("\\", "/")).parts)
        if member.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with archive.open(member) as source, open(target, "wb") as written:
            shutil.copyfileobj(source, written)


def _json_member(root: Path, name: str) -> Dict[str, Any]:
    path = root / name
    if not path.is_file():
        raise PackageError(f"The package has no {name} (is it what cfn submit builds?)")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise PackageError(f"The package's {name} is not JSON: {error}") from None
    if not isinstance(document, dict):
        raise PackageError(f"The package's {name} is not a JSON object")
    return document
