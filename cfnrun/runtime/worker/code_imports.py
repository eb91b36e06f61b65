"""The provider's modules are imported from their source as it is on disk, never from stale bytecode.

Python reuses a cached ``.pyc`` while the source keeps its size and its modification time in
whole seconds. Two saves within one second that keep the size (``1`` made ``2``) would then
reload as the old code. For files in the code folder, ``SourceHashedLoader`` reuses cached
bytecode only when it was compiled from the same bytes: it writes PEP 552 checked-hash pycs
(which Python's own loader validates by hash too) and compares the source's hash before use.

Runs in the worker, in the provider's interpreter (``host.py`` installs it): standard library only.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import marshal
import os
import sys
from typing import Any, Callable, List, Optional

_CHECKED_HASH_FLAGS = (0b11).to_bytes(4, "little")  # hash-based, check the source
_HEADER = len(importlib.util.MAGIC_NUMBER) + len(_CHECKED_HASH_FLAGS) + 8


def _cache_path(source_path: str) -> Optional[str]:
    try:
        return importlib.util.cache_from_source(source_path)
    except (NotImplementedError, ValueError):  # no cache tag in this interpreter, or not a .py path
        return None


def _cached_code(cache_path: str, digest: bytes) -> Any:
    """The code object in ``cache_path`` if it was compiled from source with hash ``digest``; else None."""
    try:
        with open(cache_path, "rb") as cached:
            data = cached.read()
    except OSError:
        return None
    if data[:_HEADER] != importlib.util.MAGIC_NUMBER + _CHECKED_HASH_FLAGS + digest:
        return None
    try:
        return marshal.loads(memoryview(data)[_HEADER:])
    except (EOFError, ValueError, TypeError):
        return None


def _write_atomically(path: str, data: bytes) -> None:
    """Write ``path`` whole or not at all: workers importing at once never read half a file."""
    partial = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(partial, "wb") as out:
            out.write(data)
        os.replace(partial, path)
    except OSError:  # a read-only tree: the next import compiles again
        try:
            os.unlink(partial)
        except OSError:
            pass


class SourceHashedLoader(importlib.machinery.SourceFileLoader):
    """A source file's loader that trusts cached bytecode only when it matches the source's bytes."""

    def get_code(self, fullname: str) -> Any:
        source_path = self.get_filename(fullname)
        source = self.get_data(source_path)
        digest = importlib.util.source_hash(source)
        cache_path = _cache_path(source_path)
        code = _cached_code(cache_path, digest) if cache_path else None
        if code is None:
            code = self.source_to_code(source, source_path)
            if cache_path and not sys.dont_write_bytecode:
                _write_atomically(cache_path, importlib.util.MAGIC_NUMBER + _CHECKED_HASH_FLAGS + digest + marshal.dumps(code))
        return code


class CodeFolderImports:
    """While installed, modules under ``code_dir`` (packages included) load through ``SourceHashedLoader``."""

    def __init__(self, code_dir: str) -> None:
        self.code_dir = os.path.abspath(code_dir)
        loaders: List[Any] = [
            (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES),
            (SourceHashedLoader, importlib.machinery.SOURCE_SUFFIXES),
            (importlib.machinery.SourcelessFileLoader, importlib.machinery.BYTECODE_SUFFIXES),
        ]
        self._finder_for: Callable[[str], Any] = importlib.machinery.FileFinder.path_hook(*loaders)

    def _inside(self, path: str) -> bool:
        full = os.path.abspath(path or ".")
        return full == self.code_dir or full.startswith(self.code_dir + os.sep)

    def _hook(self, path: str) -> Any:
        if not self._inside(path):
            raise ImportError("not in the code folder")  # the next path hook answers for it
        return self._finder_for(path)

    def install(self) -> None:
        if self._hook not in sys.path_hooks:
            sys.path_hooks.insert(0, self._hook)
        self._forget_finders()

    def uninstall(self) -> None:
        if self._hook in sys.path_hooks:
            sys.path_hooks.remove(self._hook)
        self._forget_finders()

    def _forget_finders(self) -> None:
        """Drop the finders already made for the code folder (a zygote's imports made some): the next import asks the hooks."""
        for path in [p for p in sys.path_importer_cache if self._inside(p)]:
            del sys.path_importer_cache[path]
