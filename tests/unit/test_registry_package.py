"""The package RegisterType unpacks: every way out of its folder is refused before anything is written (#34)."""
from __future__ import annotations

import io
import json
import stat
import zipfile
from pathlib import Path
from typing import Dict

import pytest

from cfnrun.registry import package
from cfnrun.registry.package import PackageError, unpack

CONFIG = {"typeName": "Org::Svc::Thing", "artifact_type": "RESOURCE", "entrypoint": "thing.handlers.resource"}


def _zip(members: Dict[str, bytes], link: str = "") -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        if link:
            info = zipfile.ZipInfo(link)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return out.getvalue()


def _package(**extra: bytes) -> Dict[str, bytes]:
    bundle = _zip({"thing/__init__.py": b"", "thing/handlers.py": b"resource = None\n"})
    return {".rpdk-config": json.dumps(CONFIG).encode(), "schema.json": json.dumps({"typeName": "Org::Svc::Thing"}).encode(),
            "ResourceProvider.zip": bundle, **extra}


def test_a_package_unpacks_with_its_handler_bundle_in_code(tmp_path: Path) -> None:
    unpacked = unpack(_zip(_package()), tmp_path / "v1", "RESOURCE", "Org::Svc::Thing")
    assert (unpacked.code / "thing" / "handlers.py").read_text() == "resource = None\n"
    assert unpacked.config["entrypoint"] == "thing.handlers.resource"


@pytest.mark.parametrize("name", ["../escaped.txt", "/tmp/escaped.txt", "a/../../escaped.txt", "C:/escaped.txt"])
def test_a_member_outside_the_folder_is_refused_and_nothing_is_written(tmp_path: Path, name: str) -> None:
    with pytest.raises(PackageError, match="outside its own folder"):
        unpack(_zip(_package(**{name: b"x"})), tmp_path / "in" / "v1", "RESOURCE", "Org::Svc::Thing")
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == []


def test_a_member_outside_the_folder_in_the_handler_bundle_is_refused(tmp_path: Path) -> None:
    members = _package(**{"ResourceProvider.zip": _zip({"../../escaped.py": b"x"})})
    with pytest.raises(PackageError, match="ResourceProvider.zip has a member outside"):
        unpack(_zip(members), tmp_path / "v1", "RESOURCE", "Org::Svc::Thing")
    assert not (tmp_path / "escaped.py").exists()


def test_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PackageError, match="symbolic link"):
        unpack(_zip(_package(), link="src/passwd"), tmp_path / "v1", "RESOURCE", "Org::Svc::Thing")


def test_more_than_lambdas_unzipped_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(package, "UNPACKED_LIMIT", 100)
    with pytest.raises(PackageError, match="unpacks to more than"):
        unpack(_zip(_package(**{"big.bin": b"x" * 200})), tmp_path / "v1", "RESOURCE", "Org::Svc::Thing")


def test_a_package_of_another_type_or_kind_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PackageError, match="registered as TypeName Org::Svc::Other"):
        unpack(_zip(_package()), tmp_path / "a", "RESOURCE", "Org::Svc::Other")
    with pytest.raises(PackageError, match="is a RESOURCE project"):
        unpack(_zip(_package()), tmp_path / "b", "HOOK", "Org::Svc::Thing")
