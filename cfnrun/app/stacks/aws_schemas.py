"""The resource schemas of AWS::* types, as cfn-lint ships them.

cfn-lint carries the registry schema of every AWS type (``cfnlint/data/schemas``: an index per
region naming a schema file per type). Local stacks read two facts from them: which properties
are createOnly (a change replaces the resource, as in a change set's ``Replacement``) and which
are writeOnly (never shown in events). Only the JSON files are read; cfn-lint itself is not
imported for this. A type the data does not know is treated as the service treats the unknown:
a change may replace it (Conditional), nothing is masked.
"""
from __future__ import annotations

import json
from importlib import resources
from typing import Any, Dict, Optional

from cfnrun.model.schema import ResourceSchema
from cfnrun.stacks.provisioning import Replacement

DATA_PACKAGE = "cfnlint.data.schemas"
INDEX_REGION = "us-east-1"  # the region whose index lists the most types


class AwsSchemas:
    def __init__(self, region: str) -> None:
        self.region = region
        self._index: Optional[Dict[str, str]] = None
        self._schemas: Dict[str, Optional[ResourceSchema]] = {}

    def _read(self, *parts: str) -> Optional[Any]:
        try:
            folder = resources.files(DATA_PACKAGE)
            for part in parts:
                folder = folder.joinpath(part)
            return json.loads(folder.read_text(encoding="utf-8"))
        except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError, ValueError):
            return None

    def schema(self, type_name: str) -> Optional[ResourceSchema]:
        if type_name not in self._schemas:
            if self._index is None:
                index = self._read("providers", f"{self.region}.json") or self._read("providers", f"{INDEX_REGION}.json")
                self._index = index if isinstance(index, dict) else {}
            name = self._index.get(type_name)
            document = self._read("resources", f"{name}.json") if isinstance(name, str) else None
            self._schemas[type_name] = ResourceSchema(document) if isinstance(document, dict) else None
        return self._schemas[type_name]

    def replacement(self, type_name: str, property_path: str) -> Replacement:
        schema = self.schema(type_name)
        if schema is None:
            return Replacement.CONDITIONALLY
        pointer = f"/properties/{property_path}"
        if any(p == pointer or p.startswith(pointer + "/") for p in schema.create_only_properties):
            return Replacement.ALWAYS
        return Replacement.NEVER

    def mask_write_only(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        schema = self.schema(type_name)
        return (schema.mask_write_only(properties) or {}) if schema is not None else properties
