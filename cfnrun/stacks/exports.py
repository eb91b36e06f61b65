"""Outputs exported across local stacks (ListExports), and who imports them (ListImports)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Set


@dataclass(frozen=True)
class Export:
    name: str
    value: str
    stack_id: str
    stack_name: str


class ExportConflict(Exception):
    """An export name another stack already exports, or an export still imported."""


class Exports:
    def __init__(self) -> None:
        self._exports: Dict[str, Export] = {}
        self._importers: Dict[str, Set[str]] = {}  # export name → the names of the stacks importing it

    def value(self, name: str) -> Optional[str]:
        export = self._exports.get(name)
        return export.value if export is not None else None

    def all(self) -> List[Export]:
        return sorted(self._exports.values(), key=lambda e: e.name)

    def importers(self, name: str) -> List[str]:
        return sorted(self._importers.get(name, ()))

    def check_publish(self, stack_id: str, exports: Dict[str, str]) -> None:
        """Raise ExportConflict if another stack exports one of these names, or a removed one is still imported."""
        for name in exports:
            owner = self._exports.get(name)
            if owner is not None and owner.stack_id != stack_id:
                raise ExportConflict(f"Export with name {name} is already exported by stack {owner.stack_name}")
        for export in self._exports.values():
            if export.stack_id == stack_id and export.name not in exports:
                self.check_unused(export.name)
            elif export.stack_id == stack_id and exports.get(export.name) != export.value and self._importers.get(export.name):
                raise ExportConflict(
                    f"Cannot update export {export.name} as it is in use by {', '.join(self.importers(export.name))}"
                )

    def check_unused(self, name: str) -> None:
        users = self.importers(name)
        if users:
            raise ExportConflict(f"Export {name} cannot be deleted as it is in use by {', '.join(users)}")

    def publish(self, stack_id: str, stack_name: str, exports: Dict[str, str]) -> None:
        """The stack's exports are now exactly ``exports`` (checked with check_publish first)."""
        for name in [n for n, e in self._exports.items() if e.stack_id == stack_id and n not in exports]:
            del self._exports[name]
        for name, value in exports.items():
            self._exports[name] = Export(name, value, stack_id, stack_name)

    def set_imports(self, stack_name: str, names: Iterable[str]) -> None:
        """The exports stack ``stack_name`` imports now (empty once it is deleted)."""
        wanted = set(names)
        for name, importers in list(self._importers.items()):
            if name not in wanted:
                importers.discard(stack_name)
                if not importers:
                    del self._importers[name]
        for name in wanted:
            self._importers.setdefault(name, set()).add(stack_name)
