"""The registry schemas of AWS::* resource types, as cfn-lint ships them: offline, no DescribeType.

cfn-lint carries the registry schema of every AWS type (``cfnlint/data/schemas``: an index per
region naming a schema file per type). Only the JSON files are read; cfn-lint itself is not
imported: its package's ``__init__`` loads the whole linter (about a second of CPU), so the folder is found
from the package's import spec, which locates it without running it. Local stacks read createOnly and writeOnly properties from them; a hook's targets,
when the project holds no schema of its own for them, are checked and tested against them.
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Dict, List, Optional

LINT_PACKAGE = "cfnlint"
DATA_FOLDER = ("data", "schemas")
INDEX_REGION = "us-east-1"  # the region whose index lists the most types


class AwsTypeSchemas:
    """Schema documents by type name, read once each."""

    def __init__(self, region: str = INDEX_REGION) -> None:
        self.region = region
        self._index: Optional[Dict[str, str]] = None
        self._documents: Dict[str, Optional[Dict[str, Any]]] = {}

    @staticmethod
    def _read(*parts: str) -> Optional[Any]:
        folder = _data_folder()
        if folder is None:
            return None
        try:
            return json.loads(folder.joinpath(*parts).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def _names(self) -> Dict[str, str]:
        if self._index is None:
            index = self._read("providers", f"{self.region}.json") or self._read("providers", f"{INDEX_REGION}.json")
            self._index = index if isinstance(index, dict) else {}
        return self._index

    def type_names(self) -> List[str]:
        """Every AWS type the data has a schema for, sorted."""
        return sorted(self._names())

    def knows(self, type_name: str) -> bool:
        """Whether the service has the type, as far as the data says (without the data, every type is taken as known)."""
        names = self._names()
        return not names or type_name in names

    def document(self, type_name: str) -> Optional[Dict[str, Any]]:
        """The type's schema document; None for a type the data does not know."""
        if type_name not in self._documents:
            name = self._names().get(type_name)
            document = self._read("resources", f"{name}.json") if isinstance(name, str) else None
            self._documents[type_name] = document if isinstance(document, dict) else None
        return self._documents[type_name]


@lru_cache(maxsize=None)
def _data_folder() -> Optional[Path]:
    """cfn-lint's schema folder, or None without cfn-lint."""
    try:
        spec = find_spec(LINT_PACKAGE)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]).joinpath(*DATA_FOLDER) if locations else None
